"""One completion mechanism: `dpcalc --show-completion` and `--install-completion` are
`dpcalc completions show` and `install` for the shell $SHELL names: the same script, the same
target, the same message and exit code."""

from __future__ import annotations

import pytest

SHELLS = {"bash": "/bin/bash", "zsh": "/usr/bin/zsh", "fish": "/usr/bin/fish"}


@pytest.fixture
def home(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _files(root):
    return {path.relative_to(root).as_posix(): path.read_text() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("shell", list(SHELLS))
def test_show_is_the_same_script(dpcalc, monkeypatch, shell):
    monkeypatch.setenv("SHELL", SHELLS[shell])
    flag, command, named = dpcalc("--show-completion"), dpcalc("completions", "show"), dpcalc("completions", "show", shell)
    assert flag.code == command.code == named.code == 0
    assert flag.stdout == command.stdout == named.stdout and flag.stdout.strip()


@pytest.mark.parametrize("shell", list(SHELLS))
def test_install_writes_the_same_file_at_the_same_target(dpcalc, monkeypatch, home, shell):
    monkeypatch.setenv("SHELL", SHELLS[shell])
    flag = dpcalc("--install-completion")
    installed_by_flag = _files(home)
    for path in list(home.rglob("*")):
        if path.is_file():
            path.unlink()
    command = dpcalc("completions", "install")
    assert flag.code == command.code == 0
    assert flag.stdout == command.stdout and flag.stdout.startswith("Installed the ")
    assert _files(home) == installed_by_flag and len(installed_by_flag) == 1
    assert next(iter(installed_by_flag.values())) == dpcalc("completions", "show", shell).stdout


def test_an_unknown_shell_is_the_same_error(dpcalc, monkeypatch, home):
    monkeypatch.setenv("SHELL", "/bin/tcsh")
    for args in (["--install-completion"], ["completions", "install"], ["--show-completion"], ["completions", "show"]):
        run = dpcalc(*args)
        assert (run.code, run.stderr) == (2, "Error: SHELL: give one of bash, zsh, fish ($SHELL is /bin/tcsh, not one "
                                             "of them)\n"), args
