"""`dpcalc risk` on the command line: every option, every error path, the JSON contract."""

from __future__ import annotations

import importlib.util
import math

import pytest

TOP_LEVEL_KEYS = {"command", "version", "inputs", "result", "warnings"}
INPUT_KEYS = {"phases", "noise_std", "sensitivity", "fprs", "prior", "kappa", "accuracy", "max_batch_size"}
RESULT_KEYS = {"advantage", "advantage_lower", "advantage_upper", "attacks", "prior", "bayes_success",
               "bayes_success_lower", "bayes_success_upper", "bayes_baseline", "reconstruction", "gdp", "curve",
               "accuracy", "grid", "analysis", "truncation"}
ATTACK_KEYS = {"fpr", "tpr", "tpr_lower", "tpr_upper", "relative_width", "ppv", "ppv_lower", "ppv_upper", "tpr_gdp"}
RECONSTRUCTION_KEYS = {"kappa", "success", "success_lower", "success_upper", "success_gdp"}
GDP_KEYS = {"mu", "approximate", "advantage", "bayes_success"}
DEFAULT_FPRS = [1e-5, 1e-4, 1e-3, 1e-2, 0.1]

# small runs keep the file fast; the design card (p 0.004, sigma 1.1, T 10000) is the slow one
SMALL = ("risk", "--p", "0.01", "--sigma", "1.0", "--T", "100")
GDP_RUN = ("risk", "--p", "1", "--sigma", "2", "--T", "4")  # exactly 1-GDP (DRS Cor. 3.3)

needs_matplotlib = pytest.mark.skipif(
    importlib.util.find_spec("matplotlib") is None, reason="matplotlib (the plot extra) is not installed"
)


def _ok(dpcalc, *args):
    run = dpcalc(*args, "--json")
    assert run.code == 0, run.stderr
    return run.json()  # strict: NaN/Infinity literals are refused


def _interval(result: dict, name: str) -> None:
    assert result[name] == result[f"{name}_upper"]
    assert result[f"{name}_lower"] <= result[f"{name}_upper"]


def test_json_contract(dpcalc):
    run = dpcalc(*SMALL, "--json")
    assert run.code == 0
    document = run.json()
    assert set(document) == TOP_LEVEL_KEYS and document["command"] == "risk"
    inputs = document["inputs"]
    assert set(inputs) == INPUT_KEYS
    assert inputs["phases"] == [{"mechanism": "gaussian", "p": 0.01, "sigma": 1.0, "scale": None, "T": 100,
                                 "sampling": "poisson", "neighbours": "add-remove", "examples_per_user": 1,
                                 "epoch_steps": None}]
    assert inputs["fprs"] == DEFAULT_FPRS and inputs["prior"] == 0.5 and inputs["kappa"] is None
    assert inputs["accuracy"] == 1e-3
    result = document["result"]
    assert set(result) == RESULT_KEYS
    _interval(result, "advantage")
    _interval(result, "bayes_success")
    assert [attack["fpr"] for attack in result["attacks"]] == DEFAULT_FPRS
    for attack in result["attacks"]:
        assert set(attack) == ATTACK_KEYS
        _interval(attack, "tpr")
        _interval(attack, "ppv")
        assert attack["fpr"] <= attack["tpr_lower"]
        assert attack["relative_width"] == pytest.approx((attack["tpr_upper"] - attack["tpr_lower"]) / attack["tpr_upper"])
        assert 0 <= attack["relative_width"] < 1e-3
        # the central-limit figure of a subsampled run lies below the certified lower end here
        assert attack["tpr_gdp"] < attack["tpr_lower"]
    assert result["prior"] == 0.5 and result["bayes_baseline"] == 0.5
    # Bayes success at prior 1/2 is (1 + advantage)/2 (docs/mathematics.md; DRS Prop. 2.12)
    assert result["bayes_success_lower"] <= (1 + result["advantage_upper"]) / 2 * (1 + 1e-12)
    assert result["bayes_success_upper"] >= (1 + result["advantage_lower"]) / 2 * (1 - 1e-12)
    assert result["reconstruction"] is None
    assert set(result["gdp"]) == GDP_KEYS and result["gdp"]["approximate"] is True
    # central-limit mu of BDLS Thm 4: p sqrt(T (e^(1/sigma^2) - 1)) = 0.01 * 10 * sqrt(e - 1)
    assert result["gdp"]["mu"] == pytest.approx(0.1 * math.sqrt(math.e - 1), rel=1e-9)
    curve = result["curve"]
    assert all(set(point) == {"alpha", "beta", "beta_upper"} for point in curve)
    assert curve[0]["alpha"] == 0.0 and curve[-1]["alpha"] == 1.0 and curve[-1]["beta"] == 0.0
    assert all(point["beta"] <= point["beta_upper"] for point in curve)
    assert all(point["beta"] <= 1 - point["alpha"] for point in curve)
    assert result["accuracy"] == 1e-3 and set(result["grid"]) == {"step"} and result["grid"]["step"] > 0
    assert result["analysis"].startswith("Poisson, add-remove")
    assert document["warnings"] == [
        "the central-limit GDP figures under-report the risk at FPR 1e-05, FPR 0.0001, FPR 0.001, FPR 0.01, "
        "FPR 0.1: they lie below the certified lower bounds; quote the certified figures."]
    assert run.stderr == ""  # in JSON mode the warnings are in the document only


