"""Fixed-size batches (`--sampling uniform`) under every neighbour relation: add-remove is the
Poisson pair at sensitivity 2 (tight, docs/mathematics.md "Fixed-size batches under add-remove"),
zero-out is bounded by replace-one's two-part pair above and the Poisson pair at sensitivity 1
below ("... under zero-out"), and the Poisson figure is shown beside both."""

from __future__ import annotations

import math

import pytest
from scipy import integrate, stats

from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_delta, tight_epsilon
from dpcalc.core.rdp import rdp_accountant

# the design card as a dataset: n 62500, b 250 (p = 0.004), sigma 1.1, T 10000
CARD = ("pld", "--n", "62500", "--batch-size", "250", "--sigma", "1.1", "--T", "10000", "--sampling", "uniform")


def _phase(neighbours: str, sampling: str = "uniform", p: float = 0.004, sigma: float = 1.1, steps: int = 10_000):
    return Phase("gaussian", p, sigma, None, steps, sampling=sampling, neighbours=neighbours)


@pytest.mark.slow
def test_add_remove_meets_the_accuracy_on_the_design_card(dpcalc):
    document = dpcalc(*CARD, "--json").json()
    result = document["result"]
    assert document["inputs"]["phases"][0]["neighbours"] == "add-remove"
    assert result["binding"] in ("remove", "add")
    assert result["epsilon_upper"] - result["epsilon_lower"] <= 1e-3 * result["epsilon_upper"]
    # the Poisson add-remove figure at noise sigma / 2 (the same pair), to the accuracy
    poisson = tight_epsilon([_phase("add-remove", "poisson", sigma=0.55)], 1e-5)
    assert result["epsilon_lower"] <= poisson.epsilon_upper and poisson.epsilon_lower <= result["epsilon_upper"]
    assert 11.6 < result["epsilon_lower"] <= result["epsilon_upper"] < 11.63
    # accounted as Poisson the run would report 1.84: far below the certified lower bound, said in a warning
    assert result["as_poisson"]["epsilon_upper"] < 1.85
    assert any("provably under-reports" in warning and "fixed-size" in warning for warning in document["warnings"])


def test_add_remove_rdp_is_the_poisson_curve_at_half_the_noise():
    uniform = rdp_accountant([_phase("add-remove")], delta=1e-5)
    poisson = rdp_accountant([_phase("add-remove", "poisson", sigma=0.55)], delta=1e-5)
    assert uniform.epsilon == poisson.epsilon
    # above the tight figure, as an RDP bound must be
    assert uniform.epsilon >= tight_epsilon([_phase("add-remove")], 1e-5).epsilon_upper


@pytest.mark.slow
def test_zero_out_is_bounded_by_replace_one_above_and_poisson_below(dpcalc):
    document = dpcalc(*CARD, "--neighbours", "zero-out", "--json").json()
    result = document["result"]
    replace_one = tight_epsilon([_phase("replace-one")], 1e-5)
    assert result["epsilon_upper"] == replace_one.epsilon_upper
    poisson = tight_epsilon([_phase("zero-out", "poisson")], 1e-5)
    assert result["epsilon_lower"] == pytest.approx(poisson.epsilon_lower, rel=1e-3)
    assert result["epsilon_lower"] <= poisson.epsilon_upper
    assert any("gap between the pair" in warning for warning in document["warnings"])


def _one_step_delta(p_shifts, q_shifts, gamma: float, sigma: float, eps: float) -> float:
    """delta(eps) of one step of two-component Gaussian mixtures, by adaptive quadrature (scipy,
    absolute error about 1e-12, far below the values compared)."""
    def density(x, shifts):
        return (1 - gamma) * stats.norm.pdf(x, shifts[0], sigma) + gamma * stats.norm.pdf(x, shifts[1], sigma)

    value, _ = integrate.quad(lambda x: max(density(x, p_shifts) - math.exp(eps) * density(x, q_shifts), 0.0),
                              -30 * sigma, 30 * sigma + 3, points=[0.0, 1.0, 2.0], limit=400, epsabs=1e-14)
    return value


