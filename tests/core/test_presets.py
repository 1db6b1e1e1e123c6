"""Framework presets (dpcalc.core.presets): each reproduces a figure its library computes.

Oracles: dp_accounting 0.6.0 and prv_accountant 0.2.0 run live (installed as test
dependencies); Opacus 1.5.4 and TF Privacy (not installed) by their own tests' and tutorials'
published figures, quoted with file and tolerance. docs/presets.md states every preset.
"""

from __future__ import annotations

import math
import warnings

import pytest

from dpcalc.core.phases import Phase
from dpcalc.core.presets import (
    DP_ACCOUNTING_ORDERS,
    FRAMEWORKS,
    OPACUS_ORDERS,
    TF_PRIVACY_ORDERS,
    framework_epsilon,
    modelled,
    mu_epsilon,
)
from dpcalc.core.presets.prv import prv_epsilon
from tests.slow import slow_cases

dp_accounting = pytest.importorskip("dp_accounting")
prv_accountant = pytest.importorskip("prv_accountant")

PLACES7 = 5e-8  # unittest's assertAlmostEqual(places=7): |a - b| < 5e-8 after rounding


def _run(q: float, sigma: float, steps: int) -> list[Phase]:
    return [Phase(sampling_probability=q, noise_multiplier=sigma, steps=steps)]


def _dp_accounting_rdp(q: float, sigma: float, steps: int, delta: float, orders=None) -> float:
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    accountant = dp_accounting.rdp.RdpAccountant(orders)
    return accountant.compose(event).get_epsilon(delta)


RUNS = [  # (q, sigma, steps, delta): MNIST DP-SGD at sigma 1.1 and 1.12, TF Privacy's examples, a short run
    (256 / 60000, 1.1, 14063, 1e-5),
    (256 / 60000, 1.12, 14063, 1e-5),
    (0.01, 0.7, 120, 1e-5),
    (0.0064, 1.0, 782, 1e-6),
    (0.04, 1.5, 2250, 1e-5),
]


def test_the_orders_are_the_libraries():
    # dp_accounting 0.6.0's own constant, and the lists quoted from Opacus and TF Privacy
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    assert list(DP_ACCOUNTING_ORDERS) == [float(a) for a in DEFAULT_RDP_ORDERS]
    assert len(OPACUS_ORDERS) == 99 + 52 and OPACUS_ORDERS[0] == 1.1 and OPACUS_ORDERS[-1] == 63.0
    assert len(TF_PRIVACY_ORDERS) == 10 + 59 + 3 and TF_PRIVACY_ORDERS[-1] == 512.0


@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), RUNS)
def test_dp_accounting_rdp_is_its_rdp_accountant(q, sigma, steps, delta):
    # dp_accounting 0.6.0 RdpAccountant() run live; the same orders and conversion, so the
    # figures agree to the round-off of the two RDP sums (dpcalc's fractional-order series is
    # signed, dp_accounting's sums |binomial coefficients|): rel 1e-9
    got = framework_epsilon("dp-accounting", _run(q, sigma, steps), delta, "rdp")
    assert got.epsilon == pytest.approx(_dp_accounting_rdp(q, sigma, steps, delta), rel=1e-9)
    assert got.accountant == "RDP"


@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), RUNS)
def test_tf_privacy_rdp_is_dp_accounting_on_its_orders(q, sigma, steps, delta):
    # TF Privacy 0.9.0 compute_dp_sgd_privacy runs dp_accounting's RdpAccountant(orders) on its list
    got = framework_epsilon("tf-privacy", _run(q, sigma, steps), delta, "rdp")
    assert got.epsilon == pytest.approx(_dp_accounting_rdp(q, sigma, steps, delta, list(TF_PRIVACY_ORDERS)), rel=1e-9)


@pytest.mark.parametrize(("n", "batch", "sigma", "epochs", "delta", "epsilon", "order"), [
    # TF Privacy 0.9.0 compute_dp_sgd_privacy_test.py, test_compute_dp_sgd_privacy (assertAlmostEqual places 7)
    (60000, 150, 1.3, 15, 1e-5, 0.7242234026109595, 19.0),
    (100000, 100, 1.0, 30, 1e-7, 1.4154988495444842, 13.0),
])
def test_tf_privacy_rdp_matches_its_tests(n, batch, sigma, epochs, delta, epsilon, order):
    steps = math.ceil(epochs * n / batch)
    got = framework_epsilon("tf-privacy", _run(batch / n, sigma, steps), delta, "rdp")
    assert got.epsilon == pytest.approx(epsilon, abs=PLACES7)
    assert got.order == order