def test_exact_gdp_run(dpcalc):
    result = _ok(dpcalc, *GDP_RUN, "--fpr", "1e-6,0.05")["result"]
    assert result["gdp"] == {"mu": 1.0, "approximate": False, "advantage": pytest.approx(0.38292492254802624, rel=1e-9),
                             "bayes_success": pytest.approx(0.6914624612740131, rel=1e-9)}
    # 2 Phi(1/2) - 1 = 0.38292492254802624 (mpmath), inside the certified interval
    assert result["advantage_lower"] <= 0.38292492254802624 <= result["advantage_upper"]
    # Phi(1 + Phi^-1(alpha)) (mpmath, 30 digits): 8.72176101e-5 at 1e-6, 0.259511023 at 0.05 (9 digits kept)
    for attack, exact in zip(result["attacks"], [8.72176101e-05, 0.259511023]):
        assert attack["tpr_lower"] <= exact * (1 + 1e-8) and attack["tpr_upper"] >= exact * (1 - 1e-8)
        assert attack["tpr_gdp"] == pytest.approx(exact, rel=1e-8)


def test_design_card(dpcalc):
    result = _ok(dpcalc, "risk", "--p", "0.004", "--sigma", "1.1", "--T", "10000")["result"]
    # measured (dpcalc 0.1.0): advantage [0.178387, 0.178436]; riskcal 1.5.1 gives 0.179128
    # (tests/core/test_risk.py); the intervals are held to their certified width, not their digits
    assert 0.1782 < result["advantage_lower"] <= result["advantage_upper"] < 0.1786
    first = result["attacks"][0]
    assert 7.25e-5 < first["tpr_lower"] <= first["tpr_upper"] < 7.28e-5


@pytest.mark.slow
def test_fpr_prior_kappa(dpcalc):
    document = _ok(dpcalc, *SMALL, "--fpr", "0.2,1e-6", "--prior", "0.01", "--kappa", "1e-3")
    assert document["inputs"]["fprs"] == [0.2, 1e-6]
    assert document["inputs"]["prior"] == 0.01 and document["inputs"]["kappa"] == 1e-3
    result = document["result"]
    assert [attack["fpr"] for attack in result["attacks"]] == [0.2, 1e-6]  # in the order given
    assert result["prior"] == 0.01 and result["bayes_baseline"] == 0.99
    # the lower end keeps a relative margin of 1e-14 below 1 - m (1 - delta_lower): at this prior
    # delta(log 99) is ~1e-12, so the printed lower end can sit a hair below the baseline
    assert result["bayes_baseline"] * (1 - 1e-13) <= result["bayes_success_lower"] <= result["bayes_success_upper"]
    for attack in result["attacks"]:
        tpr, fpr = attack["tpr_upper"], attack["fpr"]
        assert attack["ppv_upper"] == pytest.approx(0.01 * tpr / (0.01 * tpr + 0.99 * fpr), rel=1e-12)
    reconstruction = result["reconstruction"]
    assert set(reconstruction) == RECONSTRUCTION_KEYS and reconstruction["kappa"] == 1e-3
    _interval(reconstruction, "success")
    assert 1e-3 <= reconstruction["success_lower"]
    # 1 - f(kappa) is the TPR at FPR kappa: the same as an attack at FPR 1e-3
    at_kappa = _ok(dpcalc, *SMALL, "--fpr", "1e-3")["result"]["attacks"][0]
    assert reconstruction["success_lower"] <= at_kappa["tpr_upper"]
    assert at_kappa["tpr_lower"] <= reconstruction["success_upper"]
    assert reconstruction["success_gdp"] < reconstruction["success_lower"]
    table = dpcalc(*SMALL, "--prior", "0.01", "--kappa", "1e-3")
    assert table.code == 0
    assert "│ reconstruction " in table.stdout and "(kappa 0.001)" in table.stdout  # the label wraps
    assert "PPV at prior 0.01" in table.stdout
    _, upper, lower, _, _ = _cells(table.stdout, "reconstruction")
    assert float(upper) >= reconstruction["success_upper"] and float(lower) <= reconstruction["success_lower"]


