"""Calibration: exact answers against independent oracles, round trips, peers, edge cases.

Oracles: mpmath (30 digits) for the Gaussian-DP profile behind the gdp accountant; the
accountants themselves evaluated at the answer and at its neighbour; dp_accounting 0.6.0's
calibrate_dp_mechanism with its RdpAccountant; prv_accountant 0.2.0's find_noise_multiplier.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcalc.core.calibrate import (
    DEFAULT_PRECISION,
    MAX_STEPS,
    calibrate,
    steps_for_epochs,
)
from dpcalc.core.phases import Phase
from dpcalc.core.pld import largest_steps, tight_epsilon
from dpcalc.core.rdp import rdp_accountant


def pld_epsilon(p, sigma, steps, delta=1e-5):
    return tight_epsilon([Phase("gaussian", sampling_probability=p, noise_multiplier=sigma, steps=steps)], delta).epsilon_upper


def rdp_epsilon(p, sigma, steps, delta=1e-5):
    return rdp_accountant([Phase("gaussian", sampling_probability=p, noise_multiplier=sigma, steps=steps)], delta=delta).epsilon


def significant_digits(value: float) -> int:
    return len(Decimal(repr(value)).normalize().as_tuple().digits)


# ---------------------------------------------------------------------------------------------
# gdp: an exact, independent check with mpmath


def mp_gdp_delta(epsilon, p, sigma, steps):
    """delta(eps; mu) of mu-GDP (DRS Cor. 2.13), mu = p sqrt(T (e^(1/sigma^2) - 1)) (BDLS Thm 4), or
    exactly sqrt(T)/sigma at p = 1 (DRS Cor. 3.3), 30 digits."""
    with mpmath.workdps(30):
        if p == 1:
            mu = mpmath.sqrt(steps) / mpmath.mpf(sigma)
        else:
            mu = mpmath.mpf(p) * mpmath.sqrt(steps * mpmath.expm1(1 / mpmath.mpf(sigma) ** 2))
        eps = mpmath.mpf(epsilon)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("p, steps, target", [(0.004, 10000, 2.0), (0.01, 1800, 3.0), (1.0, 10, 2.0), (0.1, 100, 0.5)])
def test_gdp_sigma_is_the_smallest_six_digit_sigma(p, steps, target):
    result = calibrate("sigma", target, 1e-5, accountant="gdp", sampling_probability=Fraction(str(p)), steps=steps)
    assert result.feasible and result.quantity == "sigma"
    # mpmath: delta(target) at the answer is at most 1e-5, at the neighbour below it is above
    # (both differ from 1e-5 by far more than the 1e-9 relative accuracy of dpcalc.core.gdp)
    assert mp_gdp_delta(target, p, result.value, steps) <= 1e-5 < mp_gdp_delta(target, p, result.rejected, steps)
    assert significant_digits(result.value) <= 6
    assert result.rejected == float(Decimal(repr(result.value)) - Decimal(1).scaleb(Decimal(repr(result.value)).adjusted() - 5))
    assert result.evaluations == 2  # the model is the accountant: one point each side
    assert result.epsilon <= target and result.rejected_epsilon > target
    # the central-limit mu is labelled an approximation; at p = 1 the mu is exact (DRS Cor. 3.3)
    assert any("central-limit" in warning for warning in result.warnings) == (p < 1)


def test_gdp_steps_are_exact_against_the_closed_form():
    # mu_T = p sqrt(T (e^(1/sigma^2) - 1)) grows with T; the answer is the largest T with
    # delta(2; mu_T) <= 1e-5 (mpmath), its neighbour T + 1 exceeds it
    result = calibrate("T", 2.0, 1e-5, accountant="gdp", sampling_probability=Fraction("0.004"), noise_multiplier=1.1)
    assert result.value == 12233 and result.rejected == 12234
    assert mp_gdp_delta(2.0, 0.004, 1.1, 12233) <= 1e-5 < mp_gdp_delta(2.0, 0.004, 1.1, 12234)


# ---------------------------------------------------------------------------------------------
# rdp: exact integers, canonical sigma, the cached curve, the peer


def test_rdp_cached_curve_gives_the_accountants_epsilon_exactly():
    from dpcalc.core.calibrate.engines import engine_for

    engine = engine_for("rdp", 1e-5)  # one per-step curve, scaled by T
    for steps in (1, 17, 10000, 10**9):
        run = Phase("gaussian", sampling_probability=0.004, noise_multiplier=1.1, steps=steps)
        assert engine.epsilon(run) == rdp_epsilon(0.004, 1.1, steps)


@pytest.mark.parametrize(
    "quantity, inputs",
    [
        ("T", {"sampling_probability": Fraction("0.004"), "noise_multiplier": 1.1}),
        ("epochs", {"dataset_size": 60000, "batch_size": 256, "noise_multiplier": 1.1}),
        ("batch_size", {"dataset_size": 60000, "noise_multiplier": 1.1, "steps": 10000}),
        ("batch_size", {"dataset_size": 60000, "noise_multiplier": 1.1, "epochs": 60}),
    ],
)
def test_rdp_integers_are_the_exact_largest(quantity, inputs):
    result = calibrate(quantity, 2.0, 1e-5, accountant="rdp", **inputs)
    assert result.rejected == result.value + 1
    assert result.epsilon <= 2.0 < result.rejected_epsilon
    assert result.epsilon == rdp_epsilon(result.sampling_probability, result.noise_multiplier, result.steps)
    if quantity == "epochs":
        assert result.steps == math.ceil(Fraction(result.value) * 60000 / 256)
    if quantity == "batch_size":
        assert result.sampling_probability == result.value / 60000


def test_rdp_sigma_is_canonical_and_checked():
    result = calibrate("sigma", 2.0, 1e-5, accountant="rdp", sampling_probability=Fraction("0.004"), steps=10000)
    assert result.value == pytest.approx(1.10421, rel=2e-5)  # dp_accounting: 1.1042073
    assert result.rejected == float(Decimal(repr(result.value)) - Decimal("0.00001"))  # 6-digit neighbour
    assert rdp_epsilon(0.004, result.value, 10000) == result.epsilon <= 2.0 < rdp_epsilon(0.004, result.rejected, 10000)
    # a hint (a previous answer) changes the path, not the answer
    hinted = calibrate("sigma", 2.0, 1e-5, accountant="rdp", sampling_probability=Fraction("0.004"), steps=10000,
                       hint=calibrate("sigma", 2.5, 1e-5, accountant="rdp", sampling_probability=Fraction("0.004"),
                                      steps=10000))
    assert hinted.value == result.value


def _dp_accounting_sigma(p, steps, target, delta):
    import dp_accounting
    from dp_accounting import mechanism_calibration
    from dp_accounting.rdp import rdp_privacy_accountant

    def event(sigma):
        return dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(p, dp_accounting.GaussianDpEvent(sigma)), steps
        )

    return mechanism_calibration.calibrate_dp_mechanism(
        rdp_privacy_accountant.RdpAccountant, event, target, delta,
        mechanism_calibration.LowerEndpointAndGuess(0.1, 1.0), tol=1e-7,
    )


@pytest.mark.slow
def test_rdp_sigma_agrees_with_dp_accounting():
    # dp_accounting 0.6.0 calibrate_dp_mechanism (RdpAccountant, its default orders, tol 1e-7):
    # 1.1042073 for the design card; our grid of orders is a superset of its, so our sigma may
    # be slightly smaller; the issue asks 1e-3 relative, measured 2.4e-6.
    result = calibrate("sigma", 2.0, 1e-5, accountant="rdp", sampling_probability=0.004, steps=10000)
    assert result.value == pytest.approx(_dp_accounting_sigma(0.004, 10000, 2.0, 1e-5), rel=1e-3)


@pytest.mark.slow
@pytest.mark.parametrize(
    "p, steps, target",
    [(0.01, 1800, 3.0), (0.1, 100, 1.0), (1.0, 10, 2.0), (256 / 60000, 14063, 0.5), (0.02, 5000, 8.0)],
)
def test_rdp_sigma_agrees_with_dp_accounting_more(p, steps, target):
    # measured: at most 3.1e-5 relative apart
    result = calibrate("sigma", target, 1e-5, accountant="rdp", sampling_probability=p, steps=steps)
    assert result.value == pytest.approx(_dp_accounting_sigma(p, steps, target, 1e-5), rel=1e-3)


# ---------------------------------------------------------------------------------------------
# pld: round trips, precision, speed of the search, the peer


def _check_pld_round_trip(result, target):
    assert result.feasible and result.accountant == "pld"
    # the answer's epsilon is the pld accountant's own at exactly that run
    again = pld_epsilon(result.sampling_probability, result.noise_multiplier, result.steps)
    assert again == result.epsilon <= target
    # within 0.5% of the target (relative to the certified upper bound): the round trip
    assert result.epsilon >= 0.995 * target
    # precision: the failing neighbour, or the interpolated boundary, within 1e-4 of the answer
    if result.rejected is not None:
        assert result.rejected_epsilon > target
        assert abs(result.value / result.rejected - 1.0) <= DEFAULT_PRECISION * (1 + 1e-9)
    else:
        assert result.value >= result.boundary and result.value / result.boundary - 1.0 <= DEFAULT_PRECISION


@pytest.mark.slow
def test_pld_design_card_round_trip():
    # design card: p = 0.004, T = 10000, target 2 (docs/reference-values.md: sigma = 1.1 gives the tight 1.8410)
    result = calibrate("sigma", 2.0, 1e-5, sampling_probability=Fraction("0.004"), steps=10000)
    _check_pld_round_trip(result, 2.0)
    # regression snapshot (dpcalc 7acfb53, 2026-11): sigma 1.04909; the interval, 3e-4 relative, is about what a
    # 1e-3 relative certified width in epsilon moves sigma by. The round trip above is the independent check
    assert 1.0489 < result.value < 1.0492 and significant_digits(result.value) <= 6
    assert result.epsilon_lower <= result.epsilon
    assert result.evaluations <= 6  # two to four steering evaluations, then two full ones


def _full_accuracy_runs(monkeypatch):
    """Record the distinct runs the PLD accountant is asked about at its default accuracy."""
    from dpcalc.core import pld

    runs = []
    real = pld.tight_epsilon

    def recording(phases, delta, **options):
        if "accuracy" not in options and tuple(phases) not in runs:
            runs.append(tuple(phases))
        return real(phases, delta, **options)

    monkeypatch.setattr(pld, "tight_epsilon", recording)
    return runs


@pytest.mark.slow
def test_pld_design_card_costs_one_or_two_full_evaluations(monkeypatch):
    # The level predicted from two coarser grids lands the first full-accuracy evaluation in
    # the precision window (measured: for the design card, and in 18 of 20 runs, see
    # calibrate.search.Search.first_margin); a miss costs one more, never more.
    runs = _full_accuracy_runs(monkeypatch)
    result = calibrate("sigma", 2.0, 1e-5, sampling_probability=Fraction("0.004"), steps=10000)
    _check_pld_round_trip(result, 2.0)
    assert 1 <= len(runs) <= 2 and result.evaluations <= 6


@pytest.mark.parametrize("p, steps, target", [pytest.param(0.004, 10000, 2.0, marks=pytest.mark.slow), (0.1, 100, 4.0)])
def test_pld_sigma_one_precision_lower_exceeds_the_target(p, steps, target):
    # The precision claim checked directly: sigma / (1 + precision), evaluated by the
    # accountant at full accuracy, exceeds the target (whichever evidence the search used).
    result = calibrate("sigma", target, 1e-5, sampling_probability=p, steps=steps)
    assert pld_epsilon(p, result.value, steps) == result.epsilon <= target
    assert pld_epsilon(p, result.value / (1.0 + DEFAULT_PRECISION), steps) > target


@pytest.mark.parametrize("p, steps, sigma", [pytest.param(0.004, 10000, 1.0505, marks=pytest.mark.slow), pytest.param(0.01, 1000, 1.4148, marks=pytest.mark.slow), (0.05, 2000, 1.5289)])
def test_pld_level_prediction_is_close_to_the_full_accuracy_epsilon(p, steps, sigma):
    # Richardson extrapolation from accuracies 1.6e-2 and 4e-3 (grid steps 4h and 2h) to the
    # default grid h: measured within 1.1e-4 (relative) on 20 runs; the bound read at the
    # finer grid alone is 2e-4..8e-4 off. Tolerance 2e-4: it steers, it is not a bound.
    from dpcalc.core.calibrate.engines import LEVEL_ACCURACY, STEERING_ACCURACY, PLDEngine

    engine = PLDEngine(1e-5)
    run = Phase("gaussian", sampling_probability=p, noise_multiplier=sigma, steps=steps)
    steering = engine.steer(run)
    predicted = engine.level(run, steering)
    full = pld_epsilon(p, sigma, steps)
    finer = tight_epsilon([Phase("gaussian", sampling_probability=p, noise_multiplier=sigma, steps=steps)], 1e-5,
                          accuracy=LEVEL_ACCURACY).epsilon_upper
    assert abs(predicted / full - 1.0) <= 2e-4
    assert abs(predicted / full - 1.0) < abs(finer / full - 1.0)
    assert steering >= finer >= full  # coarser grids, larger upper bounds (measured, not relied on)
    assert STEERING_ACCURACY == 4 * LEVEL_ACCURACY  # grid steps in the ratio 2


@pytest.mark.slow
@settings(max_examples=3, deadline=None, derandomize=True)
@given(
    p=st.floats(0.02, 0.2),
    steps=st.integers(10, 300),
    target=st.floats(0.5, 4.0),
)
def test_pld_round_trip_on_random_targets(p, steps, target):
    result = calibrate("sigma", target, 1e-5, sampling_probability=p, steps=steps)
    _check_pld_round_trip(result, target)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(
    p=st.floats(1e-3, 0.3),
    steps=st.integers(10, 20000),
    target=st.floats(0.3, 10.0),
    delta=st.sampled_from([1e-3, 1e-5, 1e-8]),
)
def test_pld_round_trip_on_random_targets_wide(p, steps, target, delta):
    result = calibrate("sigma", target, delta, sampling_probability=p, steps=steps)
    assert result.feasible
    again = tight_epsilon([Phase("gaussian", sampling_probability=p, noise_multiplier=result.value, steps=steps)], delta)
    assert again.epsilon_upper == result.epsilon <= target
    assert result.epsilon >= 0.995 * target
    if result.rejected is None:
        assert result.value / result.boundary - 1.0 <= DEFAULT_PRECISION


def test_pld_steps_are_the_exact_largest():
    result = calibrate("T", 1.0, 1e-5, sampling_probability=Fraction("0.1"), noise_multiplier=2.0)
    # one shared composition (pld.largest_steps) finds the answer, tight_epsilon checks it
    assert result.rejected == result.value + 1 and result.evaluations == 2
    # the answer's bounds are those `dpcalc pld` prints at T; the neighbour's are the shared
    # composition's, which agree with tight_epsilon's to ~1e-7 relative (the width is 1e-3)
    single = tight_epsilon([Phase("gaussian", 0.1, 2.0, None, result.value)], 1e-5)
    assert result.epsilon == single.epsilon_upper <= 1.0 and result.epsilon_lower == single.epsilon_lower
    assert pld_epsilon(0.1, 2.0, result.value) <= 1.0 < pld_epsilon(0.1, 2.0, result.value + 1)
    assert result.rejected_epsilon == pytest.approx(pld_epsilon(0.1, 2.0, result.value + 1), rel=1e-6)


@pytest.mark.slow
def test_pld_steps_where_the_two_compositions_disagree_the_search_decides():
    """Design card: the shared composition puts T = 11646 at 1.99997766, tight_epsilon at
    1.99997787 (measured). A target between the two must not return 11646: `dpcalc pld` there
    would print an epsilon above the target."""
    p, sigma = Fraction("0.004"), 1.1
    shared_count, at, _ = largest_steps(Phase("gaussian", 0.004, 1.1, None, 1), 1e-5, 2.0, fallback=False)
    single = pld_epsilon(0.004, sigma, shared_count)
    # regression snapshot (grids of step m 2^e, m in {1, 1.5}; 11648 on the power-of-two grids of
    # dpcalc 7acfb53): the premise of this test, a count where the two compositions straddle the
    # target; exact, since another count would test nothing
    assert shared_count == 11646 and at.epsilon_upper < single
    target = (at.epsilon_upper + single) / 2
    result = calibrate("T", target, 1e-5, sampling_probability=p, noise_multiplier=sigma)
    assert result.value == 11645 and result.rejected == 11646 and result.rejected_epsilon == single
    assert result.epsilon == pld_epsilon(0.004, sigma, 11645) <= target


@pytest.mark.slow
def test_pld_sigma_is_below_prv_accountant():
    # prv_accountant 0.2.0 find_noise_multiplier (eps_error 0.1): 4.1453 for p = 0.1, T = 100,
    # target 1; tighter accounting needs less noise, and ours never exceeds the target.
    from prv_accountant.dpsgd import find_noise_multiplier

    theirs = find_noise_multiplier(0.1, 100, 1.0, 1e-5)
    result = calibrate("sigma", 1.0, 1e-5, sampling_probability=0.1, steps=100)
    assert result.value <= theirs and result.epsilon <= 1.0


@pytest.mark.slow
@pytest.mark.parametrize("p, steps, target", [(0.004, 10000, 2.0), (0.01, 1800, 3.0), (256 / 60000, 14063, 0.5)])
def test_pld_sigma_is_below_prv_accountant_more(p, steps, target):
    # measured: ours 1.8%, 0.8% and 9.2% below prv_accountant's
    from prv_accountant.dpsgd import find_noise_multiplier

    theirs = find_noise_multiplier(p, steps, target, 1e-5)
    result = calibrate("sigma", target, 1e-5, sampling_probability=p, steps=steps)
    assert result.value <= theirs and result.epsilon <= target


@pytest.mark.slow
def test_pld_hint_starts_from_the_previous_answer():
    """A hint (the previous sweep row) starts the steering from its answer and residual: no
    more evaluations than a cold start, and the same answer within the precision."""
    first = calibrate("sigma", 1.0, 1e-5, sampling_probability=0.1, steps=100)
    cold = calibrate("sigma", 1.05, 1e-5, sampling_probability=0.1, steps=100)
    warm = calibrate("sigma", 1.05, 1e-5, sampling_probability=0.1, steps=100, hint=first)
    assert warm.evaluations <= cold.evaluations
    assert warm.epsilon <= 1.05 and abs(warm.value / cold.value - 1) <= 2 * DEFAULT_PRECISION


@pytest.mark.slow
def test_pld_target_sweep_rows_match_single_runs():
    """`dpcalc calibrate --target-eps 1,2,4,8` (each row hinted by the one before, as the command
    runs them): every row is certified at its answer and lies within the precision of the single
    run's answer. Both lie within the precision above the same boundary, up to the accountant's
    jitter (~2e-5 relative in sigma); measured: 1.9e-5 and 3e-5 apart (targets 2 and 8), 0 for 1."""
    rows, previous = [], None
    for target in (1.0, 2.0, 4.0, 8.0):
        row = calibrate("sigma", target, 1e-5, sampling_probability=0.004, steps=10000, hint=previous)
        _check_pld_round_trip(row, target)
        rows.append(row)
        previous = row
    for row in rows:
        single = calibrate("sigma", row.target_epsilon, 1e-5, sampling_probability=0.004, steps=10000)
        _check_pld_round_trip(single, row.target_epsilon)
        assert abs(row.value / single.value - 1.0) <= DEFAULT_PRECISION


# ---------------------------------------------------------------------------------------------
# Every quantity, bounds and infeasible targets


@pytest.mark.parametrize("accountant", ["gdp", "rdp"])
def test_p_is_rounded_down_and_checked(accountant):
    result = calibrate("p", 2.0, 1e-5, accountant=accountant, noise_multiplier=1.1, steps=10000)
    assert result.value < result.rejected and significant_digits(result.value) <= 6
    assert result.epsilon <= 2.0 < result.rejected_epsilon
    assert result.sampling_probability == result.value and result.steps == 10000


def test_p_with_epochs_keeps_steps_exact():
    result = calibrate("p", 2.0, 1e-5, accountant="gdp", noise_multiplier=1.1, epochs=60)
    assert result.steps == math.ceil(Fraction(60) / Fraction(repr(result.value)))


@pytest.mark.parametrize(
    "quantity, inputs, value, note",
    [
        ("p", {"noise_multiplier": 1.0, "steps": 10}, 1.0, "no subsampling is needed"),
        ("batch_size", {"dataset_size": 100, "noise_multiplier": 1.0, "steps": 10}, 100, "as one batch"),
        ("T", {"sampling_probability": Fraction("1e-6"), "noise_multiplier": 50.0}, MAX_STEPS, "end of the search range"),
    ],
)
def test_the_end_of_the_range_may_be_the_answer(quantity, inputs, value, note):
    result = calibrate(quantity, 50.0, 1e-5, accountant="gdp", **inputs)
    assert result.feasible and result.value == value and result.rejected is None
    assert note in result.warnings[-1]


@pytest.mark.parametrize(
    "quantity, inputs, closest, message",
    [
        ("T", {"sampling_probability": Fraction(1), "noise_multiplier": 1.0}, 1, "even T = 1 step gives epsilon"),
        ("epochs", {"sampling_probability": Fraction("0.01"), "noise_multiplier": 0.8}, 1,
         "even 1 epoch (T = 100 steps) gives epsilon"),
        ("batch_size", {"dataset_size": 60000, "noise_multiplier": 0.3, "epochs": 100}, 1,
         "even batch size 1 (p = 1.66667e-05, T = 6000000) gives epsilon"),
    ],
)
@pytest.mark.parametrize("accountant", ["gdp", "rdp", "pld"])
def test_infeasible_targets_say_so_with_the_closest_figure(quantity, inputs, closest, message, accountant):
    if accountant == "pld" and quantity == "batch_size":
        pytest.skip("6e6 steps of the PLD accountant: covered by gdp and rdp")
    result = calibrate(quantity, 0.1, 1e-5, accountant=accountant, **inputs)
    assert not result.feasible and result.value is None and result.closest == closest
    assert result.epsilon > 0.1 and result.evaluations == 1
    assert result.message.startswith(message) and f"({accountant}, delta = 1e-05)" in result.message


@pytest.mark.parametrize("accountant", ["gdp", "rdp"])
def test_target_zero_is_feasible_with_enough_noise(accountant):
    # epsilon = 0 holds once the total variation distance is at most delta
    result = calibrate("sigma", 0.0, 1e-5, accountant=accountant, sampling_probability=0.01, steps=100)
    assert result.feasible and result.epsilon == 0.0 < result.rejected_epsilon
    assert result.value > 1000


def test_steps_for_epochs_is_exact():
    assert steps_for_epochs(3, Fraction("0.3")) == 10  # 3 / 0.3 in floats is 10.000000000000002
    assert steps_for_epochs(60, Fraction(256, 60000)) == 14063
    assert steps_for_epochs(Fraction(1, 1000), Fraction(1, 2)) == 1


def test_precision_sets_the_grid():
    coarse = calibrate("sigma", 2.0, 1e-5, accountant="gdp", sampling_probability=0.004, steps=10000, precision=1e-2)
    fine = calibrate("sigma", 2.0, 1e-5, accountant="gdp", sampling_probability=0.004, steps=10000, precision=1e-7)
    assert significant_digits(coarse.value) <= 4 and coarse.value >= fine.value
    assert fine.value / fine.rejected - 1 <= 1e-8
    assert coarse.value / fine.value - 1 <= 1e-2


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(
    p=st.floats(1e-4, 1.0),
    steps=st.integers(1, 10**6),
    target=st.floats(0.05, 20.0),
    accountant=st.sampled_from(["gdp", "rdp"]),
)
def test_sigma_brackets_the_target(p, steps, target, accountant):
    result = calibrate("sigma", target, 1e-5, accountant=accountant, sampling_probability=p, steps=steps)
    assert result.feasible and result.epsilon <= target < result.rejected_epsilon
    assert result.rejected < result.value <= result.rejected * (1 + DEFAULT_PRECISION / 10)


@settings(max_examples=20, deadline=None)
@given(p=st.floats(1e-3, 0.5), steps=st.integers(10, 10**5), low=st.floats(0.2, 5.0), ratio=st.floats(1.01, 3.0))
def test_more_budget_needs_no_more_noise(p, steps, low, ratio):
    small = calibrate("sigma", low, 1e-5, accountant="gdp", sampling_probability=p, steps=steps)
    large = calibrate("sigma", low * ratio, 1e-5, accountant="gdp", sampling_probability=p, steps=steps)
    assert large.value <= small.value


@pytest.mark.parametrize(
    "quantity, inputs, message",
    [
        ("sigma", {"noise_multiplier": 1.0, "sampling_probability": 0.1, "steps": 10}, "noise_multiplier is the quantity"),
        ("T", {"sampling_probability": 0.1}, "noise_multiplier is required"),
        ("T", {"sampling_probability": 0.1, "noise_multiplier": 1.0, "epochs": 2}, "give neither steps nor epochs"),
        ("epochs", {"sampling_probability": 0.1, "noise_multiplier": 1.0, "epochs": 2}, "epochs is the quantity"),
        ("epochs", {"sampling_probability": 0.1, "noise_multiplier": 1.0, "steps": 2}, "give neither steps nor epochs"),
        ("p", {"noise_multiplier": 1.0, "steps": 10, "dataset_size": 10}, "solving for p takes neither"),
        ("batch_size", {"noise_multiplier": 1.0, "steps": 10}, "dataset_size is required"),
        ("sigma", {"steps": 10}, "give sampling_probability, or dataset_size and batch_size"),
        ("sigma", {"sampling_probability": 0.1}, "give exactly one of steps and epochs"),
        ("sigma", {"dataset_size": 10, "batch_size": 20, "steps": 1}, "batch_size must be in [1, dataset_size]"),
        ("sigma", {"sampling_probability": 1.5, "steps": 1}, "sampling_probability must be in [0, 1]"),
        ("sigma", {"sampling_probability": -0.1, "steps": 1}, "sampling_probability must be in [0, 1], got -0.1"),
        ("sigma", {"sampling_probability": 0.0, "epochs": 2},
         "sampling_probability must be in (0, 1] with epochs (T = ceil(epochs / p)), got 0"),
        ("epochs", {"sampling_probability": 0.0, "noise_multiplier": 1.0},
         "sampling_probability must be in (0, 1] with epochs (T = ceil(epochs / p)), got 0"),
        ("noise", {}, "quantity must be one of"),
    ],
)
def test_invalid_inputs(quantity, inputs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        calibrate(quantity, 1.0, 1e-5, accountant="gdp", **inputs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"target_epsilon": -1.0}, "target_epsilon must be in"),
        ({"target_epsilon": math.inf}, r"target_epsilon must be in \[0, inf\), got inf"),
        ({"delta": 0.0}, "delta must be in"),
        ({"precision": 0.5}, "precision must be in"),
        ({"accountant": "zcdp"}, "accountant must be one of"),
    ],
)
def test_invalid_settings(kwargs, message):
    arguments = {"target_epsilon": 1.0, "delta": 1e-5, "accountant": "gdp"} | kwargs
    with pytest.raises(ValueError, match=message):
        calibrate("sigma", sampling_probability=0.1, steps=10, **arguments)
