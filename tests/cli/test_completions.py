"""Shell completion scripts: in step with the app, valid in each shell, completing options, nested
groups and budget files, shipped in the wheel and installed by `dpcalc completions install`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Annotated

import click
import pytest

from dpcalc.cli import completions
from dpcalc.cli.app import COMMANDS
from dpcalc.cli.completions import scripts
from dpcalc.cli.declare import App, Option
from dpcalc.cli.mechanism import MECHANISMS

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "completions"  # the scripts' source, checked in
DIRECTORY = ROOT / "dpcalc" / "completions"  # what the package ships: the same files


def test_completion_files_are_up_to_date():
    stale = [
        name for name, text in scripts.scripts().items()
        if not (SOURCE / name).exists() or (SOURCE / name).read_text() != text
    ]
    assert not stale, f"{stale} out of date: run `python -m dpcalc.cli.completions`"


def test_the_generator_writes_the_source_folder():
    assert scripts.SOURCE == SOURCE


def test_the_package_ships_the_source_scripts():
    assert {path.name: path.read_bytes() for path in DIRECTORY.iterdir()} == {
        path.name: path.read_bytes() for path in SOURCE.iterdir()}


def test_check_mode_reports_stale_files(tmp_path, capsys):
    assert scripts.main(["--check", str(tmp_path)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert scripts.main([str(tmp_path)]) == 0
    assert scripts.main(["--check", str(tmp_path)]) == 0


def test_the_scripts_are_in_the_package():
    assert completions.DIRECTORY == DIRECTORY
    assert sorted(path.name for path in DIRECTORY.iterdir()) == sorted(completions.FILES.values())


def test_every_command_and_its_options_are_in_every_script():
    commands = scripts.command_tree().subcommands
    assert [command.name for command in commands] == list(COMMANDS)
    texts = scripts.scripts()
    for command in commands:
        for text in texts.values():
            assert command.name in text
            for option in command.options:
                long_name = option.names[0]
                assert long_name in text or f"-l {long_name[2:]}" in text


def _bash_complete(*words: str, directory: Path = DIRECTORY, cwd: Path | None = None) -> list[str]:
    script = (
        f"source {directory / 'dpcalc.bash'}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
        f"COMP_CWORD={len(words) - 1}; _dpcalc; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True, cwd=cwd)
    return result.stdout.split()


def _fish_complete(line: str, directory: Path = DIRECTORY, cwd: Path | None = None) -> list[str]:
    result = subprocess.run(
        ["fish", "-c", f"source {directory / 'dpcalc.fish'}; complete -C '{line}'"],
        capture_output=True, text=True, check=True, cwd=cwd,
    )
    return [line.split("\t")[0] for line in result.stdout.splitlines()]


def _zsh_complete(line: str, directory: Path = DIRECTORY, cwd: Path | None = None) -> list[str]:
    """The candidates an interactive zsh lists for `line` + TAB (on a pseudo-terminal, compinit
    with `directory` on $fpath). `line` must have several candidates: a single one completes
    in place, and nothing is listed."""
    import os
    import pty
    import re
    import select
    import time

    leader, follower = pty.openpty()
    shell = subprocess.Popen(["zsh", "-f", "-i"], stdin=follower, stdout=follower, stderr=follower, cwd=cwd,
                             env={"HOME": str(cwd or directory), "PATH": "/usr/bin:/bin", "TERM": "dumb", "PS1": "%% "},
                             start_new_session=True)
    os.close(follower)
    output = b""

    def read_until(marker: bytes) -> None:
        nonlocal output
        deadline = time.monotonic() + 20
        while marker not in output and time.monotonic() < deadline:
            if select.select([leader], [], [], 0.1)[0]:
                try:
                    output += os.read(leader, 65536)
                except OSError:  # the shell is gone
                    return

    try:
        os.write(leader, f"fpath=({directory} $fpath); autoload -U compinit; compinit -u -D; "
                         "zstyle ':completion:*' list-separator '|'; print READY\n".encode())
        read_until(b"READY\r\n")
        output = b""
        os.write(leader, (line + "\t").encode())
        read_until(b"\n% " + line.encode())  # the list, then the prompt and the line again
    finally:
        shell.kill()
        shell.wait()
        os.close(leader)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x07", "", output.decode(errors="replace").replace("\r", ""))
    listing = text.rsplit("\n% " + line, 1)[0].rsplit(line, 1)[-1]
    # rows of names, or one name a row followed by "| its description"
    return sorted(word for row in listing.split("\n")[1:] for word in row.split("|")[0].split())


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_options_and_choices():
    assert "gdp" in _bash_complete("dpcalc", "g")
    # --sampling, and the peers' names of --p (--sample-rate as Opacus, --sampling-probability as dp_accounting)
    assert sorted(_bash_complete("dpcalc", "gdp", "--samp")) == ["--sample-rate", "--sampling", "--sampling-probability"]
    assert _bash_complete("dpcalc", "gdp", "--sampling", "") == ["poisson", "uniform"]
    assert "--version" in _bash_complete("dpcalc", "--v")


@pytest.mark.parametrize("shell, name", [("zsh", "_dpcalc"), ("fish", "dpcalc.fish"), ("bash", "dpcalc.bash")])
def test_scripts_parse_in_their_shell(shell, name):
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")
    subprocess.run([shell, "-n", str(DIRECTORY / name)], check=True)


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_choices():
    result = subprocess.run(
        ["fish", "-c", f"source {DIRECTORY / 'dpcalc.fish'}; complete -C 'dpcalc gdp --sampling '"],
        capture_output=True, text=True, check=True,
    )
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == ["poisson", "uniform"]


def test_install_completion_option_is_still_offered(dpcalc):
    assert "--install-completion" in dpcalc("--help").stdout


def test_descriptions_end_at_the_first_sentence_outside_parentheses():
    assert scripts._first_sentence("Write a figure to FILE (.png or .svg; needs x). More.") == (
        "Write a figure to FILE (.png or .svg; needs x)"
    )
    assert scripts._first_sentence("Sampling rate; in (0, 1]. Details") == "Sampling rate"
    assert scripts._first_sentence(None) == ""


def test_help_and_unknown_options_write_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for args, code in ((["--help"], 0), (["--bogus"], 2)):
        with pytest.raises(SystemExit) as exit_info:
            scripts.main(args)
        assert exit_info.value.code == code
    assert list(tmp_path.iterdir()) == []
    assert "--check" in capsys.readouterr().out


needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
needs_fish = pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")


@pytest.fixture
def budget_folder(tmp_path):
    """A folder with a budget file, another file and a subfolder, to complete `dpcalc check` in."""
    (tmp_path / "privacy.toml").write_text("")
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "runs").mkdir()
    return tmp_path


@needs_bash
def test_bash_completes_budget_files_and_folders_for_check(budget_folder):
    assert sorted(_bash_complete("dpcalc", "check", "", cwd=budget_folder)) == ["privacy.toml", "runs"]


@needs_fish
def test_fish_completes_budget_files_and_folders_for_check(budget_folder):
    assert _fish_complete("dpcalc check ", cwd=budget_folder) == ["privacy.toml", "runs/"]


needs_zsh = pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")


@needs_zsh
def test_zsh_completes_budget_files_and_folders_for_check(budget_folder):
    assert _zsh_complete("dpcalc check ", cwd=budget_folder) == ["privacy.toml", "runs/"]


@needs_zsh
def test_zsh_completes_commands_and_choices():
    assert _zsh_complete("dpcalc c") == ["calibrate", "check", "completions", "convert"]
    assert _zsh_complete("dpcalc gdp --sampling ") == ["poisson", "uniform"]
    assert _zsh_complete("dpcalc completions install ") == ["bash", "fish", "zsh"]


@needs_bash
def test_bash_completes_the_completions_command():
    assert _bash_complete("dpcalc", "completions", "") == ["install", "show"]
    assert _bash_complete("dpcalc", "completions", "install", "") == ["bash", "zsh", "fish"]
    assert _bash_complete("dpcalc", "completions", "install", "--f") == ["--force"]


@pytest.fixture
def toy_mechanism(monkeypatch):
    """`dpcalc mechanism toy`: a subcommand put into the mechanism group's table for the test."""
    from dpcalc.cli.mechanism import MECHANISMS

    module = types.ModuleType("toy_mechanism_for_tests")
    module.app = App()

    @module.app.command("toy")
    def toy(
        eps: Annotated[float, Option("--eps", help="Privacy. More text.")] = 1.0,
        kind: Annotated[str, Option("--kind", click_type=click.Choice(["exact", "rounded"]))] = "exact",
        out: Annotated[str | None, Option("--plot", metavar="FILE", help="A figure.")] = None,
    ) -> None:
        """A toy mechanism."""

    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(MECHANISMS, "toy", (module.__name__, "A toy mechanism, for the tests."))
    monkeypatch.setitem(MECHANISMS, "dummy", (module.__name__, "The same toy under another name."))


