"""The Python API (dpcalc.api): the user guide's example runs, each function returns what its
command's --json prints, bad input raises ValueError naming the argument, and `import dpcalc`
stays light (dpcalc.api and numpy load on first use)."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dpcalc
from dpcalc import api
from dpcalc.core.validation import ParameterError, RunError

ROOT = Path(__file__).resolve().parent.parent


def readme_api_example() -> str:
    """The pycon block of the user guide's "Python API" section (docs/guide.md)."""
    text = (ROOT / "docs" / "guide.md").read_text()
    section = re.search(r"^## Python API\n(.*?)^## ", text, flags=re.S | re.M)
    assert section is not None, "docs/guide.md has a Python API section"
    blocks = re.findall(r"```pycon\n(.*?)```", section.group(1), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


@pytest.mark.slow
def test_readme_python_api_example_runs(monkeypatch):
    monkeypatch.chdir(ROOT)  # the example reads examples/privacy-budget.toml
    test = doctest.DocTestParser().get_doctest(readme_api_example(), {}, "guide: Python API", "docs/guide.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    outcome = runner.run(test)
    assert outcome.attempted >= 8 and outcome.failed == 0


def test_package_exports_the_api():
    assert set(dpcalc.__all__) - {"__version__"} == set(api.__all__)
    for name in api.__all__:
        assert getattr(dpcalc, name) is getattr(api, name)
        assert name in dir(dpcalc)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        dpcalc.nothing  # noqa: B018


# --- each function returns what the command's --json prints (same numbers, same inputs) ------


def _bounds(result) -> dict:
    return {key: getattr(result, key) for key in
            ("epsilon", "epsilon_lower", "epsilon_upper", "delta", "delta_lower", "delta_upper", "accuracy")}


def test_pld_epsilon_matches_the_command(dpcalc):
    printed = dpcalc("pld", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--delta", "1e-5", "--json").json()
    result = api.pld_epsilon(p=0.004, sigma=1.1, T=10000, delta=1e-5)
    assert {key: printed["result"][key] for key in _bounds(result)} == _bounds(result)
    assert result.epsilon_upper >= result.epsilon_lower > 0


@pytest.mark.slow
def test_pld_delta_training_form_matches_the_command(dpcalc):
    printed = dpcalc("pld", "--n", "60000", "--batch-size", "256", "--epochs", "10", "--sigma", "1.1",
                     "--eps", "1", "--json").json()
    result = api.pld_delta(n=60000, batch_size=256, epochs=10, sigma=1.1, eps=1.0)
    assert {key: printed["result"][key] for key in _bounds(result)} == _bounds(result)
    assert [phase.steps for phase in result.phases] == [phase["T"] for phase in printed["inputs"]["phases"]]


def test_pld_phases_and_relation_match_the_command(dpcalc):
    printed = dpcalc("pld", "--phase", "p=0.01,sigma=0.9,T=100", "--phase", "mechanism=laplace,scale=20,T=3",
                     "--neighbours", "zero-out", "--delta", "1e-6", "--json").json()
    result = api.pld_epsilon(phases=[api.Phase("gaussian", 0.01, 0.9, steps=100),
                                     api.Phase("laplace", scale=20.0, steps=3)],
                             neighbours="zero-out", delta=1e-6)
    assert {key: printed["result"][key] for key in _bounds(result)} == _bounds(result)


@pytest.mark.slow
def test_pld_shuffled_training_form_matches_the_command(dpcalc):
    printed = dpcalc("pld", "--n", "60000", "--batch-size", "256", "--epochs", "2", "--sigma", "1.1", "--sampling",
                     "shuffle", "--neighbours", "zero-out", "--delta", "1e-5", "--json").json()
    result = api.pld_epsilon(n=60000, batch_size=256, epochs=2, sigma=1.1, sampling="shuffle", neighbours="zero-out",
                             delta=1e-5)
    assert {key: printed["result"][key] for key in _bounds(result)} == _bounds(result)
    assert result.phases[0].epoch_steps == printed["inputs"]["phases"][0]["epoch_steps"] == 235


def test_numpy_scalars_are_numbers_like_any_other():
    import numpy as np

    given = api.pld_epsilon(p=np.float64(0.004), sigma=np.float64(1.1), epochs=np.float64(40), delta=1e-5)
    assert given == api.pld_epsilon(p=0.004, sigma=1.1, T=10000, delta=1e-5)  # T = ceil(40 / 0.004), exactly
    assert api.gdp(p=0.004, sigma=1.1, T=np.int64(10000), delta=1e-5) == api.gdp(p=0.004, sigma=1.1, T=10000,
                                                                                  delta=1e-5)


def test_gdp_matches_the_command(dpcalc):
    printed = dpcalc("gdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--delta", "1e-5", "--json").json()
    result = api.gdp(p=0.004, sigma=1.1, T=10000, delta=1e-5)
    assert (result.mu, result.epsilon, result.delta, result.max_advantage) == tuple(
        printed["result"][key] for key in ("mu", "epsilon", "delta", "max_advantage"))
    given = dpcalc("gdp", "--mu", "1.5", "--eps", "2", "--json").json()["result"]
    exact = api.gdp(mu=1.5, eps=2.0)
    assert (exact.mu, exact.epsilon, exact.delta) == (given["mu"], given["epsilon"], given["delta"])


def test_rdp_matches_the_command(dpcalc):
    printed = dpcalc("rdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--delta", "1e-5", "--no-tight",
                     "--json").json()["result"]
    result = api.rdp(p=0.004, sigma=1.1, T=10000, delta=1e-5)
    assert (result.epsilon, result.delta, result.order, result.conversion) == tuple(
        printed[key] for key in ("epsilon", "delta", "order", "conversion"))
    assert [{"order": order, "rdp": value} for order, value in zip(result.orders, result.rdp)] == printed["curve"]
    printed = dpcalc("rdp", "--phase", "p=0.01,sigma=0.9,T=100", "--phase", "mechanism=laplace,scale=20,T=3",
                     "--orders", "8,2,4", "--conversion", "classic", "--eps", "1", "--json").json()["result"]
    result = api.rdp(phases=[api.Phase("gaussian", 0.01, 0.9, steps=100), api.Phase("laplace", scale=20.0, steps=3)],
                     orders=[8, 2, 4], conversion="classic", eps=1.0)
    assert (result.epsilon, result.delta, result.order) == (printed["epsilon"], printed["delta"], printed["order"])


@pytest.mark.slow
def test_risk_matches_the_command(dpcalc):
    printed = dpcalc("risk", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--fpr", "1e-4,1e-2",
                     "--prior", "0.1", "--json").json()["result"]
    result = api.risk(p=0.004, sigma=1.1, T=10000, fpr=[1e-4, 1e-2], prior=0.1)
    assert (result.advantage.upper, result.advantage.lower) == (printed["advantage_upper"],
                                                                printed["advantage_lower"])
    assert [(point.fpr, point.tpr.upper, point.tpr.lower) for point in result.points] == [
        (attack["fpr"], attack["tpr_upper"], attack["tpr_lower"]) for attack in printed["attacks"]]
    assert result.bayes_success.upper == printed["bayes_success_upper"]


@pytest.mark.slow
def test_calibrate_sigma_matches_the_command(dpcalc):
    run = dpcalc("calibrate", "--target-eps", "2", "--delta", "1e-5", "--p", "0.004", "--T", "10000", "--json")
    printed = run.json()["result"]
    result = api.calibrate_sigma(2.0, delta=1e-5, p=0.004, T=10000)
    assert (result.value, result.epsilon, result.certified_epsilon, result.feasible) == (
        printed["sigma"], printed["epsilon"], printed["certified_epsilon"], printed["feasible"])
    assert result.certified_epsilon is not None and result.certified_epsilon <= 2.0


def test_calibrate_epochs_with_gdp_matches_the_command(dpcalc):
    printed = dpcalc("calibrate", "--target-eps", "3", "--delta", "1e-5", "--solve", "epochs", "--n", "60000",
                     "--batch-size", "256", "--sigma", "1.1", "--accountant", "gdp", "--json").json()["result"]
    result = api.calibrate(solve="epochs", target_eps=3.0, delta=1e-5, n=60000, batch_size=256, sigma=1.1,
                           accountant="gdp")
    assert (result.value, result.epsilon, result.certified_epsilon) == (
        printed["epochs"], printed["epsilon"], printed["certified_epsilon"])


@pytest.mark.slow
def test_check_budget_matches_the_command(dpcalc):
    path = ROOT / "examples" / "privacy-budget.toml"
    printed = dpcalc("check", str(path), "--json").json()["result"]
    for result in (api.check_budget(path), api.check_budget(text=path.read_text())):
        assert (result.total_epsilon, result.total_delta, result.within_budget) == (
            printed["total"]["epsilon"], printed["total"]["delta"], printed["within_budget"])
        assert [release.epsilon for release in result.releases] == [r["epsilon"] for r in printed["releases"]]


# --- bad input: ValueError naming the argument, its range and the value ----------------------


@pytest.mark.parametrize(("call", "message"), [
    (lambda: api.pld_epsilon(p=1.5, sigma=1.1, T=10, delta=1e-5), "p must be in [0, 1], got 1.5"),
    (lambda: api.pld_epsilon(p=0.1, sigma=-1.0, T=10, delta=1e-5), "sigma must be in (0, inf), got -1.0"),
    (lambda: api.pld_epsilon(p=0.1, sigma=1.0, T=2.5, delta=1e-5), "T must be an integer in [1, inf), got 2.5"),
    (lambda: api.pld_epsilon(p=0.1, sigma=1.0, T=10, delta=1.0), "delta must be in (0, 1), got 1.0"),
    (lambda: api.pld_epsilon(p=0.1, sigma=1.0, T=10, delta=1e-5, accuracy=0.0), "accuracy must be in (0, 1), got 0.0"),
    (lambda: api.pld_delta(p=0.1, sigma=1.0, T=10, eps=-1.0), "eps must be in [0, inf), got -1.0"),
    (lambda: api.gdp(p=0.1, sigma=1.0, T=10, delta=1e-5, mu=1.0), "mu and p cannot be given together"),
    (lambda: api.gdp(mu=0.0, delta=1e-5), "mu must be in (0, inf), got 0.0"),
    (lambda: api.gdp(mu=1.0), "give exactly one of delta"),
    (lambda: api.risk(p=0.1, sigma=1.0, T=10, fpr=[0.0]), "fpr must be in [1e-300, 1), got 0.0"),
    (lambda: api.rdp(p=0.1, sigma=1.0, T=10, delta=1e-5, orders=[1.0]), "orders must be in (1, 1e+100], got 1.0"),
    (lambda: api.rdp(p=0.1, sigma=1.0, T=10, eps=1.0, conversion="best"), "conversion must be improved or classic"),
    (lambda: api.rdp(p=0.1, mechanism="laplace", scale=2.0, T=3, delta=1e-5), "p must be 1 for the laplace"),
    (lambda: api.risk(p=0.1, sigma=1.0, T=10, prior=1.0), "prior must be in (0, 1), got 1.0"),
    (lambda: api.calibrate_sigma(-1.0, delta=1e-5, p=0.01, T=10), "target_eps must be in [0, inf), got -1.0"),
    (lambda: api.calibrate(solve="tau", target_eps=1.0, delta=1e-5), "solve must be one of"),
    (lambda: api.pld_epsilon(n=100, batch_size=0, epochs=1, sigma=1.0, delta=1e-5),
     "batch_size must be an integer in [1, inf), got 0"),
    (lambda: api.pld_epsilon(p=0.1, sigma=1.0, T=10, delta=1e-5, sampling="random"),
     "sampling must be one of poisson, uniform, shuffle, allocation, got 'random'"),
    (lambda: api.pld_epsilon(p=0.1, sigma=1.0, T="10", delta=1e-5),
     "T must be an integer in [1, inf), got '10'"),
])
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError) as raised:
        call()
    assert message in str(raised.value)


def test_refused_combinations_are_typed_and_name_the_keywords():
    with pytest.raises(RunError, match=r"^p and n/batch_size cannot be given together") as raised:
        api.pld_epsilon(p=0.1, n=100, batch_size=10, sigma=1.0, T=10, delta=1e-5)
    assert raised.value.name == "p"
    with pytest.raises(RunError, match=r"^sigma is required"):
        api.pld_epsilon(p=0.1, T=10, delta=1e-5)
    with pytest.raises(RunError, match=r"^phases and p cannot be given together"):
        api.pld_epsilon(phases=[api.Phase("gaussian", 0.1, 1.0, steps=10)], p=0.1, delta=1e-5)
    with pytest.raises(RunError, match="give the budget file's path or its text"):
        api.check_budget()
    with pytest.raises(ParameterError):
        api.gdp(p=2.0, sigma=1.0, T=10, delta=1e-5)


@pytest.mark.parametrize(("call", "name", "message"), [
    (lambda: api.pld_epsilon(p=0.004, sigma=1.1, delta=1e-5), "T", "give the number of steps: T, or epochs"),
    (lambda: api.gdp(n=100, batch_size=1000, sigma=1.0, T=10, delta=1e-5), "batch_size",
     "batch_size must be in [1, n] = [1, 100], got 1000"),
    (lambda: api.rdp(n=100, sigma=1.0, T=10, delta=1e-5), "n", "n needs batch_size (p = batch-size / n)"),
    (lambda: api.pld_epsilon(p=0.1, sigma=1.0, T=10, delta=1e-5, sampling="shuffle"), "sampling",
     "sampling shuffle needs neighbours zero-out or replace-one, got neighbours add-remove"),
    (lambda: api.calibrate(solve="epochs", target_eps=1.0, delta=1e-5, p=0.01, sigma=1.0, T=10), "solve",
     "solve epochs and T cannot be given together"),
    (lambda: api.calibrate(target_eps=1.0, delta=1e-5, n=100, batch_size=10, T=10, max_batch_size=5, sampling="uniform"),
     "max_batch_size", "max_batch_size caps Poisson batches"),
    (lambda: api.pld_epsilon(p=0.1, sigma=1.0, epochs=1e305, delta=1e-5), "epochs",
     "epochs 1e+305 gives T = ceil(epochs / p) above 1e300 steps"),
])
def test_errors_name_keywords_never_options(call, name, message):
    """The API's refusals are ParameterErrors naming the keyword; the command's wording is the same with its
    options (`--T`), which never appear here."""
    with pytest.raises(ParameterError) as raised:
        call()
    assert raised.value.name == name and message in str(raised.value) and "--" not in str(raised.value)


# --- import dpcalc stays light ----------------------------------------------------------------


def test_import_dpcalc_loads_neither_the_api_nor_numpy():
    code = ("import sys, dpcalc\n"
            "light = [name for name in ('dpcalc.api', 'numpy', 'scipy', 'typing', 'dpcalc.core') if name in sys.modules]\n"
            "dpcalc.__version__\n"
            "dpcalc.check_budget\n"
            "print(light, 'dpcalc.api' in sys.modules)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[] True"


def test_import_dpcalc_imports_nothing_else():
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", "import dpcalc"], capture_output=True,
                         text=True, check=True)
    before = subprocess.run([sys.executable, "-X", "importtime", "-c", "pass"], capture_output=True, text=True,
                            check=True)

    def modules(text: str) -> set[str]:
        return {line.rsplit("|", 1)[1].strip() for line in text.splitlines() if line.startswith("import time:")
                and "|" in line} - {"package"}

    assert modules(run.stderr) - modules(before.stderr) == {"dpcalc"}


def test_a_closed_form_command_still_loads_neither_numpy_nor_the_api():
    code = ("import sys\n"
            "from dpcalc.cli.app import main\n"
            "code = main(['gdp', '--p', '0.004', '--sigma', '1.1', '--T', '10000', '--no-tight', '--json'])\n"
            "print(code, [name for name in ('numpy', 'scipy', 'dpcalc.api') if name in sys.modules], file=sys.stderr)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stderr.strip().splitlines()[-1] == "0 []"


@pytest.mark.slow
def test_pld_epsilon_with_a_batch_size_cap_is_the_command_s(dpcalc):
    from dpcalc import pld_epsilon

    result = pld_epsilon(delta=1e-5, n=62500, batch_size=250, T=10000, sigma=1.1, max_batch_size=360)
    document = dpcalc("pld", "--n", "62500", "--batch-size", "250", "--T", "10000", "--sigma", "1.1",
                      "--max-batch-size", "360", "--json").json()["result"]
    assert (result.epsilon_lower, result.epsilon_upper) == (document["epsilon_lower"], document["epsilon_upper"])
    with pytest.raises(ValueError, match="max_batch_size needs the dataset size n"):
        pld_epsilon(delta=1e-5, p=0.004, T=10000, sigma=1.1, max_batch_size=360)


@pytest.mark.slow
def test_risk_with_a_batch_size_cap_is_the_command_s(dpcalc):
    from dpcalc import risk

    result = risk(n=1000, batch_size=10, T=50, sigma=1.0, max_batch_size=25)
    document = dpcalc("risk", "--n", "1000", "--batch-size", "10", "--T", "50", "--sigma", "1.0",
                      "--max-batch-size", "25", "--json").json()["result"]
    from dpcalc.core.phases import Phase
    from dpcalc.core.pld.truncation import Truncation, cap_costs

    # what the upper figures were moved by: step by step (add-remove), less than the overflow probability
    moved = cap_costs([Phase("gaussian", 0.01, 1.0, None, 50)], Truncation(1000, 25))[0]
    assert result.overflow == moved < document["truncation"]["overflow_probability"]
    assert (result.advantage.lower, result.advantage.upper) == (document["advantage_lower"], document["advantage_upper"])
    assert result.points[0].tpr.upper == document["attacks"][0]["tpr_upper"]
    with pytest.raises(ValueError, match="max_batch_size needs the dataset size n"):
        risk(p=0.01, T=50, sigma=1.0, max_batch_size=25)


@pytest.mark.slow
def test_calibrate_sigma_takes_the_sampling_scheme(dpcalc):
    from dpcalc import calibrate_sigma

    result = calibrate_sigma(3.0, delta=1e-5, p=0.004, T=10000, neighbours="replace-one")
    document = dpcalc("calibrate", "--target-eps", "3", "--p", "0.004", "--T", "10000", "--neighbours", "replace-one",
                      "--json").json()["result"]
    assert result.value == document["sigma"]
    with pytest.raises(ValueError, match="sampling shuffle needs n and batch_size"):
        calibrate_sigma(3.0, delta=1e-5, p=0.004, T=100, sampling="shuffle", neighbours="zero-out")
    with pytest.raises(ValueError, match=r"^accountant gdp: the central-limit accountant describes Poisson-sampled examples"):
        calibrate_sigma(3.0, delta=1e-5, p=0.004, T=100, neighbours="replace-one", accountant="gdp")


# Every public function called in a fresh process: the API stands on the core alone.
_CALLS = {
    "pld_epsilon": "pld_epsilon(n=2500, batch_size=10, sigma=1.1, T=1000, delta=1e-5, max_batch_size=25)",
    "pld_delta": "pld_delta(n=1000, batch_size=10, epochs=2, sigma=1.0, eps=1.0)",
    "gdp": "gdp(n=60000, batch_size=256, epochs=3, sigma=1.1, delta=1e-5)",
    "rdp": "rdp(p=0.01, sigma=1.0, T=100, delta=1e-5, sampling='uniform', neighbours='replace-one')",
    "risk": "risk(p=0.01, sigma=1.0, T=50)",
    "calibrate": "calibrate(solve='epochs', target_eps=2.0, delta=1e-5, n=1000, batch_size=10, sigma=1.0, "
                 "accountant='gdp', max_batch_size=None)",
    "calibrate_sigma": "calibrate_sigma(3.0, delta=1e-5, n=1000, batch_size=10, epochs=2)",
    "check_budget": "check_budget(text='[budget]\\nepsilon = 1.0\\ndelta = 1e-5\\n[[release]]\\nname = \"counts\"\\n"
                    "mechanism = \"laplace\"\\nscale = 20.0\\nsensitivity = 1.0\\ncount = 2\\n')",
    "Phase": "pld_epsilon(phases=[Phase('gaussian', 0.01, 1.0, steps=10)], delta=1e-5)",
    "ParameterError": "pld_epsilon(p=0.004, sigma=1.1, delta=1e-5)",
}


@pytest.mark.slow
def test_every_api_function_loads_no_command_line_module():
    assert set(_CALLS) == set(api.__all__)
    script = (
        "import sys, dpcalc\n"
        f"for call in {list(_CALLS.values())!r}:\n"
        "    try:\n"
        "        eval('dpcalc.' + call.replace('Phase(', 'dpcalc.Phase('))\n"
        "    except dpcalc.ParameterError:\n"
        "        pass\n"
        "print([m for m in sys.modules if m.startswith('dpcalc.cli') or m == 'click'])\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    assert run.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.slow
def test_the_api_page_examples_run(monkeypatch):
    """docs/api.md: every public function has a section, and its pycon examples run as doctests."""
    monkeypatch.chdir(ROOT)  # the budget example reads examples/privacy-budget.toml
    text = (ROOT / "docs" / "api.md").read_text()
    for name in api.__all__:
        assert f"## `{name}`" in text or name == "ParameterError", name
    blocks = re.findall(r"```pycon\n(.*?)```", text, flags=re.S)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, "docs/api.md", "docs/api.md", 0)
    outcome = runner.run(test)
    assert outcome.attempted >= 20 and outcome.failed == 0


def test_the_gdp_answer_s_certified_figure_is_worded_for_python():
    result = api.calibrate_sigma(3.0, delta=1e-5, p=0.004, T=10000, accountant="gdp")
    assert result.certified_epsilon > 3.0
    gap = [warning for warning in result.warnings if "meets the target only in the central-limit" in warning]
    assert len(gap) == 1 and 'Use accountant="pld" for an answer certified' in gap[0] and "--" not in gap[0]
