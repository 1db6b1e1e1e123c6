"""Different (eps_i, delta_i) at a total delta just above their own composed delta, through
`advanced-composition --total-delta` and `check`; and each release's own (epsilon, delta) in
`check --json`."""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from dpcalc.core.composition import compose, compose_heterogeneous

# (1, 0.1) and (2, 0.2): their own composed delta is 1 - 0.9 x 0.8 = 0.28 (exact in decimal).
# The optimum at 0.28 is 3 = eps_1 + eps_2; at 0.29 and 0.31 the 60-digit mpmath bisection of
# tests/core/test_composition_floor.py gives 2.978194509580... and 2.933103064754...
REFERENCES = {"0.28": 3.0, "0.29": 2.97819450958, "0.31": 2.93310306475}

TWO_RELEASES = """\
[budget]
epsilon = 3
delta = {delta}

[[release]]
name = "first"
mechanism = "dp"
epsilon = 1
delta = 0.1

[[release]]
name = "second"
mechanism = "dp"
epsilon = 2
delta = 0.2
"""


def write(tmp_path, text):
    path = tmp_path / "budget.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("total", sorted(REFERENCES))
def test_advanced_composition_lists_at_a_total_delta(dpcalc, total):
    run = dpcalc("advanced-composition", "--eps", "1,2", "--delta", "0.1,0.2", "--total-delta", total, "--json")
    assert run.code == 0, run.stderr
    optimal = run.json()["result"]["optimal"]
    assert optimal["delta"] == float(total) and optimal["method"] == "exact"
    assert optimal["epsilon"] == pytest.approx(REFERENCES[total], rel=1e-10)
    assert optimal["epsilon"] >= REFERENCES[total] * (1 - 1e-11)  # an upper bound (the literal has 12 digits)


def test_advanced_composition_below_the_floor_is_refused(dpcalc):
    run = dpcalc("advanced-composition", "--eps", "1,2", "--delta", "0.1,0.2", "--total-delta", "0.2799")
    assert run.code == 2
    assert run.stderr == (
        "Error: --total-delta must be at least 1 - prod(1 - delta_i) = 0.28, the delta of the mechanisms "
        "themselves (no composition theorem reaches a smaller total), got 0.2799\n"
    )


@pytest.mark.parametrize("total", sorted(REFERENCES))
def test_check_is_continuous_above_the_releases_own_delta(dpcalc, tmp_path, total):
    run = dpcalc("check", write(tmp_path, TWO_RELEASES.format(delta=total)), "--json")
    assert run.code == 0, run.stderr  # within the budget of 3 at each of these deltas
    result = run.json()["result"]
    assert result["total"]["epsilon"] == pytest.approx(REFERENCES[total], rel=1e-10)
    assert result["total"]["epsilon"] == compose_heterogeneous([1.0, 2.0], [0.1, 0.2],
                                                               total_delta=float(total)).optimal.epsilon
    assert result["within_budget"] is True and result["budget"]["delta"] == float(total)


def test_check_below_the_releases_own_delta_is_inf(dpcalc, tmp_path):
    run = dpcalc("check", write(tmp_path, TWO_RELEASES.format(delta="0.27")), "--json")
    assert run.code == 1
    assert run.json()["result"]["total"]["epsilon"] == "inf"


def test_check_identical_releases_at_their_own_delta(dpcalc, tmp_path):
    # three (1, 0.1) releases: own composed delta 1 - 0.9^3 = 0.271, where the optimum is 3 (KOV Thm 3.3)
    text = '[budget]\nepsilon = 3\ndelta = 0.271\n[[release]]\nname = "a"\nmechanism = "dp"\nepsilon = 1\ndelta = 0.1\ncount = 3\n'
    result = dpcalc("check", write(tmp_path, text), "--json").json()["result"]
    assert result["total"]["epsilon"] == 3.0
    assert result["releases"][0] == {"name": "a", "mechanism": "dp", "epsilon": 3.0, "delta": 0.271,
                                     "method": "optimal composition", "overflow_probability": None}


# ---------------------------------------------------------------------------------------------
# Each release's own (epsilon, delta) in check --json

MIXED = """\
[budget]
epsilon = 30
delta = 1e-5

[[release]]
name = "given once"
mechanism = "dp"
epsilon = 1
delta = 1e-6

[[release]]
name = "given thrice"
mechanism = "dp"
epsilon = 0.1
delta = 1e-6
count = 3

[[release]]
name = "given often"
mechanism = "dp"
epsilon = 0.1
delta = 1e-6
count = 100

[[release]]
name = "report"
mechanism = "gdp"
mu = 0.5
"""


def test_check_json_releases_carry_their_own_delta(dpcalc, tmp_path):
    run = dpcalc("check", write(tmp_path, MIXED), "--json")
    result = run.json()["result"]
    assert result["budget"]["delta"] == 1e-5  # the budget's delta stays under the budget's key
    releases = {r["name"]: r for r in result["releases"]}
    # used once: the pair stated in the file
    assert releases["given once"] == {"name": "given once", "mechanism": "dp", "epsilon": 1.0, "delta": 1e-6,
                                      "method": "given", "overflow_probability": None}
    # used 3 times: accounted at the budget's delta, which their own 1 - (1 - 1e-6)^3 is below
    thrice = releases["given thrice"]
    assert thrice["delta"] == 1e-5
    assert thrice["epsilon"] == compose(0.1, 1e-6, 3, total_delta=1e-5).optimal.epsilon
    # used 100 times: 1 - (1 - 1e-6)^100 = 9.99951e-5 is above the budget's delta, so the pair is
    # the one at that delta, where the optimum is 100 x 0.1 (KOV Thm 3.3); the delta is rounded up
    often = releases["given often"]
    assert often["epsilon"] == pytest.approx(10.0, rel=1e-15) and often["method"] == "optimal composition"
    with mp.workdps(40):
        floor = 1 - (1 - mp.mpf("1e-6")) ** 100  # exact to 40 digits: 9.99950501617...e-5
        assert floor <= often["delta"] <= floor * (1 + 1e-13)
    # a mechanism release: accounted at the budget's delta
    assert releases["report"]["delta"] == 1e-5 and math.isfinite(releases["report"]["epsilon"])


def test_check_table_notes_a_release_at_its_own_delta(dpcalc, tmp_path):
    run = dpcalc("check", write(tmp_path, MIXED))
    lines = {line.split("│")[1].strip(): line for line in run.stdout.splitlines() if line.count("│") >= 4}
    assert "given, at delta 1e-06" in lines["given once"]
    assert "optimal composition, at delta" in lines["given often"] and "9.99951e-05" in run.stdout
    assert "at delta" not in lines["given thrice"] and "at delta" not in lines["report"]