def test_accuracy_option(dpcalc):
    document = _ok(dpcalc, *SMALL, "--accuracy", "1e-2")
    assert document["inputs"]["accuracy"] == 1e-2 and document["result"]["accuracy"] == 1e-2
    fine = _ok(dpcalc, *SMALL)["result"]
    coarse = document["result"]
    # both certified: the intervals overlap
    assert coarse["advantage_lower"] <= fine["advantage_upper"] and fine["advantage_lower"] <= coarse["advantage_upper"]
    for a, b in zip(coarse["attacks"], fine["attacks"]):
        assert a["tpr_lower"] <= b["tpr_upper"] and b["tpr_lower"] <= a["tpr_upper"]
        assert a["relative_width"] < 1e-2


def test_training_form(dpcalc):
    document = _ok(dpcalc, "risk", "--n", "60000", "--batch-size", "256", "--epochs", "2", "--sigma", "1.1")
    # p = 256/60000, T = ceil(2 * 60000 / 256) = 469
    phase = document["inputs"]["phases"][0]
    assert phase["p"] == 256 / 60000 and phase["T"] == 469
    assert 0 < document["result"]["advantage_lower"] <= document["result"]["advantage_upper"] < 0.1


@pytest.mark.slow
def test_two_phases(dpcalc):
    document = _ok(dpcalc, "risk", "--phase", "p=0.01,sigma=2,T=50", "--phase", "p=0.01,sigma=1,T=100")
    assert [phase["T"] for phase in document["inputs"]["phases"]] == [50, 100]
    both = document["result"]
    alone = _ok(dpcalc, *SMALL)["result"]
    assert both["advantage_upper"] >= alone["advantage_lower"]  # the first phase adds risk
    assert both["advantage_lower"] > alone["advantage_upper"]  # measured: 0.05285 against 0.0505
    table = dpcalc("risk", "--phase", "p=0.01,sigma=2,T=50", "--phase", "p=0.01,sigma=1,T=100")
    assert table.code == 0 and "Phases" in table.stdout and "of 2 phases" in table.stdout


@pytest.mark.slow
def test_laplace(dpcalc):
    document = _ok(dpcalc, "risk", "--mechanism", "laplace", "--scale", "10", "--T", "50")
    assert document["inputs"]["phases"][0]["mechanism"] == "laplace"
    result = document["result"]
    assert result["gdp"] is None and all(attack["tpr_gdp"] is None for attack in result["attacks"])
    # T pure 0.1-DP steps: the advantage is below delta(0) of (5, 0)-DP, tanh(5/2) ... and above 0
    assert 0 < result["advantage_lower"] <= result["advantage_upper"] < math.tanh(2.5)
    table = dpcalc("risk", "--mechanism", "laplace", "--scale", "10", "--T", "50")
    assert table.code == 0 and "GDP" in table.stdout


def test_replace_one(dpcalc):
    document = _ok(dpcalc, *SMALL, "--neighbours", "replace-one")
    assert document["inputs"]["phases"][0]["neighbours"] == "replace-one"
    assert document["result"]["gdp"] is None  # no central-limit formula under replace-one
    add_remove = _ok(dpcalc, *SMALL)["result"]
    assert document["result"]["advantage_upper"] >= add_remove["advantage_lower"]  # replace-one is the riskier relation


