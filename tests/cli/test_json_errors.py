"""With --json a refusal still prints one strict JSON object on stdout (docs/json.md, "Errors"),
besides its one line on stderr, exit 2: {"command", "version", "error": {"option", "options",
"message", "allowed", "got", "choices"}}, the fields taken from where the error was raised."""

from __future__ import annotations

import pytest

from dpcalc import __version__

RUN = ["--p", "0.004", "--sigma", "1.1", "--T", "100"]
ERROR_KEYS = {"option", "options", "message", "allowed", "got", "choices"}


def refused(dpcalc, *args):
    run = dpcalc(*args)
    assert run.code == 2, (run.code, run.stderr)
    assert run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1
    document = run.json()  # strict: no NaN or Infinity literals
    assert set(document) == {"command", "version", "error"} and document["version"] == __version__
    assert set(document["error"]) == ERROR_KEYS
    assert document["error"]["message"] == run.stderr[len("Error: "):-1]
    return document


def test_a_value_out_of_range_names_the_option_the_range_and_the_value(dpcalc):
    document = refused(dpcalc, "gdp", "--p", "2", "--sigma", "1.1", "--T", "100", "--json")
    assert document["command"] == "gdp"
    assert document["error"] == {
        "option": "--p", "options": ["--p"], "message": "--p must be in [0, 1], got 2",
        "allowed": "in [0, 1]", "got": "2", "choices": None,
    }


def test_a_value_that_is_not_a_number(dpcalc):
    error = refused(dpcalc, "pld", "--p", "0.004", "--sigma", "abc", "--T", "100", "--json")["error"]
    assert (error["option"], error["allowed"], error["got"]) == ("--sigma", "a number in (0, inf)", "abc")


def test_a_bad_item_of_a_list_names_the_option_itself(dpcalc):
    error = refused(dpcalc, "rdp", *RUN, "--orders", "2,-1", "--json")["error"]
    assert error["option"] == "--orders" and error["got"] is not None


def test_a_conflict_names_both_options_the_first_as_option(dpcalc):
    error = refused(dpcalc, "pld", *RUN, "--delta", "1e-5", "--eps", "1", "--json")["error"]
    assert (error["option"], error["options"]) == ("--delta", ["--delta", "--eps"])
    assert error["allowed"] is None and error["got"] is None


def test_a_core_refusal_of_a_run_names_its_options(dpcalc):
    error = refused(dpcalc, "gdp", "--p", "0.01", "--n", "100", "--sigma", "1", "--T", "10", "--json")["error"]
    assert error["option"] == "--p" and error["options"] == ["--p", "--n", "--batch-size"]


def test_a_missing_option(dpcalc):
    error = refused(dpcalc, "gdp", "--p", "0.01", "--T", "10", "--json")["error"]
    assert error["option"] == "--sigma" and "required" in error["message"]


def test_click_usage_errors_choice_unknown_option_and_missing_value(dpcalc):
    choice = refused(dpcalc, "pld", *RUN, "--sampling", "foo", "--json")["error"]
    assert choice["option"] == "--sampling" and choice["got"] == "foo"
    assert choice["choices"] == ["poisson", "uniform", "shuffle", "allocation"]
    assert choice["allowed"] == "one of poisson, uniform, shuffle, allocation"
    unknown = refused(dpcalc, "gdp", *RUN, "--bogus", "--json")["error"]
    assert unknown["option"] == "--bogus" and unknown["allowed"] is None
    missing = refused(dpcalc, "rdp", *RUN, "--json", "--conversion")["error"]
    assert missing["option"] == "--conversion"
    repeated = refused(dpcalc, "gdp", *RUN, "--json", "--max-eps", "1", "--max-eps", "2")["error"]
    assert repeated["option"] == "--max-eps"


def test_a_subcommand_of_a_group_is_named_whole(dpcalc):
    document = refused(dpcalc, "mechanism", "gaussian", "--eps", "-1", "--json")
    assert document["command"] == "mechanism gaussian"


def test_check_file_errors(dpcalc, tmp_path):
    missing = tmp_path / "absent.toml"
    error = refused(dpcalc, "check", missing, "--json")["error"]
    assert (error["option"], error["got"]) == ("BUDGET", str(missing))
    malformed = tmp_path / "bad.toml"
    malformed.write_text("[budget\n")
    assert "TOML" in refused(dpcalc, "check", malformed, "--json")["error"]["message"]


def test_without_json_stdout_stays_empty(dpcalc):
    run = dpcalc("gdp", "--p", "2", "--sigma", "1.1", "--T", "100")
    assert (run.code, run.stdout) == (2, "")


@pytest.mark.parametrize("args", [
    ["gdp", *RUN, "--", "--json"],  # after "--": not an option
    ["foo", "--json"],  # no such command
    ["completions", "show", "tcsh", "--json"],  # a command without --json
])
def test_no_json_where_json_was_not_asked_of_a_command_that_takes_it(dpcalc, args):
    run = dpcalc(*args)
    assert run.code == 2 and run.stdout == ""


def test_an_internal_error_is_json_too(dpcalc, monkeypatch):
    import dpcalc.cli.gdp as gdp

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(gdp, "_evaluate", broken)
    run = dpcalc("gdp", *RUN, "--no-tight", "--json")
    assert run.code == 70 and run.stderr.count("\n") == 1
    error = run.json()["error"]
    assert error["message"].startswith("internal error (ZeroDivisionError: boom)") and error["option"] is None


def test_choice_errors_are_one_line(dpcalc):
    """click's choice errors, like every other error, on one line (issue 38)."""
    for args in (["pld", "--sampling", "foo"], ["convert", "--from", "foo"], ["calibrate", "--accountant", "x"],
                 ["completions", "show", "tcsh"], ["rdp", *RUN, "--conversion", "nope"]):
        run = dpcalc(*args)
        assert run.code == 2 and run.stderr.count("\n") == 1 and run.stderr.startswith("Error: Invalid value for"), args
    run = dpcalc("pld", "--sampling", "foo")
    assert run.stderr == ("Error: Invalid value for '--sampling': 'foo' is not one of 'poisson', 'uniform', "
                          "'shuffle', 'allocation'.\n")


def test_an_internal_error_while_the_result_is_printed_adds_no_second_object(dpcalc, monkeypatch):
    import dpcalc.cli.output as output

    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(output, "_budget", broken)  # inside emit
    run = dpcalc("gdp", *RUN, "--no-tight", "--json")
    assert run.code == 70 and run.stdout == "" and "internal error" in run.stderr
