"""`dpcalc pld --sampling poisson|uniform --neighbours add-remove|replace-one|zero-out`: every value,
its echo in the JSON, the refusals of the combinations without an accounting, sweeps and --phase."""

from __future__ import annotations

import pytest

from dpcalc.core.phases import SHUFFLE_NEEDS_POSITIONS, UNIFORM_ADD_REMOVE_NEEDS_B_BELOW_N, Phase
from dpcalc.core.pld import tight_delta, tight_epsilon

RUN = ("pld", "--p", "0.01", "--sigma", "1", "--T", "100")
LAPLACE = ("pld", "--mechanism", "laplace", "--scale", "2", "--T", "5")
RESULT_KEYS = {"epsilon", "epsilon_lower", "epsilon_upper", "delta", "delta_lower", "delta_upper",
               "accuracy", "grid", "binding", "analysis", "as_poisson", "truncation"}


def _phase(sampling: str, neighbours: str, **fields) -> dict:
    """The JSON echo of the phase of RUN."""
    return {"mechanism": "gaussian", "p": 0.01, "sigma": 1.0, "scale": None, "T": 100, "sampling": sampling,
            "neighbours": neighbours, "examples_per_user": 1, "epoch_steps": None, **fields}


def _core(sampling: str, neighbours: str, steps: int = 100) -> Phase:
    return Phase("gaussian", 0.01, 1.0, None, steps, sampling=sampling, neighbours=neighbours)