@pytest.mark.slow
def test_shuffle_warns_about_the_gap(dpcalc):
    run = dpcalc("risk", "--n", "1000", "--batch-size", "10", "--epochs", "1", "--sigma", "1", "--sampling", "shuffle", "--neighbours", "zero-out",
                 "--json")
    assert run.code == 0
    document = run.json()
    assert document["inputs"]["phases"][0]["sampling"] == "shuffle"
    assert document["result"]["gdp"] is None
    warning = next(item for item in document["warnings"] if item.startswith("the certified intervals are up to"))
    assert "shuffled batches" in warning and "the true figures lie between them" in warning
    assert run.stderr == ""
    table = dpcalc("risk", "--n", "1000", "--batch-size", "10", "--epochs", "1", "--sigma", "1", "--sampling", "shuffle", "--neighbours", "zero-out")
    assert table.code == 0 and f"Warning: {warning}" in table.stderr


@pytest.mark.slow
def test_examples_per_user(dpcalc):
    document = _ok(dpcalc, *SMALL, "--examples-per-user", "2")
    assert document["inputs"]["phases"][0]["examples_per_user"] == 2
    assert document["result"]["analysis"].startswith("user level (2 examples a user)")
    assert document["result"]["gdp"] is None
    one = _ok(dpcalc, *SMALL)["result"]
    assert document["result"]["advantage_lower"] > one["advantage_upper"]  # measured 0.1004 against 0.0505


# ---------------------------------------------------------------------------------------------
# The tables: both printed, rounded outward
# ---------------------------------------------------------------------------------------------


def _cells(stdout: str, first: str) -> list[str]:
    line = next(line for line in stdout.splitlines() if line.startswith("│") and line.split("│")[1].strip() == first)
    return [cell.strip() for cell in line.split("│")[1:-1]]


@pytest.mark.parametrize("run", [SMALL, pytest.param(GDP_RUN, marks=pytest.mark.slow)])
def test_tables_rounded_outward(dpcalc, run):
    result = _ok(dpcalc, *run)["result"]
    table = dpcalc(*run)
    assert table.code == 0
    assert "Attack risk (PLD, certified)" in table.stdout
    assert "Membership inference: the largest TPR at each FPR; PPV at prior 0.5" in table.stdout
    for attack, label in zip(result["attacks"], ["1e-05", "0.0001", "0.001", "0.01", "0.1"]):
        _, upper, lower, width, gdp, ppv = _cells(table.stdout, label)
        assert float(upper) >= attack["tpr_upper"] and float(lower) <= attack["tpr_lower"]
        # format_number's digits: six decimals from 1e-3 up, six significant digits below
        assert float(upper) - attack["tpr_upper"] <= max(1e-6, 1e-5 * attack["tpr_upper"])
        assert attack["tpr_lower"] - float(lower) <= max(1e-6, 1e-5 * attack["tpr_lower"])
        assert float(ppv) >= attack["ppv_upper"]
        assert float(width) == pytest.approx(attack["relative_width"], rel=0.06)  # two digits shown
        assert float(gdp) == pytest.approx(attack["tpr_gdp"], rel=1e-5, abs=1e-6)  # an estimate: rounded to nearest
    _, upper, lower, gdp, _ = _cells(table.stdout, "max advantage")
    assert float(upper) >= result["advantage_upper"] and float(lower) <= result["advantage_lower"]
    assert float(gdp) == pytest.approx(result["gdp"]["advantage"], abs=1e-6)
    _, upper, lower, _, _ = _cells(table.stdout, "Bayes success")
    assert float(upper) >= result["bayes_success_upper"] and float(lower) <= result["bayes_success_lower"]


def test_chart(dpcalc):
    run = dpcalc(*SMALL, "--chart")
    assert run.code == 0
    assert "true-positive rate" in run.stdout and "false-positive rate" in run.stdout
    assert "TPR, certified upper bound (PLD)" in run.stdout and "no privacy lost (TPR = FPR)" in run.stdout
    assert "GDP (central limit)" in run.stdout and "●" in run.stdout and "└" in run.stdout


@pytest.mark.slow
@needs_matplotlib
def test_plot_png(dpcalc, tmp_path):
    path = tmp_path / "risk.png"
    run = dpcalc(*SMALL, "--plot", str(path))
    assert run.code == 0 and f"Wrote {path}" in run.stderr
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert "Attack risk (PLD, certified)" in run.stdout  # the tables are still printed


