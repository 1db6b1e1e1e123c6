"""`dpcalc rdp` on the command line: every option, every error path, the JSON contract."""

from __future__ import annotations

import math

import pytest

from dpcalc.core.rdp import DEFAULT_ORDERS
from tests.snapshots import number_in

TOP_LEVEL_KEYS = {"command", "version", "inputs", "result", "warnings"}
RESULT_KEYS = {"epsilon", "delta", "order", "conversion", "curve", "tight_epsilon", "like"}
INPUT_KEYS = {"phases", "noise_std", "sensitivity", "orders", "conversion", "delta", "eps", "max_eps", "max_delta", "no_tight"}
DESIGN_CARD = ("rdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000")


@pytest.fixture
def dpcalc(dpcalc):
    """The CLI with --no-tight, so these tests exercise RDP alone; the tight figure is tested below."""

    def run(*args):
        if args and args[0] == "rdp" and "--help" not in args and "--tight" not in args:
            return dpcalc(*args, "--no-tight")
        return dpcalc(*[a for a in args if a != "--tight"])

    return run


def test_tight_epsilon_beside_rdp(dpcalc):
    # reference values (docs/reference-values.md, design card): RDP 2.01306 vs tight 1.8410 (+-0.001); the PLD
    # bound is certified, so above 1.8400.
    document = dpcalc(*DESIGN_CARD, "--json", "--tight").json()
    tight = document["result"]["tight_epsilon"]
    assert 1.8400 <= tight <= 1.8420
    assert document["inputs"]["no_tight"] is False
    assert document["result"]["epsilon"] > tight
    table = dpcalc(*DESIGN_CARD, "--tight")
    # the gap as printed (9.3% here) follows from the two figures, not from the PLD's last digits
    percent = number_in(table.stdout, "RDP is {}% above")
    assert "tight epsilon" in table.stdout
    assert percent == pytest.approx(100 * (document["result"]["epsilon"] / tight - 1), abs=0.05)  # one decimal
    eps_mode = dpcalc(*DESIGN_CARD, "--eps", "2", "--json", "--tight").json()
    assert eps_mode["result"]["tight_epsilon"] is None


def test_no_tight_skips_it(dpcalc):
    document = dpcalc(*DESIGN_CARD, "--json").json()
    assert document["result"]["tight_epsilon"] is None and document["inputs"]["no_tight"] is True


def test_design_card_table(dpcalc):
    run = dpcalc(*DESIGN_CARD)
    assert (run.code, run.stderr) == (0, "")
    # reference value (docs/reference-values.md, dp_accounting default orders): eps 2.01306 at order 9.8 (delta 1e-5);
    # our grid contains 9.8 and finds it.
    # 2.0130593... printed rounded up (an upper bound)
    assert "2.01306" in run.stdout and "9.8" in run.stdout and "<- optimum" in run.stdout
    assert "p = 0.004, sigma = 1.1, T = 10000" in run.stdout


def test_design_card_json(dpcalc):
    run = dpcalc(*DESIGN_CARD, "--json")
    assert (run.code, run.stderr) == (0, "")
    document = run.json()
    assert set(document) == TOP_LEVEL_KEYS and document["command"] == "rdp"
    assert set(document["inputs"]) == INPUT_KEYS
    assert document["inputs"]["phases"] == [{"mechanism": "gaussian", "p": 0.004, "sigma": 1.1, "scale": None, "T": 10000, "sampling": "poisson", "neighbours": "add-remove", "examples_per_user": 1, "epoch_steps": None}]
    assert document["inputs"]["orders"] == "default" and document["inputs"]["delta"] == 1e-5
    result = document["result"]
    assert set(result) == RESULT_KEYS
    assert result["epsilon"] == pytest.approx(2.01306, abs=5e-6)
    assert result["order"] == 9.8 and result["delta"] == 1e-5 and result["conversion"] == "improved"
    assert [point["order"] for point in result["curve"]] == list(DEFAULT_ORDERS)
    assert all(set(point) == {"order", "rdp"} for point in result["curve"])
    assert document["warnings"] == []