# ---------------------------------------------------------------------------------------------
# Every value of the options
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, sampling, neighbours, binding",
    [
        ((), "poisson", "add-remove", "remove"),
        (("--sampling", "poisson"), "poisson", "add-remove", "remove"),
        (("--neighbours", "add-remove"), "poisson", "add-remove", "remove"),
        (("--neighbours", "zero-out"), "poisson", "zero-out", "remove"),
        (("--sampling", "poisson", "--neighbours", "zero-out"), "poisson", "zero-out", "remove"),
        (("--neighbours", "replace-one"), "poisson", "replace-one", "symmetric"),
        (("--sampling", "poisson", "--neighbours", "replace-one"), "poisson", "replace-one", "symmetric"),
        (("--sampling", "uniform", "--neighbours", "replace-one"), "uniform", "replace-one", "symmetric"),
        (("--neighbours", "replace-one", "--sampling", "uniform"), "uniform", "replace-one", "symmetric"),
        (("--sampling", "uniform"), "uniform", "add-remove", "remove"),
        (("--sampling", "uniform", "--neighbours", "add-remove"), "uniform", "add-remove", "remove"),
        (("--sampling", "uniform", "--neighbours", "zero-out"), "uniform", "zero-out", "symmetric"),
    ],
)
def test_every_value_is_accounted_and_echoed(dpcalc, args, sampling, neighbours, binding):
    run = dpcalc(*RUN, *args, "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    assert document["inputs"]["phases"] == [_phase(sampling, neighbours)]
    result = document["result"]
    assert set(result) == RESULT_KEYS | {"like"} and result["binding"] == binding
    # the command line reports what the core computes for the same phase
    core = tight_epsilon([_core(sampling, neighbours)], 1e-5)
    assert (result["epsilon_lower"], result["epsilon_upper"]) == (core.epsilon_lower, core.epsilon_upper)
    assert result["epsilon_lower"] <= result["epsilon"] == result["epsilon_upper"]
    if sampling == "uniform":
        # the gap between the two pairs (not under add-remove: tight), and the Poisson figure below the lower bound
        # (under zero-out the attained lower bound is the Poisson pair itself: nothing provable below it)
        gap, below = neighbours != "add-remove", neighbours != "zero-out"
        assert len(document["warnings"]) == gap + below
        assert not below or "provably under-reports" in document["warnings"][-1]
        assert not gap or "gap between the pair" in document["warnings"][0]
    else:
        assert document["warnings"] == []


def test_zero_out_reports_the_add_remove_figures(dpcalc):
    plain = dpcalc(*RUN, "--json").json()
    zero_out = dpcalc(*RUN, "--neighbours", "zero-out", "--json").json()
    # the same figures; the analysis names the relation
    assert {**zero_out["result"], "analysis": None} == {**plain["result"], "analysis": None}
    assert "zero-out" in zero_out["result"]["analysis"]
    laplace = dpcalc(*LAPLACE, "--json").json()
    laplace_zero_out = dpcalc(*LAPLACE, "--neighbours", "zero-out", "--json").json()
    assert laplace_zero_out["inputs"]["phases"][0]["neighbours"] == "zero-out"
    assert {**laplace_zero_out["result"], "analysis": None} == {**laplace["result"], "analysis": None}


def test_replace_one_and_fixed_batches_cost_more(dpcalc):
    epsilon = {
        args: dpcalc(*RUN, *args, "--json").json()["result"]
        for args in [(), ("--neighbours", "replace-one"), ("--sampling", "uniform", "--neighbours", "replace-one")]
    }
    plain, replace_one, uniform = epsilon.values()
    assert plain["epsilon_upper"] < replace_one["epsilon_lower"]
    assert replace_one["epsilon_upper"] < uniform["epsilon_lower"] < uniform["epsilon_upper"]


def test_replace_one_table_names_the_symmetric_binding(dpcalc):
    run = dpcalc(*RUN, "--neighbours", "replace-one")
    assert (run.code, run.stderr) == (0, "")
    line = next(line for line in run.stdout.splitlines() if line.startswith("│ binding direction "))
    assert [cell.strip() for cell in line.strip("│").split("│")] == [
        "binding direction", "symmetric", "replace-one: the pair is its own reverse"
    ]


def test_uniform_table_warns_about_the_gap(dpcalc):
    run = dpcalc(*RUN, "--sampling", "uniform", "--neighbours", "replace-one")
    assert run.code == 0
    assert "certified upper bound (quote this)" in run.stdout
    lines = run.stderr.splitlines()
    assert lines[0].startswith("Warning: the certified interval is ") and len(lines) == 2
    assert "the gap between the pair that dominates fixed-size batches" in lines[0]
    # the Poisson figure, far below: reporting it for fixed-size batches under-reports
    assert "provably under-reports" in lines[1]


@pytest.mark.slow
def test_eps_under_replace_one_gives_delta(dpcalc):
    result = dpcalc(*RUN, "--neighbours", "replace-one", "--eps", "1", "--json").json()["result"]
    core = tight_delta([_core("poisson", "replace-one")], 1.0)
    assert result["epsilon"] == result["epsilon_lower"] == result["epsilon_upper"] == 1.0
    assert (result["delta_lower"], result["delta_upper"]) == (core.delta_lower, core.delta_upper)
    assert result["delta"] == result["delta_upper"] and result["binding"] == "symmetric"
    plain = dpcalc(*RUN, "--eps", "1", "--json").json()["result"]
    assert plain["delta_upper"] < result["delta_lower"]


@pytest.mark.slow
def test_training_form_with_fixed_size_batches(dpcalc):
    # fixed batches of 10 of 1000 records: p = b/n = 0.01, one epoch is T = 100 steps
    run = dpcalc("pld", "--n", "1000", "--batch-size", "10", "--epochs", "1", "--sigma", "1", "--sampling", "uniform",
                 "--neighbours", "replace-one", "--json")
    assert run.code == 0
    document = run.json()
    assert document["inputs"]["phases"] == [_phase("uniform", "replace-one")]
    assert document["result"] == dpcalc(*RUN, "--sampling", "uniform", "--neighbours", "replace-one", "--json").json()["result"]


@pytest.mark.parametrize(
    "args, sampling, neighbours",
    [
        (("--neighbours", "Replace-One"), "poisson", "replace-one"),
        (("--neighbours", "ZERO-OUT"), "poisson", "zero-out"),
        (("--sampling", "Uniform", "--neighbours", "REPLACE-ONE"), "uniform", "replace-one"),
        (("--sampling", "POISSON", "--neighbours", "Add-Remove"), "poisson", "add-remove"),
    ],
)
def test_values_are_case_insensitive(dpcalc, args, sampling, neighbours):
    # both options are declared case_sensitive=False, as --mechanism is; the echo is the canonical value
    run = dpcalc(*RUN, *args, "--json")
    assert (run.code, run.stderr) == (0, "")
    assert run.json()["inputs"]["phases"] == [_phase(sampling, neighbours)]


def test_help_lists_the_options(dpcalc):
    run = dpcalc("pld", "--help")
    assert run.code == 0
    assert "--sampling" in run.stdout and "[poisson|uniform|shuffle|allocation]" in run.stdout
    assert "--neighbours" in run.stdout and "[add-remove|replace-one|zero-out]" in run.stdout


# ---------------------------------------------------------------------------------------------
# Refusals: exit 2, one line on stderr that names the option and the value received
# ---------------------------------------------------------------------------------------------

SHUFFLE_WITH = "--sampling shuffle needs --neighbours zero-out or replace-one, got --neighbours add-remove: " + \
    SHUFFLE_NEEDS_POSITIONS
SHUFFLED = ("pld", "--n", "1005", "--batch-size", "10", "--epochs", "1", "--sigma", "1", "--sampling", "shuffle")
LAPLACE_NEIGHBOURS = "--neighbours must be add-remove or zero-out for --mechanism laplace, got replace-one"


@pytest.mark.parametrize(
    "args, message, named",
    [
        (SHUFFLED, SHUFFLE_WITH, ("--sampling", "shuffle")),
        ((*SHUFFLED, "--neighbours", "add-remove"), SHUFFLE_WITH, ("--neighbours", "add-remove")),
        (("pld", "--p", "1", "--sigma", "1", "--T", "10", "--sampling", "uniform"),
         f"--sampling uniform: {UNIFORM_ADD_REMOVE_NEEDS_B_BELOW_N}", ("--sampling", "uniform")),
        ((*LAPLACE, "--neighbours", "replace-one"), LAPLACE_NEIGHBOURS, ("--neighbours", "replace-one")),
        ((*LAPLACE, "--neighbours", "Replace-One"), LAPLACE_NEIGHBOURS, ("--neighbours", "replace-one")),
        ((*LAPLACE, "--sampling", "uniform", "--neighbours", "replace-one"),
         "--sampling must be poisson for --mechanism laplace, got uniform", ("--sampling", "uniform")),
        ((*LAPLACE, "--sampling", "uniform"), "--sampling must be poisson for --mechanism laplace, got uniform",
         ("--sampling", "uniform")),
        # one Laplace phase among several is enough
        (("pld", "--phase", "p=0.01,sigma=1,T=10", "--phase", "mechanism=laplace,scale=2,T=5", "--neighbours",
          "replace-one"), LAPLACE_NEIGHBOURS, ("--neighbours", "replace-one")),
        # values outside the choices: click's message
        ((*RUN, "--neighbours", "replace_one"),
         "Invalid value for '--neighbours': 'replace_one' is not one of 'add-remove', 'replace-one', 'zero-out'.",
         ("--neighbours", "replace_one")),
        ((*RUN, "--sampling", "fixed"), "Invalid value for '--sampling': 'fixed' is not one of 'poisson', 'uniform', 'shuffle', 'allocation'.",
         ("--sampling", "fixed")),
    ],
)
def test_refusals(dpcalc, args, message, named):
    run = dpcalc(*args)
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {message}\n")
    assert run.stderr.count("\n") == 1
    option, value = named
    assert option in run.stderr and value in run.stderr


def test_refusals_with_json_are_the_same(dpcalc):
    run = dpcalc(*SHUFFLED, "--json")
    assert (run.code, run.stderr) == (2, f"Error: {SHUFFLE_WITH}\n")
    assert run.json()["error"]["message"] == SHUFFLE_WITH  # with --json: the error as JSON too


# ---------------------------------------------------------------------------------------------
# Sweeps and several phases
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "relation", [("--neighbours", "replace-one"), pytest.param(("--sampling", "uniform", "--neighbours", "replace-one"), marks=pytest.mark.slow)]
)
def test_sweep_applies_the_relation_to_every_row(dpcalc, relation):
    run = dpcalc("pld", "--p", "0.01", "--T", "100", "--sigma", "1.1,2", *relation, "--json")
    assert (run.code, run.stderr) == (0, "")
    rows = run.json()["result"]["rows"]
    assert [row["sigma"] for row in rows] == [1.1, 2.0]
    for row in rows:
        single = dpcalc("pld", "--p", "0.01", "--T", "100", "--sigma", str(row["sigma"]), *relation, "--json").json()
        assert {**{key: row[key] for key in RESULT_KEYS}, "like": None} == single["result"]
        assert row["binding"] == "symmetric"
    assert rows[1]["epsilon_upper"] < rows[0]["epsilon_lower"]  # more noise, less epsilon
    plain = dpcalc("pld", "--p", "0.01", "--T", "100", "--sigma", "1.1,2", "--json").json()["result"]["rows"]
    assert all(a["epsilon_upper"] < b["epsilon_lower"] for a, b in zip(plain, rows))


