"""Shell completion scripts: in step with the app, valid in each shell, and completing options."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from dpcalc.cli import completions
from dpcalc.cli.app import COMMANDS

DIRECTORY = Path(__file__).resolve().parents[2] / "completions"


def test_completion_files_are_up_to_date():
    stale = [
        name for name, text in completions.scripts().items()
        if not (DIRECTORY / name).exists() or (DIRECTORY / name).read_text() != text
    ]
    assert not stale, f"{stale} out of date: run `python -m dpcalc.cli.completions`"


def test_check_mode_reports_stale_files(tmp_path, capsys):
    assert completions.main(["--check", str(tmp_path)]) == 1
    assert "out of date" in capsys.readouterr().err
    assert completions.main([str(tmp_path)]) == 0
    assert completions.main(["--check", str(tmp_path)]) == 0


def test_every_command_and_its_options_are_in_every_script():
    _root, commands = completions.command_tree()
    assert [command.name for command in commands] == list(COMMANDS)
    texts = completions.scripts()
    for command in commands:
        for text in texts.values():
            assert command.name in text
            for option in command.options:
                long_name = option.names[0]
                assert long_name in text or f"-l {long_name[2:]}" in text


def _bash_complete(*words: str) -> list[str]:
    script = (
        f"source {DIRECTORY / 'dpcalc.bash'}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
        f"COMP_CWORD={len(words) - 1}; _dpcalc; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    )
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    return result.stdout.split()


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
    assert completions._first_sentence("Write a figure to FILE (.png or .svg; needs x). More.") == (
        "Write a figure to FILE (.png or .svg; needs x)"
    )
    assert completions._first_sentence("Sampling rate; in (0, 1]. Details") == "Sampling rate"
    assert completions._first_sentence(None) == ""


def test_help_and_unknown_options_write_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for args, code in ((["--help"], 0), (["--bogus"], 2)):
        with pytest.raises(SystemExit) as exit_info:
            completions.main(args)
        assert exit_info.value.code == code
    assert list(tmp_path.iterdir()) == []
    assert "--check" in capsys.readouterr().out