def test_training_form_is_the_adadp_seed(dpcalc):
    # p = 600/60000, T = ceil(18 * 60000 / 600) = 1800: RDP eps 3.4487 with dp_accounting's orders
    # (docs/reference-values.md, ADADP seed); the denser default grid gives 3.4484912949 at order
    # 5.65 (mpmath, 50 digits, tests/core/test_rdp.py), rel 1e-9: the accuracy of fractional orders.
    document = dpcalc("rdp", "--n", "60000", "--batch-size", "600", "--epochs", "18", "--sigma", "0.9", "--json").json()
    assert document["inputs"]["phases"][0]["T"] == 1800
    assert document["result"]["epsilon"] == pytest.approx(3.4484912949, rel=1e-9)
    assert document["result"]["epsilon"] <= 3.4487


def test_phases_compose(dpcalc):
    one = dpcalc("rdp", "--phase", "p=0.01,sigma=0.9,T=1800", "--json").json()
    two = dpcalc("rdp", "--phase", "p=0.01,sigma=0.9,T=1000", "--phase", "p=0.01,sigma=0.9,T=800", "--json").json()
    assert [point["rdp"] for point in two["result"]["curve"]] == pytest.approx(
        [point["rdp"] for point in one["result"]["curve"]], rel=1e-14
    )
    assert two["result"]["epsilon"] == pytest.approx(one["result"]["epsilon"], rel=1e-14)
    assert len(two["inputs"]["phases"]) == 2


def test_phase_table_lists_each_phase(dpcalc):
    run = dpcalc("rdp", "--phase", "p=0.01,sigma=2,T=500", "--phase", "mechanism=laplace,scale=20,T=1")
    assert run.code == 0
    assert "Renyi DP of 2 phases" in run.stdout and "laplace" in run.stdout and "scale = 20" in run.stdout


def test_laplace_release_composed_with_training(dpcalc):
    training = dpcalc("rdp", "--phase", "p=0.01,sigma=0.9,T=1800", "--json").json()["result"]
    both = dpcalc("rdp", "--phase", "p=0.01,sigma=0.9,T=1800", "--phase", "mechanism=laplace,scale=20,T=1", "--json")
    result = both.json()["result"]
    assert result["epsilon"] > training["epsilon"]
    # Laplace alone at order 2 (Mironov Prop. 6): log(2/3 e^(1/20) + 1/3 e^(-2/20)).
    index = next(i for i, point in enumerate(result["curve"]) if point["order"] == 2.0)
    laplace_at_2 = math.log(2 / 3 * math.exp(1 / 20) + 1 / 3 * math.exp(-2 / 20))
    assert result["curve"][index]["rdp"] - training["curve"][index]["rdp"] == pytest.approx(laplace_at_2, rel=1e-9)


def test_single_phase_laplace(dpcalc):
    document = dpcalc("rdp", "--mechanism", "laplace", "--scale", "2", "--T", "3", "--json").json()
    assert document["inputs"]["phases"] == [{"mechanism": "laplace", "p": 1.0, "sigma": None, "scale": 2.0, "T": 3, "sampling": "poisson", "neighbours": "add-remove", "examples_per_user": 1, "epoch_steps": None}]
    # RDP tends to T / b = 1.5 (pure DP) as the order grows: the optimum is the largest order,
    # just above 1.5, and the grid-end warning says so.
    assert 1.5 < document["result"]["epsilon"] < 1.5001 and document["result"]["order"] == 4096.0
    assert "largest order of the grid (4096)" in document["warnings"][0]


