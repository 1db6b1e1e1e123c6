"""`dpcalc mechanism laplace` on the command line: every option, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

RESULT_KEYS = {
    "epsilon", "scale", "std", "sensitivity", "domain", "neighbours", "bins", "error", "confidence",
    "failure_probability", "per_bin_failure_probability", "simultaneous", "accuracy", "solved_for", "source",
}
INPUT_KEYS = {"eps", "scale", "error", "confidence", "bins", "domain", "neighbours", "sensitivity", "max_eps"}


def run_json(dpcalc, *args):
    run = dpcalc("mechanism", "laplace", *args, "--json")
    assert run.code == 0, run.stderr
    document = run.json()
    assert document["command"] == "mechanism laplace"
    assert set(document["inputs"]) == INPUT_KEYS and set(document["result"]) == RESULT_KEYS
    return document


def test_table(dpcalc):
    run = dpcalc("mechanism", "laplace", "--eps", "1", "--confidence", "0.95", "--bins", "10")
    assert (run.code, run.stderr) == (0, "")
    # t = -log(1 - 0.95^(1/10)) = 5.275344 (b = 1; Dwork, Roth 2014, Fact 3.7, product over 10 bins)
    assert "5.275344" in run.stdout and "all 10 bins" in run.stdout and "Thm 3.6" in run.stdout


def test_error_from_eps_and_confidence(dpcalc):
    result = run_json(dpcalc, "--eps", "1", "--confidence", "0.95", "--bins", "10")["result"]
    assert result["error"] == pytest.approx(-math.log(1 - 0.95 ** 0.1), rel=1e-13)
    assert (result["solved_for"], result["sensitivity"], result["neighbours"], result["domain"]) == (
        "error", 1.0, "add-remove", "counts")
    assert result["simultaneous"] == "exact product over independent bins"
    assert result["source"].startswith("Dwork and Roth 2014, Thm 3.6")


def test_confidence_from_scale_and_error(dpcalc):
    document = run_json(dpcalc, "--scale", "2", "--error", "6", "--bins", "3")
    result = document["result"]
    assert result["confidence"] == pytest.approx((1 - math.exp(-3)) ** 3, rel=1e-14)
    assert result["per_bin_failure_probability"] == pytest.approx(math.exp(-3), rel=1e-15)
    assert result["epsilon"] == 0.5 and result["solved_for"] == "confidence"
    assert document["inputs"]["scale"] == 2.0


def test_epsilon_from_error_and_confidence_replace_one(dpcalc):
    result = run_json(dpcalc, "--error", "5", "--confidence", "0.99", "--bins", "100",
                      "--neighbours", "replace-one")["result"]
    assert result["sensitivity"] == 2.0 and result["solved_for"] == "epsilon"
    assert result["epsilon"] == pytest.approx(2 * -math.log(1 - 0.99 ** 0.01) / 5, rel=1e-13)


def test_confidence_close_to_one_is_exact(dpcalc):
    result = run_json(dpcalc, "--eps", "1", "--confidence", "0.999999999999")["result"]
    assert result["failure_probability"] == 1e-12
    assert result["error"] == pytest.approx(12 * math.log(10), rel=1e-15)


def test_simplex(dpcalc):
    document = run_json(dpcalc, "--scale", "2", "--error", "6", "--domain", "simplex", "--bins", "10")
    assert document["result"]["sensitivity"] == 2.0 and document["result"]["epsilon"] == 1.0
    assert document["warnings"][0].startswith("--domain simplex: two probability vectors differ by up to 2 in L1")
    run = dpcalc("mechanism", "laplace", "--eps", "1", "--error", "3", "--domain", "simplex")
    assert run.code == 0 and "Warning: --domain simplex" in run.stderr


def test_real_domain_sensitivity(dpcalc):
    result = run_json(dpcalc, "--eps", "2", "--error", "3", "--domain", "real", "--sensitivity", "4")["result"]
    assert result["scale"] == 2.0 and result["confidence"] == pytest.approx(1 - math.exp(-1.5), rel=1e-15)


def test_max_eps(dpcalc):
    run = dpcalc("mechanism", "laplace", "--scale", "0.5", "--error", "3", "--max-eps", "1")
    assert run.code == 1 and "Budget exceeded: epsilon 2 (the Laplace mechanism's pure epsilon" in run.stderr
    document = dpcalc("mechanism", "laplace", "--scale", "2", "--error", "3", "--max-eps", "1", "--json").json()
    assert document["budget"]["within_budget"] is True and document["budget"]["epsilon"] == 0.5


@pytest.mark.parametrize("args, message", [
    (("--eps", "1", "--scale", "1", "--error", "1"),
     "--eps and --scale cannot be given together; give one (scale = sensitivity / epsilon)"),
    (("--eps", "1", "--error", "1", "--confidence", "0.9"),
     "--eps or --scale, --error and --confidence cannot all be given: drop the one to compute"),
    (("--error", "1",), "--error needs --confidence (to get epsilon) or the privacy, --eps or --scale "
                        "(to get the confidence)"),
    (("--confidence", "0.9",), "--confidence needs --error (to get epsilon) or the privacy, --eps or --scale "
                               "(to get the error)"),
    ((), "give --eps or --scale (the noise, and its error at confidences 0.5 to 0.99), or --error with "
         "--confidence (to get epsilon), e.g. --eps 1 --confidence 0.95 to get the error bound"),
    (("--eps", "0", "--error", "1"), "--eps must be in (0, inf), got 0"),
    (("--scale", "-1", "--error", "1"), "--scale must be in (0, inf), got -1"),
    (("--eps", "1", "--error", "abc"), "--error must be a number in (0, inf), got 'abc'"),
    (("--eps", "1", "--confidence", "1"), "--confidence must be in (0, 1), got 1"),
    (("--eps", "1", "--error", "1", "--bins", "0"), "--bins must be an integer in [1, inf), got 0"),
    (("--eps", "1", "--error", "1", "--sensitivity", "2", "--domain", "counts"),
     "--sensitivity is set by --domain counts (1 under add-remove, 2 under replace-one); use --domain real to give it"),
    (("--eps", "1", "--error", "1", "--domain", "simplex", "--sensitivity", "2"),
     "--sensitivity is set by --domain simplex (2); use --domain real to give it"),
    (("--eps", "1", "--error", "1", "--domain", "simplex", "--neighbours", "replace-one"),
     "--neighbours applies to --domain counts only, got --domain simplex"),
    (("--scale", "1e-320", "--error", "1"), "--scale must be at least sensitivity / 1.8e308 = 5.56268e-309, got 1e-320"),
    (("--eps", "1", "--error", "1", "--max-eps", "-1"), "--max-eps must be in [0, inf), got -1"),
])
def test_errors(dpcalc, args, message):
    run = dpcalc("mechanism", "laplace", *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {message}\n")


def test_bad_choice(dpcalc):
    run = dpcalc("mechanism", "laplace", "--eps", "1", "--error", "1", "--domain", "vector")
    assert run.code == 2 and "--domain" in run.stderr and "counts" in run.stderr


def test_help_lists_the_examples(dpcalc):
    run = dpcalc("mechanism", "laplace", "--help")
    assert run.code == 0 and "dpcalc mechanism laplace --eps 1 --confidence 0.95 --bins 10" in run.stdout


def test_privacy_alone_gives_the_noise_and_its_accuracy(dpcalc):
    # --sensitivity alone means --domain real; b = 2 / 0.5 = 4, and one bin's error at confidence c is
    # b ln(1/(1 - c)) exactly (Dwork, Roth 2014, Fact 3.7)
    document = run_json(dpcalc, "--eps", "0.5", "--sensitivity", "2")
    result = document["result"]
    assert (result["scale"], result["domain"], result["solved_for"], document["inputs"]["domain"]) == (
        4.0, "real", "scale", "real")
    assert result["error"] is None and result["confidence"] is None and result["per_bin_failure_probability"] is None
    assert [point["confidence"] for point in result["accuracy"]] == [0.5, 0.9, 0.95, 0.99]
    for point in result["accuracy"]:
        assert point["failure_probability"] == pytest.approx(1 - point["confidence"], abs=1e-16)
        assert point["error"] == pytest.approx(4 * math.log(1 / point["failure_probability"]), rel=1e-14)
    table = dpcalc("mechanism", "laplace", "--eps", "0.5", "--sensitivity", "2")
    assert table.code == 0 and "Accuracy: every |noise| <= error" in table.stdout and "18.420681" in table.stdout


def test_privacy_alone_from_the_scale_over_bins(dpcalc):
    # 10 bins at b = 2: P(all within t) = (1 - e^(-t/2))^10, so t = -2 ln(1 - c^(1/10))
    result = run_json(dpcalc, "--scale", "2", "--bins", "10")["result"]
    assert result["epsilon"] == 0.5 and result["solved_for"] == "epsilon"
    for point in result["accuracy"]:
        assert point["error"] == pytest.approx(-2 * math.log(1 - point["confidence"] ** 0.1), rel=1e-12)


def test_the_table_row_matches_the_solved_error(dpcalc):
    # the accuracy table's 0.95 row is the error `--confidence 0.95` solves for
    solved = run_json(dpcalc, "--eps", "1", "--confidence", "0.95", "--bins", "10")["result"]
    assert solved["accuracy"][2]["error"] == solved["error"]


def test_laplace_eps_names_are_aliases(dpcalc):
    # `dpcalc laplace-eps` calls them --tolerance, --probability and --dims
    by_names = run_json(dpcalc, "--error", "5", "--confidence", "0.99", "--bins", "100")
    by_aliases = run_json(dpcalc, "--tolerance", "5", "--probability", "0.99", "--dims", "100")
    assert by_aliases == by_names
    help_text = dpcalc("mechanism", "laplace", "--help").stdout
    assert "--error, --tolerance" in help_text and "(alias --tolerance)" in help_text


def test_laplace_eps_takes_the_mechanism_names(dpcalc):
    # and `dpcalc laplace-eps` takes this command's names for its --tolerance, --probability and --dims
    canonical = dpcalc("laplace-eps", "--tolerance", "5", "--probability", "0.99", "--dims", "100", "--json")
    aliased = dpcalc("laplace-eps", "--error", "5", "--confidence", "0.99", "--bins", "100", "--json")
    assert (canonical.code, aliased.code) == (0, 0) and aliased.json() == canonical.json()
    # the same epsilon as the mechanism's (sensitivity 1: counts under add-remove)
    mechanism = run_json(dpcalc, "--error", "5", "--confidence", "0.99", "--bins", "100")["result"]["epsilon"]
    assert canonical.json()["result"]["epsilon"] == mechanism