def test_nested_groups_are_generated(toy_mechanism, tmp_path):
    mechanism = next(c for c in scripts.command_tree().subcommands if c.name == "mechanism")
    assert mechanism.is_group
    toys = [c for c in mechanism.subcommands if c.name in ("toy", "dummy")]
    assert [(c.name, c.help) for c in toys] == [
        ("toy", "A toy mechanism, for the tests"), ("dummy", "The same toy under another name")]
    assert [o.names for o in toys[0].options] == [("--eps",), ("--kind",), ("--plot",), ("-h", "--help")]
    assert scripts.main([str(tmp_path)]) == 0
    assert "_dpcalc_mechanism() {" in (tmp_path / "_dpcalc").read_text()
    assert "'--kind[]:kind:(exact rounded)'" in (tmp_path / "_dpcalc").read_text()
    if shutil.which("bash"):
        assert sorted(_bash_complete("dpcalc", "mechanism", "", directory=tmp_path)) == sorted(MECHANISMS)
        assert _bash_complete("dpcalc", "mechanism", "-", directory=tmp_path) == ["-h", "--help"]
        assert _bash_complete("dpcalc", "mechanism", "toy", "-", directory=tmp_path) == [
            "--eps", "--kind", "--plot", "-h", "--help"]
        assert _bash_complete("dpcalc", "mechanism", "toy", "--kind", "", directory=tmp_path) == ["exact", "rounded"]
        # `toy` is a subcommand only under `mechanism`
        assert _bash_complete("dpcalc", "gdp", "toy", "--k", directory=tmp_path) == []
    if shutil.which("fish"):
        assert sorted(_fish_complete("dpcalc mechanism ", directory=tmp_path)) == sorted(MECHANISMS)
        assert _fish_complete("dpcalc mechanism toy --kind ", directory=tmp_path) == ["exact", "rounded"]
        assert "--eps" in _fish_complete("dpcalc mechanism toy --", directory=tmp_path)
    if shutil.which("zsh"):
        assert sorted(_zsh_complete("dpcalc mechanism ", directory=tmp_path)) == sorted(MECHANISMS)
        assert _zsh_complete("dpcalc mechanism dummy --kind ", directory=tmp_path) == ["exact", "rounded"]
    for shell, name in (("bash", "dpcalc.bash"), ("zsh", "_dpcalc"), ("fish", "dpcalc.fish")):
        if shutil.which(shell):
            subprocess.run([shell, "-n", str(tmp_path / name)], check=True)