def test_orders_option(dpcalc):
    document = dpcalc(*DESIGN_CARD, "--orders", "12, 8,9.8,10,8", "--json").json()
    assert document["inputs"]["orders"] == [8.0, 9.8, 10.0, 12.0]  # sorted, duplicates dropped
    assert [point["order"] for point in document["result"]["curve"]] == [8.0, 9.8, 10.0, 12.0]
    assert document["result"]["order"] == 9.8
    assert document["warnings"] == []


def test_orders_ranges(dpcalc):
    # start:stop:step items, expanded as sweeps expand theirs (exact decimals, stop included),
    # mixed with single orders; the result is the one of the same orders written out
    ranged = dpcalc(*DESIGN_CARD, "--orders", "1.001:1.01:0.001,4,8:12:0.5", "--json").json()
    written = [1.001, 1.002, 1.003, 1.004, 1.005, 1.006, 1.007, 1.008, 1.009, 1.01, 4.0,
               8.0, 8.5, 9.0, 9.5, 10.0, 10.5, 11.0, 11.5, 12.0]
    assert ranged["inputs"]["orders"] == written
    listed = dpcalc(*DESIGN_CARD, "--orders", ",".join(map(str, written)), "--json").json()
    assert ranged["result"] == listed["result"]
    assert ranged["result"]["order"] == 10.0


def test_orders_range_of_a_peer_grid(dpcalc):
    # a 0.001-step grid such as peers' test suites use: one short item instead of 1000 orders
    document = dpcalc(*DESIGN_CARD, "--orders", "1.001:2:0.001,4,8,16:64:8", "--json").json()
    assert len(document["inputs"]["orders"]) == 1000 + 2 + 7
    assert document["inputs"]["orders"][-1] == 64.0


def test_large_orders_laplace_emulate_pure_dp(dpcalc):
    # dp_accounting emulates pure DP with order 1e10: the Laplace release's RDP there is its
    # epsilon = 1/b up to log 2 / 1e10 (Mironov 2017, Prop. 6), and the curve is exact
    document = dpcalc("rdp", "--mechanism", "laplace", "--scale", "2", "--T", "3", "--orders", "2,1e10,1e100",
                      "--delta", "1e-10", "--json").json()
    curve = {point["order"]: point["rdp"] for point in document["result"]["curve"]}
    assert curve[1e10] == pytest.approx(3 * 0.5, rel=1e-9) and curve[1e10] < 1.5
    assert curve[1e100] == pytest.approx(1.5, rel=1e-15)
    assert document["result"]["epsilon"] == pytest.approx(1.5, rel=1e-8)
    assert document["warnings"] == []


def test_large_orders_gaussian(dpcalc):
    # order 1e10 is accepted for the subsampled Gaussian too: exact there (a / (2 sigma^2) plus
    # a/(a-1) log p, large_orders), never the optimum; a flagged bound where sigma is large
    document = dpcalc(*DESIGN_CARD, "--orders", "8:12:0.2,1e10", "--json").json()
    assert document["result"]["order"] == 9.8 and document["warnings"] == []
    curve = {point["order"]: point["rdp"] for point in document["result"]["curve"]}
    assert curve[1e10] == pytest.approx(1e4 * (1e10 / (2 * 1.21) + math.log(0.004)), rel=1e-12)
    loose = dpcalc("rdp", "--p", "0.01", "--sigma", "1000", "--T", "1", "--orders", "2,2e5", "--json").json()
    assert loose["warnings"][1:] == [
        "at 1 order(s) above 100000 (200000) the RDP is a sound upper bound, not the exact value (the largest "
        "binomial term and a bound on the others, the unsampled Gaussian: the noise is large for the order), "
        "so epsilon may be larger than with the exact RDP."
    ]


def test_grid_end_warning(dpcalc):
    run = dpcalc(*DESIGN_CARD, "--orders", "2,3,4")
    assert run.code == 0
    assert run.stderr == (
        "Warning: the optimum is at the largest order of the grid (4); "
        "a wider grid (--orders) may give a smaller epsilon.\n"
    )
    low = dpcalc(*DESIGN_CARD, "--orders", "30,40", "--json").json()
    assert low["warnings"] == [
        "the optimum is at the smallest order of the grid (30); a wider grid (--orders) may give a smaller epsilon."
    ]