def test_plot_bad_suffix(dpcalc, tmp_path):
    run = dpcalc(*SMALL, "--plot", str(tmp_path / "risk.txt"))
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == f"Error: --plot must name a .png, .svg or .pdf file, got {tmp_path / 'risk.txt'}\n"


# ---------------------------------------------------------------------------------------------
# Error paths: exit 2, one line on stderr
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (("--fpr", "0"), "Error: --fpr must be in [1e-300, 1), got 0\n"),
        (("--fpr", "1"), "Error: --fpr must be in [1e-300, 1), got 1\n"),
        (("--fpr", "1.5"), "Error: --fpr must be in [1e-300, 1), got 1.5\n"),
        (("--fpr", "abc"), "Error: --fpr must be a number in [1e-300, 1), got 'abc'\n"),
        (("--fpr", "0.1,,0.2"), "Error: --fpr item 2 of 3 is empty, got '0.1,,0.2'\n"),
        (("--prior", "0"), "Error: --prior must be in (0, 1), got 0\n"),
        (("--prior", "1"), "Error: --prior must be in (0, 1), got 1\n"),
        (("--kappa", "0"), "Error: --kappa must be in [1e-300, 1), got 0\n"),
        (("--kappa", "2"), "Error: --kappa must be in [1e-300, 1), got 2\n"),
        (("--accuracy", "0"), "Error: --accuracy must be in (0, 1), got 0\n"),
    ],
)
def test_option_errors(dpcalc, args, message):
    run = dpcalc(*SMALL, *args)
    assert (run.code, run.stdout, run.stderr) == (2, "", message)


def test_risk_has_no_max_eps(dpcalc):
    # risk bounds attack success, not epsilon: no --max-eps (click may add a suggestion after the sentence)
    run = dpcalc(*SMALL, "--max-eps", "1")
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr.startswith("Error: No such option '--max-eps'.") and run.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (("risk", "--p", "0.01", "--sigma", "1,2", "--T", "100"),
         "Error: dpcalc risk takes one run, got a list or range for --sigma: run it once per value, "
         "or sweep epsilon with dpcalc pld\n"),
        (("risk", "--p", "0.01", "--sigma", "1", "--T", "10:30:10"),
         "Error: dpcalc risk takes one run, got a list or range for --T: run it once per value, "
         "or sweep epsilon with dpcalc pld\n"),
        (("risk", "--p", "0.01", "--sigma", "1"), "Error: give the number of steps: --T, or --epochs\n"),
    ],
)
def test_run_errors(dpcalc, args, message):
    run = dpcalc(*args)
    assert (run.code, run.stdout, run.stderr) == (2, "", message)


def test_help(dpcalc):
    run = dpcalc("risk", "--help")
    assert run.code == 0
    for text in ("dpcalc risk --p 0.004 --sigma 1.1 --T 10000", "--fpr", "--prior", "--kappa", "--accuracy"):
        assert text in run.stdout


def test_nothing_sampled(dpcalc):
    # p = 0: the output does not depend on the record; every figure is exact (TPR = FPR, advantage 0)
    run = dpcalc("risk", "--p", "0", "--sigma", "1", "--T", "100", "--fpr", "1e-3", "--kappa", "0.01", "--json")
    assert run.code == 0
    document = run.json()
    result = document["result"]
    assert result["advantage_lower"] == result["advantage_upper"] == 0.0
    assert [(a["tpr_lower"], a["tpr_upper"], a["ppv_upper"]) for a in result["attacks"]] == [(1e-3, 1e-3, 0.5)]
    assert result["bayes_success_lower"] == result["bayes_success_upper"] == result["bayes_baseline"] == 0.5
    assert result["reconstruction"]["success_lower"] == result["reconstruction"]["success_upper"] == 0.01
    assert all(point["beta"] == pytest.approx(1 - point["alpha"], abs=1e-15) for point in result["curve"])
    assert any(item.startswith("p = 0: no record is ever sampled") for item in document["warnings"])
    # a phase that samples nothing adds no risk to the others: the intervals overlap
    mixed = _ok(dpcalc, "risk", "--phase", "p=0,sigma=1,T=100", "--phase", "p=0.01,sigma=1,T=100")["result"]
    alone = _ok(dpcalc, *SMALL)["result"]
    assert mixed["advantage_lower"] <= alone["advantage_upper"] and alone["advantage_lower"] <= mixed["advantage_upper"]
