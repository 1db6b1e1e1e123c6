"""`dpcalc mechanism ptr` on the command line: every option, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

RESULT_KEYS = {
    "epsilon", "total_epsilon", "delta", "bound", "threshold", "test_scale", "scale", "std", "error",
    "confidence", "failure_probability", "unstable_reply_probability", "distance", "no_reply_probability",
    "reply_probability", "target_reply_probability", "required_distance", "required_records", "solved_for",
    "source",
}
INPUT_KEYS = {"eps", "scale", "delta", "bound", "error", "confidence", "distance", "reply_probability", "max_eps"}
SEED = ("mechanism", "ptr", "--eps", "0.5", "--delta", "1e-6", "--bound", "2")


def test_table(dpcalc):
    run = dpcalc(*SEED, "--confidence", "0.95", "--distance", "40", "--reply-probability", "0.99")
    assert (run.code, run.stderr) == (0, "")
    # exact: T = 2 ln(1e6) = 27.631021, error = 4 ln 20 = 11.982929, total epsilon 2 * 0.5 = 1
    for text in ("27.631021", "11.982929", "total epsilon", "(2 eps, delta)-DP", "36 records"):
        assert text in run.stdout


def test_json(dpcalc):
    run = dpcalc(*SEED, "--confidence", "0.95", "--distance", "40", "--reply-probability", "0.99", "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    assert document["command"] == "mechanism ptr"
    assert set(document["inputs"]) == INPUT_KEYS and set(document["result"]) == RESULT_KEYS
    result = document["result"]
    assert result["total_epsilon"] == 1.0 and result["epsilon"] == 0.5
    assert result["threshold"] == pytest.approx(2 * math.log(1e6), rel=1e-15)
    assert result["error"] == pytest.approx(4 * math.log(20), rel=1e-15)
    assert result["failure_probability"] == 0.05  # exact from the decimal
    # exact: P(no reply) at d = 40 > T is e^(-0.5 (40 - T)) / 2
    assert result["no_reply_probability"] == pytest.approx(0.5 * math.exp(-0.5 * (40 - 2 * math.log(1e6))), rel=1e-12)
    # exact: d = T - ln(2 * 0.01) / 0.5
    assert result["required_distance"] == pytest.approx(2 * math.log(1e6) - 2 * math.log(0.02), rel=1e-14)
    assert result["required_records"] == 36 and result["target_reply_probability"] == 0.99
    assert result["solved_for"] == "error" and result["source"].startswith("Dwork and Roth 2014")


def test_epsilon_from_accuracy(dpcalc):
    run = dpcalc("mechanism", "ptr", "--error", "10", "--confidence", "0.95", "--bound", "2", "--delta", "1e-6", "--json")
    result = run.json()["result"]
    assert result["solved_for"] == "epsilon"
    assert result["epsilon"] == pytest.approx(2 * math.log(20) / 10, rel=1e-15)  # exact: b ln(1/q) / error


def test_confidence_from_scale_and_error(dpcalc):
    run = dpcalc("mechanism", "ptr", "--scale", "4", "--bound", "2", "--delta", "1e-6", "--error", "10", "--json")
    result = run.json()["result"]
    assert result["solved_for"] == "confidence" and result["epsilon"] == 0.5
    assert result["failure_probability"] == pytest.approx(math.exp(-2.5), rel=1e-15)


def test_eps_alone(dpcalc):
    result = dpcalc("mechanism", "ptr", "--eps", "1", "--delta", "1e-5", "--json").json()["result"]
    assert result["solved_for"] == "noise" and result["error"] is None and result["scale"] == 1.0


def test_max_eps_gates_the_total(dpcalc):
    assert dpcalc(*SEED, "--max-eps", "1").code == 0
    run = dpcalc(*SEED, "--max-eps", "0.9")
    assert run.code == 1 and "Budget exceeded: epsilon 1 " in run.stderr
    budget = dpcalc(*SEED, "--max-eps", "0.9", "--json").json()["budget"]
    assert budget["epsilon"] == 1.0 and budget["within_budget"] is False


@pytest.mark.parametrize("args, message", [
    (("--eps", "1"), "Error: --delta is required: PTR's test threshold ln(1/delta)/eps and its guarantee "
                     "(2 eps, delta) depend on it"),
    (("--delta", "1e-6"), "Error: give --eps (or --scale), or --error with --confidence to get epsilon, "
                          "e.g. --eps 1 --confidence 0.95 to get the error"),
    (("--delta", "1e-6", "--error", "1"), "Error: give two of --eps (or --scale), --error and --confidence, got only "
                                          "--error: add --confidence (to get epsilon) or --eps (to get the confidence)"),
    (("--delta", "1e-6", "--confidence", "0.9"), "Error: give two of --eps (or --scale), --error and --confidence, got "
                                                 "only --confidence: add --error (to get epsilon) or --eps (to get the error)"),
    (("--delta", "1e-6", "--eps", "1", "--scale", "1"), "Error: --eps and --scale cannot both be given: the scale is the "
                                                        "noise the epsilon sets (drop one)"),
    (("--delta", "1e-6", "--eps", "1", "--error", "1", "--confidence", "0.9"),
     "Error: --eps, --error and --confidence cannot all be given: drop the one to compute (drop --eps to get epsilon, "
     "--error to get the error, --confidence to get the confidence)"),
    (("--delta", "1e-6", "--scale", "1", "--error", "1", "--confidence", "0.9"),
     "Error: --scale, --error and --confidence cannot all be given: drop the one to compute (drop --scale to get "
     "epsilon, --error to get the error, --confidence to get the confidence)"),
    (("--delta", "0", "--eps", "1"), "Error: --delta must be in (0, 1), got 0"),
    (("--delta", "1e-6", "--eps", "0"), "Error: --eps must be in (0, inf), got 0"),
    (("--delta", "1e-6", "--eps", "1", "--bound", "-1"), "Error: --bound must be in (0, inf), got -1"),
    (("--delta", "1e-6", "--scale", "abc"), "Error: --scale must be a number in (0, inf), got 'abc'"),
    (("--delta", "1e-6", "--eps", "1", "--error", "0"), "Error: --error must be in (0, inf), got 0"),
    (("--delta", "1e-6", "--eps", "1", "--confidence", "1"), "Error: --confidence must be in (0, 1), got 1"),
    (("--delta", "1e-6", "--eps", "1", "--distance", "-2"), "Error: --distance must be in [0, inf), got -2"),
    (("--delta", "1e-6", "--eps", "1", "--reply-probability", "0"), "Error: --reply-probability must be in (0, 1), got 0"),
    (("--delta", "1e-6", "--eps", "1", "--max-eps", "-1"), "Error: --max-eps must be in [0, inf), got -1"),
    (("--delta", "1e-6", "--error", "1e-320", "--confidence", "0.5"),
     "Error: --error must be such that epsilon = bound ln(1/q) / error is finite and positive, got 1e-320"),
])
def test_errors(dpcalc, args, message):
    run = dpcalc("mechanism", "ptr", *args)
    assert run.code == 2 and run.stdout == ""
    assert run.stderr == message + "\n"


def test_help_lists_the_examples(dpcalc):
    run = dpcalc("mechanism", "ptr", "--help")
    assert run.code == 0 and "dpcalc mechanism ptr --eps 0.5 --delta 1e-6 --bound 2 --confidence 0.95" in run.stdout