def test_conversion_option(dpcalc):
    improved = dpcalc(*DESIGN_CARD, "--json").json()["result"]
    classic = dpcalc(*DESIGN_CARD, "--conversion", "classic", "--json").json()["result"]
    assert classic["conversion"] == "classic" and classic["epsilon"] > improved["epsilon"]
    run = dpcalc(*DESIGN_CARD, "--conversion", "classic")
    assert "Mironov 2017, Prop. 3" in run.stdout


def test_eps_gives_delta(dpcalc):
    document = dpcalc(*DESIGN_CARD, "--eps", "2.013059", "--json").json()
    assert document["inputs"]["delta"] is None and document["inputs"]["eps"] == 2.013059
    assert document["result"]["epsilon"] == 2.013059
    assert document["result"]["delta"] == pytest.approx(1e-5, rel=1e-5)
    assert document["result"]["order"] == 9.8


def test_delta_option(dpcalc):
    loose = dpcalc(*DESIGN_CARD, "--delta", "1e-3", "--json").json()["result"]
    tight = dpcalc(*DESIGN_CARD, "--delta", "1e-10", "--json").json()["result"]
    assert loose["epsilon"] < 2.01306 < tight["epsilon"]
    assert tight["delta"] == 1e-10


def test_single_step_curve_is_per_step(dpcalc):
    one = dpcalc("rdp", "--p", "0.004", "--sigma", "1.1", "--T", "1", "--json").json()["result"]["curve"]
    many = dpcalc(*DESIGN_CARD, "--json").json()["result"]["curve"]
    assert [10000 * point["rdp"] for point in one] == pytest.approx([point["rdp"] for point in many], rel=1e-15)


def test_huge_step_count(dpcalc):
    run = dpcalc("rdp", "--p", "0.004", "--sigma", "1.1", "--T", "1e9", "--json")
    assert run.code == 0 and run.json()["inputs"]["phases"][0]["T"] == 10**9


def test_max_eps_within_budget(dpcalc):
    run = dpcalc(*DESIGN_CARD, "--max-eps", "2.1", "--json")
    assert run.code == 0
    document = run.json()
    assert document["budget"] == {"max_epsilon": 2.1, "epsilon": document["result"]["epsilon"],
                                  "basis": "RDP upper bound (improved conversion)", "within_budget": True}


def test_max_eps_exceeded_exits_1(dpcalc):
    run = dpcalc(*DESIGN_CARD, "--max-eps", "2", "--json")
    assert run.code == 1
    assert run.json()["budget"]["within_budget"] is False
    assert "Budget exceeded: epsilon 2.01306 (RDP upper bound (improved conversion)) > --max-eps 2" in run.stderr
    table = dpcalc(*DESIGN_CARD, "--max-eps", "2")
    assert table.code == 1 and "EXCEEDED" in table.stdout


def test_max_eps_with_given_eps_is_refused(dpcalc):
    # With --eps the epsilon is the one given: --max-eps would compare it, whatever the run's delta.
    for eps in ("3", "1"):
        run = dpcalc(*DESIGN_CARD, "--eps", eps, "--max-eps", "2", "--json")
        assert run.code == 2 and run.only_error and run.stderr.count("\n") == 1
        assert run.stderr.startswith("Error: --max-eps cannot check a run given --eps") and "--max-delta" in run.stderr


def test_infinite_rdp_is_the_string_inf(dpcalc):
    run = dpcalc("rdp", "--p", "0.5", "--sigma", "1e-200", "--T", "10", "--json")
    assert run.code == 0
    document = run.json()
    assert document["result"]["epsilon"] == "inf"
    assert {point["rdp"] for point in document["result"]["curve"]} == {"inf"}
    assert any("infinite at every order" in warning for warning in document["warnings"])


