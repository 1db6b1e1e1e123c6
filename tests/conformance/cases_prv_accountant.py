"""prv_accountant (microsoft/prv_accountant, tests/): its analytic Gaussian checks and its noise search,
as a user asks dpcalc."""

from __future__ import annotations

import math

from tests.conformance import exact
from tests.conformance.case import AT_LEAST, AT_MOST, WITHIN, Case, argv

PROJECT = "prv_accountant"
ACC_TEST = "tests/test_accountant.py"
DPSGD_TEST = "tests/test_dpsgd.py"

CASES: list[Case] = []

# sigma 100, p 1: T steps are exactly mu-GDP with mu = sqrt(T)/100; delta at eps 4 (closed form)
for _T in (10_000, 10_001, 10_002):
    _mu = math.sqrt(_T) / 100
    _delta = exact.gaussian_delta(_mu, 4.0)
    CASES += [
        Case(
            id=f"prv-gaussian-homogeneous-T{_T}-pld",
            source=f"{PROJECT}, {ACC_TEST}, test_gaussian_mechanism_analytic_homogeneous",
            argv=argv(f"pld --p 1 --sigma 100 --T {_T} --eps 4"),
            key="result.delta_upper", key_lower="result.delta_lower", compare=WITHIN, expected=_delta,
        ),
        Case(
            id=f"prv-gaussian-homogeneous-T{_T}-exact",
            source=f"{PROJECT}, {ACC_TEST}, test_gaussian_mechanism_analytic_homogeneous",
            argv=argv(f"gdp --mu {_mu!r} --eps 4"),
            key="result.delta", expected=_delta, rel=1e-9,
            note="the peer checks containment in its own interval; the exact figure to closed-form precision",
        ),
    ]
CASES += [
    Case(
        id="prv-dpsgd-analytic-solution",
        source=f"{PROJECT}, {ACC_TEST}, TestDPSGDAccountant.test_analytic_solution",
        argv=argv("pld --p 1 --sigma 100 --T 10000 --eps 4"),
        key="result.delta", expected=exact.gaussian_delta(1.0, 4.0), rel=1e-3,
    ),
    Case(
        id="prv-gaussian-heterogeneous-pld",
        source=f"{PROJECT}, {ACC_TEST}, test_gaussian_mechanism_analytic_heterogeneous",
        argv=argv("pld --phase p=1,sigma=10,T=50 --phase p=1,sigma=5,T=50 --eps 4"),
        key="result.delta_upper", key_lower="result.delta_lower", compare=WITHIN,
        expected=exact.gaussian_delta(math.sqrt(50 / 10**2 + 50 / 5**2), 4.0),
    ),
    Case(
        id="prv-gaussian-heterogeneous-exact",
        source=f"{PROJECT}, {ACC_TEST}, test_gaussian_mechanism_analytic_heterogeneous",
        argv=argv(f"convert --from gdp --mu {math.sqrt(2.5)!r} --to dp --eps 4"),
        key="result.delta", expected=exact.gaussian_delta(math.sqrt(2.5), 4.0), rel=1e-9,
    ),
    # find_noise_multiplier: q 2e-3, 10000 steps, (4, 1e-7)
    Case(
        id="prv-find-noise-multiplier-range-above",
        source=f"{PROJECT}, {DPSGD_TEST}, TestFindNoiseMultiplier.test_sensible_range",
        argv=argv("calibrate --target-eps 4 --delta 1e-7 --p 2e-3 --T 10000"),
        key="result.sigma", expected=0.0, compare=AT_LEAST,
    ),
    Case(
        id="prv-find-noise-multiplier-range-below",
        source=f"{PROJECT}, {DPSGD_TEST}, TestFindNoiseMultiplier.test_sensible_range",
        argv=argv("calibrate --target-eps 4 --delta 1e-7 --p 2e-3 --T 10000"),
        key="result.sigma", expected=2.0, compare=AT_MOST,
    ),
    Case(
        id="prv-find-noise-multiplier-inverse",
        source=f"{PROJECT}, {DPSGD_TEST}, TestFindNoiseMultiplier.test_inverse",
        argv=argv("calibrate --target-eps 4 --delta 1e-7 --p 2e-3 --T 10000"),
        key="result.certified_epsilon", expected=4.0, abs=0.5,
    ),
    Case(
        id="prv-find-noise-multiplier-robustness", slow=True,
        source=f"{PROJECT}, {DPSGD_TEST}, TestFindNoiseMultiplier.test_robustness",
        argv=argv(f"calibrate --target-eps 10 --delta 1e-5 --p {256 / 50_000!r} --T {int(50 * 50_000 / 256)}"),
        key="result.certified_epsilon", expected=10.0, compare=AT_MOST,
    ),
    Case(
        id="prv-find-noise-multiplier-robustness-2",
        source=f"{PROJECT}, {DPSGD_TEST}, TestFindNoiseMultiplier.test_robustness_2",
        argv=argv("calibrate --target-eps 4 --delta 0.00011448277499759097 --p 0.26058631921824105 --T 18800"),
        key="result.certified_epsilon", expected=4.0, compare=AT_MOST,
    ),
]