# `dpcalc completions install` and `show`

@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return tmp_path


@pytest.mark.parametrize("shell, path, hint", [
    ("bash", ".local/share/bash-completion/completions/dpcalc", "New bash shells complete dpcalc"),
    ("zsh", ".zfunc/_dpcalc", "to ~/.zshrc, before compinit:\n  fpath=(~/.zfunc $fpath)\n"),
    ("fish", ".config/fish/completions/dpcalc.fish", "New fish shells complete dpcalc"),
])
def test_install_copies_the_script_where_the_shell_looks(dpcalc, home, monkeypatch, shell, path, hint):
    monkeypatch.setenv("SHELL", f"/usr/bin/{shell}")
    run = dpcalc("completions", "install")  # the shell from $SHELL
    assert run.code == 0 and run.stderr == ""
    assert run.stdout.startswith(f"Installed the {shell} completion: ~/{path}\n")
    assert hint in run.stdout
    assert (home / path).read_text() == (DIRECTORY / completions.FILES[shell]).read_text()
    again = dpcalc("completions", "install", shell)
    assert again.code == 0 and again.stdout.startswith(f"Up to date: ~/{path}\n")


BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")
# How each shell, started afresh with HOME at the test's folder, is asked what it completes after
# `dpcalc completions `: bash through bash-completion's loader, zsh through compinit and $fpath,
# fish through its own per-user folder.
_FRESH_SHELL = {
    "bash": ["bash", "-c", f"source {BASH_COMPLETION}; __load_completion dpcalc; "
             'COMP_WORDS=(dpcalc completions ""); COMP_CWORD=2; _dpcalc; printf "%s\\n" "${COMPREPLY[@]}"'],
    "zsh": ["zsh", "-f", "-c", "fpath=(~/.zfunc $fpath); autoload -U compinit; compinit -u -d ~/zcompdump; "
            "print -r -- $_comps[dpcalc]"],
    "fish": ["fish", "-c", "complete -C 'dpcalc completions '"],
}