def test_sweep_refuses_shuffle_under_add_remove(dpcalc):
    run = dpcalc("pld", "--n", "1005", "--batch-size", "10", "--epochs", "1", "--sigma", "1,2", "--sampling", "shuffle")
    assert (run.code, run.stdout, run.stderr) == (2, "", f"Error: {SHUFFLE_WITH}\n")


def test_sweep_inputs_echo_the_relation(dpcalc):
    inputs = dpcalc("pld", "--p", "0.01", "--T", "100", "--sigma", "1.1,2", "--neighbours", "zero-out",
                    "--json").json()["inputs"]
    assert inputs["sampling"] == "poisson" and inputs["neighbours"] == "zero-out" and inputs["examples_per_user"] == 1


PHASES = ("--phase", "p=0.01,sigma=1,T=100", "--phase", "p=0.02,sigma=2,T=50")


@pytest.mark.parametrize("sampling", ["poisson", pytest.param("uniform", marks=pytest.mark.slow)])
def test_phases_all_take_the_relation(dpcalc, sampling):
    run = dpcalc("pld", *PHASES, "--sampling", sampling, "--neighbours", "replace-one", "--json")
    assert run.code == 0
    document = run.json()
    assert [(phase["sampling"], phase["neighbours"]) for phase in document["inputs"]["phases"]] == [
        (sampling, "replace-one")
    ] * 2
    phases = [Phase("gaussian", 0.01, 1.0, None, 100, sampling=sampling, neighbours="replace-one"),
              Phase("gaussian", 0.02, 2.0, None, 50, sampling=sampling, neighbours="replace-one")]
    core = tight_epsilon(phases, 1e-5)
    result = document["result"]
    assert (result["epsilon_lower"], result["epsilon_upper"]) == (core.epsilon_lower, core.epsilon_upper)
    assert result["binding"] == "symmetric"
    # the second phase costs something under the relation too (each bound grows; with fixed-size batches
    # the interval is wide, the gap between the pairs, so the bounds are compared one by one)
    first = dpcalc(*RUN, "--sampling", sampling, "--neighbours", "replace-one", "--json").json()["result"]
    assert result["epsilon_lower"] > first["epsilon_lower"] and result["epsilon_upper"] > first["epsilon_upper"]
    table = dpcalc("pld", *PHASES, "--sampling", sampling, "--neighbours", "replace-one")
    assert table.code == 0 and "Tight accounting (PLD) of 2 phases" in table.stdout