@pytest.mark.parametrize(("sigma", "epochs", "epsilon"), [
    # TF Privacy tutorials/README.md (60000 examples, batch 256, delta 1e-5; two decimals printed:
    # abs 5e-3): "Select Parameters" and the compute_dp_sgd_privacy.py example (3.01); TF Privacy
    # <= 0.5.1, classic conversion. The table's 7.10 (sigma 0.7, 45 epochs) came from the tutorial
    # script's own orders (1.1 to 63); the library's orders give 7.1229 (tests/conformance has 7.10).
    (1.3, 15, 1.19),
    (1.1, 60, 3.01),
    (0.7, 45, 7.1229),
    # compute_noise_from_budget.py's docstring: epsilon 2.92 over 60 epochs asks noise 1.12
    (1.12, 60, 2.92),
])
def test_tf_privacy_05_matches_the_tutorial(sigma, epochs, epsilon):
    steps = math.ceil(epochs * 60000 / 256)
    got = framework_epsilon("tf-privacy-0.5", _run(256 / 60000, sigma, steps), 1e-5, "rdp")
    assert got.epsilon == pytest.approx(epsilon, abs=5e-3)


@pytest.mark.slow
def test_opacus_matches_its_accountant_tests():
    # Opacus 1.5.4 opacus/tests/accountants_test.py: sigma 1.5, sample rate 0.04, delta 1e-5
    rdp = framework_epsilon("opacus", _run(0.04, 1.5, int(90 / 0.04)), 1e-5, "rdp")
    assert rdp.epsilon == pytest.approx(7.32911117143, abs=PLACES7)  # test_rdp_accountant, places 7
    prv = framework_epsilon("opacus", _run(0.04, 1.5, int(90 // 0.04)), 1e-5, "pld")
    assert prv.epsilon == pytest.approx(6.777395712150674, abs=PLACES7)  # test_prv_accountant, places 7
    gdp = framework_epsilon("opacus", _run(0.04, 1.5, int(90 // 0.04)), 1e-5, "gdp")
    assert 6.59 < gdp.epsilon < 6.6  # test_gdp_accountant's bounds


# eps_error 0.1 (prv_accountant's script) on every run; 0.01 (Opacus's) on the short run, and on
# the long ones in the slow set (prv_accountant takes ~5 s on its finer grid)
_PRV_CASES = [(*run, 0.1) for run in RUNS[1:]] + [(*RUNS[2], 0.01)] + [
    pytest.param(*run, 0.01, marks=pytest.mark.slow) for run in (RUNS[1], RUNS[3], RUNS[4])]


@pytest.mark.slow
@pytest.mark.parametrize(("q", "sigma", "steps", "delta", "eps_error"), _PRV_CASES)
def test_prv_is_prv_accountant(q, sigma, steps, delta, eps_error):
    # prv_accountant 0.2.0 PRVAccountant run live, delta_error = delta / 1000 as its script; the
    # same recipe, so the three figures agree to the quadrature of the truncated mean (a shift
    # below 1e-9 of the grid): abs 1e-7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        accountant = prv_accountant.PRVAccountant(
            prvs=prv_accountant.PoissonSubsampledGaussianMechanism(q, sigma), max_self_compositions=steps,
            eps_error=eps_error, delta_error=delta / 1000)
        lower, estimate, upper = accountant.compute_epsilon(delta=delta, num_self_compositions=steps)
    got = prv_epsilon([(q, sigma, steps)], delta, eps_error=eps_error, delta_error=delta / 1000)
    assert (got.lower, got.estimate, got.upper) == pytest.approx((lower, estimate, upper), abs=1e-7)
    if eps_error == 0.1:
        assert framework_epsilon("prv", _run(q, sigma, steps), delta, "pld").epsilon == pytest.approx(estimate, abs=1e-7)


@pytest.mark.slow
def test_prv_composes_phases():
    # two phases: prv_accountant's heterogeneous composer (pairwise convolution) against one product of spectra
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mechanisms = [prv_accountant.PoissonSubsampledGaussianMechanism(0.01, 1.0),
                      prv_accountant.PoissonSubsampledGaussianMechanism(0.02, 1.5)]
        accountant = prv_accountant.PRVAccountant(prvs=mechanisms, max_self_compositions=[300, 200],
                                                  eps_error=0.1, delta_error=1e-8)
        expected = accountant.compute_epsilon(delta=1e-5, num_self_compositions=[300, 200])
    got = prv_epsilon([(0.01, 1.0, 300), (0.02, 1.5, 200)], 1e-5, eps_error=0.1, delta_error=1e-8)
    assert (got.lower, got.estimate, got.upper) == pytest.approx(expected, abs=1e-6)


def _dp_accounting_pld(q: float, sigma: float, steps: int, delta: float) -> float:
    from dp_accounting.pld import pld_privacy_accountant

    event = dp_accounting.GaussianDpEvent(sigma) if q == 1.0 else dp_accounting.PoissonSampledDpEvent(
        q, dp_accounting.GaussianDpEvent(sigma))
    accountant = pld_privacy_accountant.PLDAccountant()
    return accountant.compose(dp_accounting.SelfComposedDpEvent(event, steps)).get_epsilon(delta)


@pytest.mark.slow
@pytest.mark.parametrize(("q", "sigma", "steps", "delta"),
                         slow_cases([*RUNS, (1.0, 1.0, 5, 1e-6), (1e-4, 2.0, 100, 1e-5)], 0, 1, 2, 4, 5))
def test_dp_accounting_pld_is_its_pld_accountant(q, sigma, steps, delta):
    # dp_accounting 0.6.0 PLDAccountant() run live (interval 1e-4, connect-the-dots, tails at
    # e^-50 and 1e-15): the same recipe, so the figures agree to the FFTs' round-off and the two
    # evaluations of delta(eps) on the grid (measured: below 8e-9 absolute): rel 1e-8
    got = framework_epsilon("dp-accounting", _run(q, sigma, steps), delta, "pld")
    assert got.epsilon == pytest.approx(_dp_accounting_pld(q, sigma, steps, delta), rel=1e-8)


@pytest.mark.parametrize(("q", "sigma", "steps", "delta", "published", "tolerance"), slow_cases([
    # TF Privacy 0.9.0 compute_dp_sgd_privacy_test.py, test_compute_dp_sgd_example_privacy (places 7)
    (0.01, 0.7, 120, 1e-5, 2.4612381, PLACES7),
    (0.01, 0.35, 120, 1e-5, 18.6977407, PLACES7),
    # test_dp_sgd_privacy_statement_no_user_dp_with_pld: 10000 examples, batch 64, 5 epochs, noise 2
    # with microbatching (so 1), delta 1e-6, Poisson line; three decimals printed
    (0.0064, 1.0, 782, 1e-6, 1.199, 5e-4),
], 1))
def test_tf_privacy_pld_matches_its_tests(q, sigma, steps, delta, published, tolerance):
    got = framework_epsilon("tf-privacy", _run(q, sigma, steps), delta, "pld")
    assert got.epsilon == pytest.approx(published, abs=tolerance)


def test_gdp_is_the_central_limit_figure():
    # Opacus's GaussianAccountant and TF Privacy's gdp_accountant: mu = q sqrt(T (e^(1/sigma^2) - 1)),
    # then the mu-GDP conversion; the libraries' brentq root is the same root (rel 1e-9)
    from dpcalc.core import gdp

    q, sigma, steps = 256 / 60000, 1.1, 14063
    mu = q * math.sqrt(steps * math.expm1(sigma**-2))
    for framework in ("opacus", "tf-privacy", "tf-privacy-0.5"):
        got = framework_epsilon(framework, _run(q, sigma, steps), 1e-5, "gdp")
        assert got.epsilon == pytest.approx(gdp.epsilon_for_delta(1e-5, mu), rel=1e-9)
    # dp_accounting and prv_accountant have no GDP accountant: their numerical one answers
    assert framework_epsilon("prv", _run(q, sigma, steps), 1e-5, "gdp").accountant == "PRV"
    assert framework_epsilon("dp-accounting", _run(q, sigma, steps), 1e-5, "gdp").accountant == "PLD"
    assert mu_epsilon("opacus", 1.0, 1e-5).epsilon == pytest.approx(gdp.epsilon_for_delta(1e-5, 1.0), rel=1e-12)


def test_tf_privacy_05_had_no_pld_accountant():
    run = _run(256 / 60000, 1.12, 14063)
    assert framework_epsilon("tf-privacy-0.5", run, 1e-5, "pld") == framework_epsilon("tf-privacy-0.5", run, 1e-5, "rdp")


@pytest.mark.slow
def test_every_figure_is_labelled_an_estimate():
    run = _run(0.01, 1.0, 100)
    for framework in FRAMEWORKS:
        for family in ("rdp", "pld", "gdp"):
            got = framework_epsilon(framework, run, 1e-5, family)
            assert "estimate" in got.basis and got.library in got.basis
            assert math.isfinite(got.epsilon) and got.epsilon > 0


def test_runs_the_libraries_do_not_model_are_refused():
    assert modelled(_run(0.01, 1.0, 10)) is None
    assert modelled([Phase(sampling_probability=0.01, noise_multiplier=1.0, steps=10, neighbours="zero-out")]) is None
    for phase in (Phase(mechanism="laplace", scale=1.0),
                  Phase(sampling_probability=0.01, noise_multiplier=1.0, steps=10, neighbours="replace-one"),
                  Phase(sampling_probability=0.01, noise_multiplier=1.0, steps=10, examples_per_user=2)):
        with pytest.raises(ValueError, match="frameworks' default accountants"):
            framework_epsilon("opacus", [phase], 1e-5, "rdp")
    with pytest.raises(ValueError, match="framework must be one of"):
        framework_epsilon("jax", _run(0.01, 1.0, 10), 1e-5, "rdp")


def test_nothing_sampled_is_zero():
    got = framework_epsilon("opacus", _run(0.0, 1.0, 10), 1e-5, "pld")
    assert got.epsilon == 0.0