def test_large_noise_fallback_is_warned(dpcalc):
    document = dpcalc("rdp", "--p", "0.01", "--sigma", "5000", "--T", "10", "--json").json()
    assert any("sound upper bound" in warning for warning in document["warnings"])


@pytest.mark.parametrize(
    "change, message",
    [
        (("--p", "1.5"), "--p must be in [0, 1], got 1.5"),
        (("--p", "abc"), "--p must be a number in [0, 1], got 'abc'"),
        (("--sigma", "0"), "--sigma must be in (0, inf), got 0"),
        (("--sigma", "nan"), "--sigma must be in (0, inf), got nan"),
        (("--T", "0"), "--T must be an integer in [1, inf), got 0"),
        (("--T", "2.5"), "--T must be an integer in [1, inf), got 2.5"),
        (("--delta", "1"), "--delta must be in (0, 1), got 1"),
        (("--eps", "-1"), "--eps must be in [0, inf), got -1"),
        (("--max-eps", "-2"), "--max-eps must be in [0, inf), got -2"),
        (("--orders", "1"), "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got 1"),
        (("--orders", "2,0.5"), "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got 0.5"),
        (("--orders", "2,1e101"), "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got 1e101"),
        (("--orders", "2,nan"), "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got nan"),
        (("--orders", "2,inf"), "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got inf"),
        (("--orders", "2,x"), "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got 'x'"),
        (("--orders", "2,,3"), "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got an empty item in '2,,3'"),
        (("--orders", ""), "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got ''"),
        (("--orders", "2:3"), "--orders: a range is start:stop:step, got '2:3'"),
        (("--orders", "2:x:1"), "--orders: the range stop must be a number, got 'x' in '2:x:1'"),
        (("--orders", "0.5:2:0.5"),
         "--orders must be a comma-separated list of orders in (1, 1e+100] or ranges start:stop:step, got 0.5"),
        (("--orders", "2,1:1e9:1"),
         "--orders: the range '1:1e9:1' has 1000000000 values; --orders takes at most 100000 orders (ranges expanded)"),
        (("--orders", "1.5:100:0.001,101:103:0.001"),
         "--orders: '1.5:100:0.001,101:103:0.001' has more than 100000 values; --orders takes at most 100000 orders "
         "(ranges expanded)"),
        (("--scale", "2"), "--scale is for --mechanism laplace; the gaussian mechanism takes --sigma"),
        (("--delta", "1e-5", "--eps", "1"),
         "--delta and --eps cannot be given together; give --delta to get epsilon, or --eps to get delta"),
        (("--phase", "p=0.1,sigma=1,T=1"),
         "--phase and --p cannot be given together; describe every phase with --phase, or give one phase with the flags"),
    ],
)
def test_invalid_values(dpcalc, change, message):
    args = list(DESIGN_CARD)
    if change[0] in args:
        args[args.index(change[0]) + 1] = change[1]
    else:
        args += change
    run = dpcalc(*args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


@pytest.mark.parametrize(
    "args, message",
    [
        (("--p", "0.01", "--T", "10"), "--sigma is required (noise multiplier, > 0)"),
        (("--p", "0.01", "--sigma", "1"), "give the number of steps: --T, or --epochs"),
        (("--n", "100", "--sigma", "1", "--T", "10"), "--n needs --batch-size (p = batch-size / n)"),
        (("--phase", "p=0.01,sigma=0.9,T=3", "--phase", "p=0.01,sigma=-1,T=3"), "--phase 2: sigma must be in (0, inf), got -1"),
        (("--phase", "p=0.01,sigma=0.9,T=3,foo=2"),
         "--phase 1: unknown key 'foo'; keys are mechanism, p, sigma, noise_std, sensitivity, scale, T, n, batch_size, epochs"),
        (("--phase", "p=0.01,sigma=0.9"),
         "--phase 1: T is required (number of steps, an integer >= 1; epochs with n and batch_size also work)"),
        (("--phase", "p=0.01,sigma=0.9,T=3", "--mechanism", "laplace"),
         "--phase and --mechanism cannot be given together; describe every phase with --phase, or give one phase with the flags"),
        (("--mechanism", "laplace", "--scale", "1", "--T", "1", "--p", "0.5"),
         "--p must be 1 for the laplace mechanism (RDP of the Poisson-subsampled Laplace mechanism is not implemented), got 0.5"),
        (("--phase", "p=0.1,sigma=1,T=1", "--phase", "mechanism=laplace,scale=1,T=1,p=0.5"),
         "--phase 2: p must be 1 for the laplace mechanism (RDP of the Poisson-subsampled Laplace mechanism is not implemented), got 0.5"),
        (("--mechanism", "laplace", "--T", "1"), "--scale is required with --mechanism laplace (Laplace scale b, > 0)"),
        (("--mechanism", "laplace", "--scale", "0", "--T", "1"), "--scale must be in (0, inf), got 0"),
        (("--mechanism", "laplace", "--scale", "1", "--T", "1", "--sigma", "1"),
         "--mechanism laplace and --sigma cannot be given together; the laplace mechanism takes --scale, --T and optionally --p"),
    ],
)
def test_missing_and_conflicting_options(dpcalc, args, message):
    run = dpcalc("rdp", *args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


@pytest.mark.parametrize("option, value", [("--conversion", "tight"), ("--mechanism", "exponential")])
def test_choices_are_checked(dpcalc, option, value):
    run = dpcalc(*DESIGN_CARD, option, value)
    assert run.code == 2
    assert option in run.stderr and value in run.stderr
    assert run.stderr.count("\n") == 1


def test_help_documents_the_default_grid_and_examples(dpcalc):
    run = dpcalc("rdp", "--help")
    assert run.code == 0
    text = " ".join(run.stdout.split())
    assert "Default orders: 1.05-10.95 by 0.05" in text and f"({len(DEFAULT_ORDERS)} orders;" in text
    assert "Examples:" in run.stdout and "dpcalc rdp --phase p=0.01,sigma=2,T=500" in run.stdout


def test_help_grid_text_matches_the_grid():
    from dpcalc.cli import rdp as cli

    assert cli.MAX_ORDER == pytest.approx(__import__("dpcalc.core.rdp", fromlist=["MAX_ORDER"]).MAX_ORDER)
    assert f"({len(DEFAULT_ORDERS)} orders;" in cli.DEFAULT_GRID_TEXT
    assert cli.DEFAULT_GRID_TEXT.startswith(f"{DEFAULT_ORDERS[0]:g}-")
    assert f"then {DEFAULT_ORDERS[-3]:g}, {DEFAULT_ORDERS[-2]:g}, {DEFAULT_ORDERS[-1]:g}" in cli.DEFAULT_GRID_TEXT


@pytest.mark.slow
def test_orders_whose_series_would_run_for_minutes_are_refused(dpcalc):
    # 1000:100000:1 sums about 5e9 series terms (over 120 s and 1.4 GiB before the limit)
    run = dpcalc("rdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--orders", "1000:100000:1", "--no-tight")
    assert run.code == 2 and run.stdout == "" and run.stderr.count("\n") == 1
    assert run.stderr.startswith("Error: --orders: the orders up to 100000 must sum to at most 1e+07")
    assert "got 4.99955e+09" in run.stderr  # sum of 1000..100000 = 5,000,050,500 - 499,500


@pytest.mark.slow
def test_orders_within_the_work_limit_are_accounted(dpcalc):
    run = dpcalc("rdp", "--p", "0.004", "--sigma", "1.1", "--T", "10000", "--orders", "1000:10000:10", "--no-tight",
                 "--json")
    assert run.code == 0, run.stderr