@pytest.mark.parametrize("shell, expected", [("bash", ["install", "show"]), ("zsh", ["_dpcalc"]),
                                             ("fish", ["install", "show"])])
def test_a_new_shell_finds_the_installed_script(dpcalc, home, shell, expected):
    if shutil.which(shell) is None or (shell == "bash" and not BASH_COMPLETION.exists()):
        pytest.skip(f"{shell} (and for bash, bash-completion) is not installed")
    assert dpcalc("completions", "install", shell).code == 0
    stub = home / "bin" / "dpcalc"  # fish loads a command's completions once the command is on PATH
    stub.parent.mkdir()
    stub.write_text("#!/bin/sh\n")
    stub.chmod(0o755)
    result = subprocess.run(_FRESH_SHELL[shell], capture_output=True, text=True, check=True, cwd=home,
                            env={"HOME": str(home), "PATH": f"{stub.parent}:/usr/bin:/bin"})
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == expected


def test_install_follows_xdg_directories(dpcalc, home, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    assert dpcalc("completions", "install", "bash").code == 0
    assert dpcalc("completions", "install", "fish").code == 0
    assert (home / "data/bash-completion/completions/dpcalc").exists()
    assert (home / "config/fish/completions/dpcalc.fish").exists()


def test_install_updates_its_own_file_and_keeps_anyone_elses(dpcalc, home):
    target = home / ".zfunc" / "_dpcalc"
    target.parent.mkdir()
    target.write_text(f"#compdef dpcalc\n# {completions.HEADER}\n# an older version\n")
    run = dpcalc("completions", "install", "zsh")
    assert run.code == 0 and run.stdout.startswith("Updated the zsh completion: ~/.zfunc/_dpcalc\n")
    target.write_text("#compdef dpcalc\n# my own\n")
    run = dpcalc("completions", "install", "zsh")
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == (
        "Error: --force: ~/.zfunc/_dpcalc exists and was not written by dpcalc; kept (give --force to replace it)\n"
    )
    assert target.read_text() == "#compdef dpcalc\n# my own\n"
    run = dpcalc("completions", "install", "zsh", "--force")
    assert run.code == 0 and run.stdout.startswith("Replaced the zsh completion: ~/.zfunc/_dpcalc\n")
    assert target.read_text() == (DIRECTORY / "_dpcalc").read_text()


def test_install_needs_a_known_shell(dpcalc, home, monkeypatch):
    monkeypatch.setenv("SHELL", "/bin/tcsh")
    run = dpcalc("completions", "install")
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == "Error: SHELL: give one of bash, zsh, fish ($SHELL is /bin/tcsh, not one of them)\n"
    monkeypatch.delenv("SHELL")
    assert dpcalc("completions", "show").stderr == (
        "Error: SHELL: give one of bash, zsh, fish ($SHELL is not set, not one of them)\n"
    )
    run = dpcalc("completions", "install", "tcsh")
    assert run.code == 2
    assert run.stderr == "Error: Invalid value for '[SHELL]': 'tcsh' is not one of 'bash', 'zsh', 'fish'.\n"
    assert list(home.iterdir()) == []


def test_install_refuses_a_directory_in_the_way(dpcalc, home):
    (home / ".zfunc" / "_dpcalc").mkdir(parents=True)
    run = dpcalc("completions", "install", "zsh")
    assert run.code == 2
    assert run.stderr == "Error: SHELL: ~/.zfunc/_dpcalc is a directory; remove it to install the zsh completion\n"


def test_install_says_why_it_cannot_write(dpcalc, home):
    (home / ".zfunc").write_text("")  # a file where the folder should be
    run = dpcalc("completions", "install", "zsh")
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == "Error: SHELL: cannot install the zsh completion at ~/.zfunc/_dpcalc: File exists\n"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_show_prints_the_script(dpcalc, shell):
    run = dpcalc("completions", "show", shell)
    assert (run.code, run.stderr) == (0, "")
    assert run.stdout == (DIRECTORY / completions.FILES[shell]).read_text()


def test_completions_alone_prints_its_help(dpcalc):
    run = dpcalc("completions")
    assert run.code == 0 and "install" in run.stdout and "show" in run.stdout


@pytest.mark.slow
def test_the_wheel_ships_the_scripts(tmp_path):
    """Build the wheel from this checkout and look inside (needs the package index, for setuptools>=77)."""
    import zipfile

    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                    "-w", str(tmp_path), str(root)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert sorted(n for n in names if n.startswith("dpcalc/completions/")) == sorted(
        f"dpcalc/completions/{name}" for name in completions.FILES.values())


# `dpcalc completions install` in a real process, HOME at a temporary folder: what is already at
# (or beside) the target is never written through.

def _install(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home)}
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "dpcalc", "completions", "install", *args], capture_output=True,
                          text=True, env=env, timeout=60)