@pytest.mark.slow
@pytest.mark.parametrize("gamma, sigma, eps", [(0.01, 1.0, 1.0), pytest.param(0.1, 1.0, 0.5, marks=pytest.mark.slow), pytest.param(0.004, 1.1, 2.0, marks=pytest.mark.slow), pytest.param(0.05, 0.5, 3.0, marks=pytest.mark.slow)])
def test_zero_out_upper_bound_covers_the_pair_a_batch_slot_attains(gamma, sigma, eps):
    """One step with every other record at -C and the record at +C against the null record (which
    keeps its batch slot): ((1 - g) N(0) + g N(2), (1 - g) N(0) + g N(1)), in both orders. Its delta
    is far above the Poisson pair's (the reason zero-out is not the Poisson pair) and below the
    certified upper bound."""
    phase = Phase("gaussian", gamma, sigma, None, 1, sampling="uniform", neighbours="zero-out")
    attained = max(_one_step_delta((0, 2), (0, 1), gamma, sigma, eps), _one_step_delta((0, 1), (0, 2), gamma, sigma, eps))
    poisson = _one_step_delta((0, 1), (0, 0), gamma, sigma, eps)
    result = tight_delta([phase], eps)
    assert attained > 5 * poisson
    assert attained * (1 - 1e-6) <= result.delta_upper
    assert result.delta_lower <= poisson * (1 + 1e-6) + 1e-15


@pytest.mark.parametrize("gamma, sigma, eps", [pytest.param(0.01, 1.0, 1.0, marks=pytest.mark.slow), (0.1, 0.7, 0.5), pytest.param(0.004, 1.1, 0.05, marks=pytest.mark.slow)])
def test_add_remove_one_step_is_the_attained_pair(gamma, sigma, eps):
    """Every other record at -C, the added one at +C: one step is exactly
    ((1 - g) N(0) + g N(2), N(0)), in the remove and the add order; the certified interval holds it."""
    phase = Phase("gaussian", gamma, sigma, None, 1, sampling="uniform")
    attained = max(_one_step_delta((0, 2), (0, 0), gamma, sigma, eps), _one_step_delta((0, 0), (0, 2), gamma, sigma, eps))
    result = tight_delta([phase], eps)
    assert result.delta_lower <= attained * (1 + 1e-6) + 1e-15
    assert attained * (1 - 1e-6) <= result.delta_upper


def test_full_batches_under_add_remove_are_refused(dpcalc):
    run = dpcalc("pld", "--n", "100", "--batch-size", "100", "--sigma", "1", "--T", "10", "--sampling", "uniform")
    assert run.code == 2 and run.stdout == "" and run.stderr.count("\n") == 1
    assert "need a batch smaller than the dataset" in run.stderr
    # zero-out at b = n is the Gaussian mechanism at shift 1, exactly
    exact = dpcalc("pld", "--n", "100", "--batch-size", "100", "--sigma", "1", "--T", "10", "--sampling", "uniform",
                   "--neighbours", "zero-out", "--json").json()["result"]
    plain = dpcalc("pld", "--p", "1", "--sigma", "1", "--T", "10", "--json").json()["result"]
    assert (exact["epsilon_lower"], exact["epsilon_upper"]) == (plain["epsilon_lower"], plain["epsilon_upper"])


@pytest.mark.slow
def test_check_accepts_fixed_size_batches_under_every_relation(dpcalc, tmp_path):
    for neighbours in ("add-remove", "zero-out", "replace-one"):
        path = tmp_path / f"{neighbours}.toml"
        path.write_text(f'[budget]\nepsilon = 20.0\ndelta = 1e-5\nneighbours = "{neighbours}"\n[[release]]\n'
                        'name = "model"\nmechanism = "subsampled-gaussian"\nn = 62500\nbatch_size = 250\nT = 1000\n'
                        'sigma = 1.1\nsampling = "uniform"\n')
        run = dpcalc("check", str(path), "--json")
        assert run.code == 0, run.stderr
        core = tight_epsilon([_phase(neighbours, steps=1000)], 1e-5)
        assert run.json()["result"]["total"]["epsilon"] >= core.epsilon_upper * (1 - 1e-12)