def test_install_never_writes_through_a_link_planted_beside_the_target(tmp_path):
    bashrc = tmp_path / ".bashrc"
    bashrc.write_text("# my bashrc\n")
    (tmp_path / ".zfunc").mkdir()
    planted = tmp_path / ".zfunc" / "_dpcalc.partial"
    planted.symlink_to(bashrc)
    run = _install(tmp_path, "zsh")
    assert (run.returncode, run.stderr) == (0, "")
    assert bashrc.read_text() == "# my bashrc\n"
    assert planted.is_symlink() and os.readlink(planted) == str(bashrc)
    target = tmp_path / ".zfunc" / "_dpcalc"
    assert not target.is_symlink() and target.read_text() == (DIRECTORY / "_dpcalc").read_text()
    assert sorted(p.name for p in target.parent.iterdir()) == ["_dpcalc", "_dpcalc.partial"]  # nothing left over


def test_install_updates_the_file_a_linked_target_points_to(tmp_path):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "_dpcalc"
    real.write_text(f"#compdef dpcalc\n# {completions.HEADER}\n# an older version\n")
    real.chmod(0o640)
    (tmp_path / ".zfunc").mkdir()
    link = tmp_path / ".zfunc" / "_dpcalc"
    link.symlink_to(real)
    run = _install(tmp_path, "zsh")
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.startswith("Updated the zsh completion: ~/.zfunc/_dpcalc (a link to ~/dotfiles/_dpcalc)\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == (DIRECTORY / "_dpcalc").read_text()
    assert real.stat().st_mode & 0o777 == 0o640  # the file's permissions are kept
    assert sorted(p.name for p in dotfiles.iterdir()) == ["_dpcalc"]


def test_install_keeps_a_file_it_did_not_write_behind_a_link(tmp_path):
    bashrc = tmp_path / ".bashrc"
    bashrc.write_text("# my bashrc\n")
    (tmp_path / ".zfunc").mkdir()
    (tmp_path / ".zfunc" / "_dpcalc").symlink_to(bashrc)
    run = _install(tmp_path, "zsh")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == ("Error: --force: ~/.zfunc/_dpcalc (a link to ~/.bashrc) exists and was not written by "
                          "dpcalc; kept (give --force to replace it)\n")
    assert bashrc.read_text() == "# my bashrc\n"


def test_install_refuses_what_is_not_a_regular_file(tmp_path):
    (tmp_path / ".zfunc").mkdir()
    os.mkfifo(tmp_path / ".zfunc" / "_dpcalc")  # reading it would wait for a writer
    run = _install(tmp_path, "zsh", "--force")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == "Error: SHELL: cannot install the zsh completion at ~/.zfunc/_dpcalc: not a regular file\n"


def test_install_creates_a_new_file_under_the_umask(tmp_path):
    run = subprocess.run(["sh", "-c", f"umask 027; exec {sys.executable} -m dpcalc completions install fish"],
                         capture_output=True, text=True, env={**os.environ, "HOME": str(tmp_path),
                                                              "XDG_CONFIG_HOME": str(tmp_path / ".config")})
    assert run.returncode == 0
    assert (tmp_path / ".config/fish/completions/dpcalc.fish").stat().st_mode & 0o777 == 0o640
