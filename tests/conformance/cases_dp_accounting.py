"""dp_accounting (google/differential-privacy, python/dp_accounting): its RDP accountant, its PLD
privacy-loss mechanisms and its calibration and composition helpers, as a user asks dpcalc."""

from __future__ import annotations

import math

from tests.conformance import exact
from tests.conformance.case import AT_LEAST, AT_MOST, LOWER, REFUSED, Case, argv

PROJECT = "dp_accounting"
RDP_TEST = "dp_accounting/rdp/rdp_privacy_accountant_test.py"
MECH_TEST = "dp_accounting/pld/privacy_loss_mechanism_test.py"
ACC_TEST = "dp_accounting/pld/accountant_test.py"
PLACES7 = 5e-8  # assertAlmostEqual's default: equal when rounded to 7 decimals
PLACES3 = 5e-4
PLACES6 = 5e-7


def _src(file: str, test: str) -> str:
    return f"{PROJECT}, {file}, {test}"


CASES: list[Case] = []

# --- RDP of the Poisson-subsampled Gaussian, q 0.01, sigma 2.5, 50 steps (np.allclose, rtol 1e-4) ---
_ORDERS = (1.5, 2.5, 5, 50, 100)
_PUBLISHED = (6.70579741e-04, 1.08548710e-03, 2.18075656e-03, 2.38460375e-02, 1.67416308e02)
_LOOSE_1_5 = (
    "dp_accounting's fractional-order series sums |binomial coefficients| (an upper bound, 3% "
    "high here); dpcalc sums the signed series (Mironov, Talwar, Zhang 2019), which matches the "
    "quadrature of the Renyi divergence: 50 x 1.30014e-5 = 6.5007e-4"
)
for _i, (_order, _value) in enumerate(zip(_ORDERS, _PUBLISHED)):
    _differs = _LOOSE_1_5 if _order == 1.5 else None
    _exact = (lambda: 50 * exact.subsampled_gaussian_rdp(0.01, 2.5, 1.5)) if _order == 1.5 else None
    CASES.append(Case(
        id=f"dpa-rdp-sg-q0.01-s2.5-T50-order{_order}",
        source=_src(RDP_TEST, "test_compute_rdp_poisson_sampled_gaussian"),
        argv=argv("rdp --p 0.01 --sigma 2.5 --T 50 --orders 1.5,2.5,5,50,100 --no-tight"),
        key=f"result.curve.{_i}.rdp", expected=_value, rel=1e-4,
        differs=_differs, exact=_exact,
    ))

CASES += [
    Case(
        id="dpa-rdp-gaussian-order3.14159",
        source=_src(RDP_TEST, "test_compute_rdp_gaussian"),
        argv=argv("rdp --p 1 --sigma 2.71828 --T 1 --orders 3.14159 --no-tight"),
        key="result.curve.0.rdp", expected=3.14159 / (2 * 2.71828**2), abs=PLACES7,
    ),
    Case(
        id="dpa-rdp-composition-count6",
        source=_src(RDP_TEST, "test_rdp_composition"),
        argv=argv("rdp --p 1 --sigma 3.14159 --T 6 --orders 2.71828 --no-tight"),
        key="result.curve.0.rdp", expected=6 * 2.71828 / (2 * 3.14159**2), abs=PLACES7,
    ),
    Case(
        id="dpa-rdp-composition-heterogeneous",
        source=_src(RDP_TEST, "test_rdp_composition"),
        argv=argv("rdp --phase sigma=3.14159,T=1 --phase sigma=1.61803,T=1 --orders 2.71828 --no-tight"),
        key="result.curve.0.rdp", expected=2.71828 / (2 * 3.14159**2) + 2.71828 / (2 * 1.61803**2), abs=PLACES7,
    ),
    Case(
        id="dpa-rdp-multi-gaussian",
        source=_src(RDP_TEST, "test_compute_rdp_multi_gaussian"),
        argv=argv("rdp --phase sigma=2.71828,T=1 --phase sigma=6.28319,T=1 --orders 3.14159 --no-tight"),
        key="result.curve.0.rdp", expected=3.14159 / (2 * 2.71828**2) + 3.14159 / (2 * 6.28319**2), abs=PLACES7,
    ),
    # constant RDP 1.1 at orders 2..32: the optimum is order 32 (dp_accounting's own hand computation)
    Case(
        id="dpa-rdp-pure-epsilon",
        source=_src(RDP_TEST, "test_compute_epsilon_delta_pure_dp"),
        argv=argv("convert --from rdp --order 32 --rdp-eps 1.1 --to dp --delta 1e-5"),
        key="result.epsilon", expected=1.32783806176, abs=PLACES7,
    ),
    Case(
        id="dpa-rdp-pure-delta",
        source=_src(RDP_TEST, "test_compute_epsilon_delta_pure_dp"),
        argv=argv("convert --from rdp --order 32 --rdp-eps 1.1 --to dp --eps 1.32783806176"),
        key="result.delta", expected=1e-5, abs=PLACES7,
    ),
    # sigma 4.530877117 gives (1, 1e-6)-DP on orders 1, 1.001, ..., 99.999 (optimum at 21.985):
    # the same grid near the optimum as a comma list, and the peer's whole grid as a range
    Case(
        id="dpa-rdp-gaussian-epsilon-fine-orders",
        source=_src(RDP_TEST, "test_compute_epsilon_delta_gaussian"),
        argv=("rdp", "--p", "1", "--sigma", "4.530877117", "--T", "1", "--delta", "1e-6", "--no-tight",
              "--orders", ",".join(f"{i / 1000:.3f}" for i in range(21900, 22101))),
        key="result.epsilon", expected=1.0, abs=PLACES7,
    ),
    Case(
        id="dpa-rdp-gaussian-delta-fine-orders",
        source=_src(RDP_TEST, "test_compute_epsilon_delta_gaussian"),
        argv=("rdp", "--p", "1", "--sigma", "4.530877117", "--T", "1", "--eps", "1", "--no-tight",
              "--orders", ",".join(f"{i / 1000:.3f}" for i in range(21900, 22101))),
        key="result.delta", expected=1e-6, abs=PLACES7,
    ),
    Case(
        id="dpa-rdp-gaussian-epsilon-orders-range",
        source=_src(RDP_TEST, "test_compute_epsilon_delta_gaussian"),
        argv=argv("rdp --p 1 --sigma 4.530877117 --T 1 --delta 1e-6 --orders 1.001:99.999:0.001 --no-tight"),
        key="result.epsilon", expected=1.0, abs=PLACES7,
    ),
]

# RDP-derived delta of the Gaussian (sigma 1, orders 1 to 50.4 by 0.1) lies between the exact delta
# (Balle, Wang 2018, Thm 8) and the "standard" bound exp(-(eps - 0.5)^2 / 2)
for _eps in (1.0, 2.0, 5.0):
    _orders = ",".join(f"{x / 10:g}" for x in range(11, 505))
    _cmd = ("rdp", "--p", "1", "--sigma", "1", "--T", "1", "--eps", f"{_eps:g}", "--no-tight", "--orders", _orders)
    CASES += [
        Case(
            id=f"dpa-rdp-gaussian-delta-eps{_eps:g}-above-exact",
            source=_src(RDP_TEST, "test_delta_bounds_gaussian"),
            argv=_cmd, key="result.delta", expected=exact.gaussian_delta(1.0, _eps), compare=AT_LEAST,
        ),
        Case(
            id=f"dpa-rdp-gaussian-delta-eps{_eps:g}-below-standard",
            source=_src(RDP_TEST, "test_delta_bounds_gaussian"),
            argv=_cmd, key="result.delta", expected=math.exp(-0.5 * (_eps - 0.5) ** 2), compare=AT_MOST,
        ),
    ]

# Laplace at a huge order simulates pure DP: epsilon at delta 1e-10 is eps * count (places 7)
for _eps, _count in ((0.01, 1), (1.0, 1), (100.0, 1), (1.0, 100)):
    CASES.append(Case(
        id=f"dpa-rdp-laplace-eps{_eps:g}-count{_count}-order1e10",
        source=_src(RDP_TEST, "test_laplace"),
        argv=argv(f"rdp --mechanism laplace --scale {1 / _eps!r} --T {_count} --orders 1e10 --delta 1e-10 --no-tight"),
        key="result.epsilon", expected=_eps * _count, abs=PLACES7,
    ))

# the same question to the PLD accountant: one Laplace step's epsilon at delta 1e-10 is its pure epsilon
# (to 2e-10); dpcalc's certified upper bound must not exceed that sound figure
for _eps in (0.01, 1.0, 100.0):
    CASES.append(Case(
        id=f"dpa-pld-laplace-eps{_eps:g}-delta1e-10",
        source=_src(RDP_TEST, "test_laplace"),
        argv=argv(f"pld --mechanism laplace --scale {1 / _eps!r} --T 1 --delta 1e-10"),
        key="result.epsilon", expected=_eps, abs=PLACES7,
    ))

# --- PLD privacy-loss mechanisms: delta(eps) of one Laplace step (assertAlmostEqual, places 7) ---
# (parameter b, sensitivity, sampling probability, eps, expected delta); with q < 1 the published
# value is the larger of the add and remove figures, which is what dpcalc's add-remove answers.
_LAPLACE = (
    (1.0, 1.0, 1.0, 1.0, 0.0),
    (3.0, 3.0, 1.0, 1.0, 0.0),
    (2.0, 4.0, 1.0, 2.0, 0.0),
    (2.0, 4.0, 1.0, 0.5, 0.52763345),
    (1.0, 1.0, 1.0, 0.0, 0.39346934),
    (2.0, 2.0, 1.0, 0.0, 0.39346934),
    (2.0, 4.0, 1.0, 1.0, 0.3934693403),
    (2.0, 4.0, 0.8, 0.5, 0.4039564635032081),
    (1.0, 1.0, 0.6, 0.2, 0.1741992102060086),
    (2.0, 2.0, 0.3, 0.0, 0.1180408020862099),
    (5.0, 5.0, 0.2, 2.0, 0.0),
    (1.0, 1.0, 0.2, 0.1, 0.05015600993),
    (1.0, 1.0, 0.2, 0.2, 0.02391739939),
)
# dpcalc's certified upper bound on delta, at --accuracy 1e-6, must equal the exact figure to the peer's
# tolerance. Where the exact delta is 0 (eps at or above the pure epsilon) dpcalc certifies exactly 0
# (one unsubsampled release is answered by its exact profile).
_SLOW_PLD = {(2.0, 4.0, 0.8, 0.5), (1.0, 1.0, 0.6, 0.2), (1.0, 1.0, 0.2, 0.1), (1.0, 1.0, 0.2, 0.2), (1.0, 1.0, 0.2, 0.0),
             (5.0, 5.0, 0.2, 2.0)}
for _b, _sens, _q, _eps, _delta in _LAPLACE:
    _name = f"b{_b:g}-sens{_sens:g}-q{_q:g}-eps{_eps:g}"
    _zero = _q == 1.0 and _eps >= _sens / _b
    _vector = (_b, _sens, _q, _eps) in {(2.0, 4.0, 1.0, 1.0), (1.0, 1.0, 0.2, 0.1), (1.0, 1.0, 0.2, 0.2)}
    CASES.append(Case(
        id=f"dpa-pld-laplace-delta-{_name}",
        source=_src(MECH_TEST, "test_laplace_get_delta_for_epsilon" + ("_vectorized" if _vector else "")),
        argv=argv(f"pld --mechanism laplace --scale {_b / _sens!r} --p {_q:g} --T 1 --eps {_eps:g}"
                  + ("" if _zero else " --accuracy 1e-6")),
        key="result.delta", expected=_delta, abs=PLACES7,
        slow=(_b, _sens, _q, _eps) in _SLOW_PLD,
    ))
    if _q == 1.0:
        CASES.append(Case(
            id=f"dpa-convert-laplace-delta-{_name}",
            source=_src(MECH_TEST, "test_laplace_get_delta_for_epsilon" + ("_vectorized" if _vector else "")),
            argv=argv(f"convert --from laplace --scale {_b:g} --sensitivity {_sens:g} --to dp --eps {_eps:g}"),
            key="result.delta", expected=_delta, abs=PLACES7,
        ))

# --- delta(eps) of one Gaussian step (places 7) ---
_GAUSSIAN = (
    (1.0, 1.0, 1.0, 1.0, 0.12693674),
    (2.0, 2.0, 1.0, 1.0, 0.12693674),
    (1.0, 3.0, 1.0, 1.0, 0.78760074),
    (2.0, 6.0, 1.0, 1.0, 0.78760074),
    (1.0, 1.0, 1.0, 2.0, 0.02092364),
    (5.0, 5.0, 1.0, 2.0, 0.02092364),
    (1.0, 1.0, 1.0, 0.0, 0.38292492),
    (1.0, 1.0, 0.8, 1.0, 0.0816951786585355),
    (1.0, 3.0, 0.7, 1.0, 0.5356298793262404),
    (2.0, 6.0, 0.4, 1.0, 0.2888308005139968),
    (1.0, 1.0, 0.3, 2.0, 0.0003341102928869332),
    (1.0, 1.0, 0.2, 0.0, 0.076584985),
    (1.0, 1.0, 0.2, 0.1, 0.051816131),
    (1.0, 1.0, 0.2, 0.2, 0.035738492),
    (1.0, 1.0, 0.2, 0.5, 0.012494629),
    (1.0, 1.0, 0.2, 1.0, 0.00229682),
)
for _s, _sens, _q, _eps, _delta in _GAUSSIAN:
    _name = f"s{_s:g}-sens{_sens:g}-q{_q:g}-eps{_eps:g}"
    _test = "test_gaussian_get_delta_for_epsilon" + ("_vectorized" if _q == 0.2 or _eps == 0.0 else "")
    if _q == 1.0:
        CASES.append(Case(
            id=f"dpa-convert-gaussian-delta-{_name}",
            source=_src(MECH_TEST, _test),
            argv=argv(f"convert --from gaussian --noise-std {_s:g} --sensitivity {_sens:g} --to dp --eps {_eps:g}"),
            key="result.delta", expected=_delta, abs=PLACES7,
        ))
        CASES.append(Case(
            id=f"dpa-pld-gaussian-delta-{_name}",
            source=_src(MECH_TEST, _test),
            argv=argv(f"pld --p 1 --sigma {_s / _sens!r} --T 1 --eps {_eps:g}"),
            key="result.delta", expected=_delta, abs=PLACES7,
        ))
    else:
        # the certified width (accuracy times delta) within the 7 places compared: 1e-6 was 3e-7 wide at
        # delta 0.29, and its upper bound 6e-8 above the exact value on one choice of grid
        _accuracy = min(1e-6, PLACES7 / _delta)
        CASES.append(Case(
            id=f"dpa-pld-gaussian-delta-{_name}",
            source=_src(MECH_TEST, _test),
            argv=argv(f"pld --p {_q:g} --sigma {_s / _sens!r} --T 1 --eps {_eps:g} --accuracy {_accuracy:.2g}"),
            key="result.delta", expected=_delta, abs=PLACES7, slow=(_s, _sens, _q, _eps) in _SLOW_PLD,
        ))

# --- the Gaussian noise for a privacy guarantee (assertAlmostEqual places 3) ---
# (sensitivity, eps, delta, expected standard deviation); one step, no subsampling
for _sens, _eps, _delta, _std in (
    (1.0, 1.0, 0.12693674, 1.0), (2.0, 1.0, 0.12693674, 2.0), (3.0, 1.0, 0.78760074, 1.0),
    (6.0, 1.0, 0.78760074, 2.0), (1.0, 2.0, 0.02092364, 1.0), (5.0, 2.0, 0.02092364, 5.0),
    (1.0, 16.0, 1e-5, 0.344), (2.0, 16.0, 1e-5, 0.688),
):
    CASES.append(Case(
        id=f"dpa-gaussian-std-sens{_sens:g}-eps{_eps:g}-delta{_delta:g}",
        source=_src(MECH_TEST, "test_gaussian_from_privacy_parameters"),
        argv=argv(f"convert --from dp --eps {_eps:g} --delta {_delta!r} --to gaussian --sensitivity {_sens:g}"),
        key="result.noise_std", expected=_std, abs=PLACES3,
    ))
# subsampled, remove adjacency (binding for these): the noise multiplier std / sensitivity
for _sens, _q, _eps, _delta, _std in (
    (1.0, 0.1, 2.0, 2.355186318853955e-6, 1.0), (5.0, 0.75, 2.0, 0.0087720149, 5.0),
    (1.0, 0.3, 16.0, 0.0000329405, 0.3), (2.0, 0.2, 16.0, 0.0230238234, 0.4),
):
    CASES.append(Case(
        id=f"dpa-subsampled-gaussian-std-q{_q:g}-eps{_eps:g}",
        source=_src(MECH_TEST, "test_gaussian_from_privacy_parameters"),
        argv=argv(f"calibrate --target-eps {_eps:g} --delta {_delta!r} --p {_q:g} --T 1 --precision 1e-6"),
        key="result.sigma", expected=_std / _sens, abs=PLACES3 / _sens, slow=_eps == 16.0,
        note="sensitivity folded into the noise multiplier (std / sensitivity)",
    ))

# the Laplace scale for (eps, delta): dp_accounting returns the pure-DP scale Delta/eps and ignores delta
for _sens, _eps, _delta, _scale in ((1.0, 1.0, 0.1, 1.0), (2.0, 1.0, 0.01, 2.0), (1.0, 3.0, 0.01, 0.33333333)):
    CASES.append(Case(
        id=f"dpa-laplace-scale-sens{_sens:g}-eps{_eps:g}-delta{_delta:g}",
        source=_src(MECH_TEST, "test_laplace_from_privacy_parameters"),
        argv=argv(f"convert --from dp --eps {_eps:g} --delta {_delta:g} --to laplace --sensitivity {_sens:g}"),
        key="result.scale", expected=_scale, abs=PLACES7,
        differs=(
            "the smallest Laplace scale with delta(eps) <= delta is Delta / (eps - 2 ln(1 - delta)) "
            "(the Laplace privacy profile), below the pure-DP scale Delta/eps that dp_accounting returns"
        ),
        exact=(lambda s=_sens, e=_eps, d=_delta: s / (e - 2 * math.log1p(-d))),
    ))
CASES.append(Case(
    id="dpa-laplace-scale-pure",
    source=_src(MECH_TEST, "test_laplace_from_privacy_parameters"),
    argv=argv("convert --from dp --eps 1 --to laplace"),
    key="result.scale", expected=1.0, abs=PLACES7,
))

# --- accountant helpers (pld/accountant_test.py) ---
CASES += [
    Case(
        id="dpa-smallest-laplace-noise-basic",
        source=_src(ACC_TEST, "test_get_smallest_laplace_noise"),
        argv=argv("convert --from dp --eps 0.3 --to laplace --sensitivity 21"),
        key="result.scale", expected=70.0, abs=0.1,
        note="10 queries within (3, 0): basic composition is optimal at delta 0, so eps 0.3 each",
    ),
]
for _sens, _k, _scale in ((1.0, 20, 13.6), (0.5, 20, 6.8), (1.0, 500, 71.0)):
    CASES.append(Case(
        id=f"dpa-smallest-laplace-noise-k{_k}-sens{_sens:g}",
        source=_src(ACC_TEST, "test_get_smallest_laplace_noise"),
        argv=argv(f"calibrate --mechanism laplace --sensitivity {_sens:g} --T {_k} --target-eps 1 --delta 1e-4"),
        key="result.scale", expected=_scale, abs=0.1,
    ))
CASES += [
    Case(
        id="dpa-smallest-gaussian-noise-base",
        source=_src(ACC_TEST, "test_get_smallest_gaussian_noise"),
        argv=argv("convert --from dp --eps 1 --delta 0.78760074 --to gaussian"),
        key="result.noise_std", expected=1 / 3, abs=PLACES7,
    ),
    Case(
        id="dpa-smallest-gaussian-noise-k25-sens6",
        source=_src(ACC_TEST, "test_get_smallest_gaussian_noise"),
        argv=argv("convert --from dp --eps 1 --delta 0.78760074 --to gaussian --sensitivity 30"),
        key="result.noise_std", expected=10.0, abs=PLACES7,
        note="25 Gaussian queries of sensitivity 6 compose to one of sensitivity 6 sqrt(25) = 30",
    ),
    Case(
        id="dpa-smallest-subsampled-gaussian-noise-base",
        source=_src(ACC_TEST, "test_get_smallest_subsampled_gaussian_noise"),
        argv=argv("calibrate --target-eps 1 --delta 1e-5 --p 0.01 --T 1 --precision 1e-9"),
        key="result.sigma", expected=0.67379294682, abs=PLACES7,
        differs=(
            "dp_accounting's PLD discretises pessimistically, so its noise is 5e-8 more than needed; the "
            "closed form of one subsampled-Gaussian step (normal tails of the monotone loss) gives "
            "0.673792893, which dpcalc meets to its precision from above"
        ),
        exact=(lambda: exact.subsampled_gaussian_sigma(0.01, 1.0, 1e-5)), exact_rel=2e-9,
    ),
    # 25 queries, sensitivity 6, q 0.001: the published noise std 3.20956502598 gives epsilon 1 at 1e-5
    Case(
        id="dpa-smallest-subsampled-gaussian-noise-k25", slow=True,
        source=_src(ACC_TEST, "test_get_smallest_subsampled_gaussian_noise"),
        argv=argv(f"pld --p 0.001 --sigma {3.20956502598 / 6!r} --T 25 --delta 1e-5 --accuracy 1e-6"),
        key="result.epsilon_upper", key_lower="result.epsilon_lower", compare=AT_MOST, expected=1.0, abs=PLACES7,
        note="sensitivity 6 folded into the noise multiplier (std / 6); dp_accounting's PLD is pessimistic, "
             "so at its noise the certified epsilon is at or below the target",
    ),
    Case(
        id="dpa-smallest-subsampled-gaussian-noise-k25-sensitivity", slow=True,
        source=_src(ACC_TEST, "test_get_smallest_subsampled_gaussian_noise"),
        argv=argv("pld --p 0.001 --noise-std 3.20956502598 --sensitivity 6 --T 25 --delta 1e-5 --accuracy 1e-6"),
        key="result.epsilon_upper", key_lower="result.epsilon_lower", compare=AT_MOST, expected=1.0, abs=PLACES7,
        note="the published noise std and sensitivity as given: dpcalc divides them (sigma = std / sensitivity)",
    ),
    # optimal composition (Kairouz, Oh, Viswanath 2015), assertAlmostEqual places 7
    Case(
        id="dpa-advanced-composition-basic",
        source=_src(ACC_TEST, "test_advanced_composition"),
        argv=argv("advanced-composition --eps 1 --k 30"),
        key="result.basic.epsilon", expected=30.0, abs=PLACES7,
    ),
    Case(
        id="dpa-advanced-composition-delta0.06",
        source=_src(ACC_TEST, "test_advanced_composition"),
        argv=argv("advanced-composition --eps 1 --delta 0.001 --k 30 --total-delta 0.06"),
        key="result.optimal.epsilon", expected=22.0, abs=PLACES7,
        differs=(
            "dp_accounting answers only on the grid (k - 2i) eps of KOV Thm 3.3; the exact optimum "
            "between grid points is 21.7096"
        ),
        exact=(lambda: exact.kov_eps(0.06, 1.0, 0.001, 30)), exact_rel=1e-8,
    ),
    Case(
        id="dpa-advanced-composition-delta0.1",
        source=_src(ACC_TEST, "test_advanced_composition"),
        argv=argv("advanced-composition --eps 1 --delta 0.001 --k 30 --total-delta 0.1"),
        key="result.optimal.epsilon", expected=20.0, abs=PLACES7,
        differs="dp_accounting answers only on the grid (k - 2i) eps; the exact optimum lies between",
        exact=(lambda: exact.kov_eps(0.1, 1.0, 0.001, 30)), exact_rel=1e-8,
    ),
    Case(
        id="dpa-advanced-composition-total-delta-too-small",
        source=_src(ACC_TEST, "test_advanced_composition"),
        argv=argv("advanced-composition --eps 1 --delta 0.2 --k 1 --total-delta 0.1"),
        key="", expected=0.0, compare=REFUSED,
    ),
    Case(
        id="dpa-advanced-composition-total-delta-too-small2",
        source=_src(ACC_TEST, "test_advanced_composition"),
        argv=argv("advanced-composition --eps 1 --delta 0.01 --k 30 --total-delta 0.26"),
        key="", expected=0.0, compare=REFUSED,
    ),
    Case(
        id="dpa-smallest-epsilon-basic",
        source=_src(ACC_TEST, "test_get_smallest_epsilon_from_advanced_composition"),
        argv=argv("advanced-composition --target-eps 30 --k 30"),
        key="result.basic.max_eps_per_mechanism", expected=1.0, abs=PLACES6,
    ),
    Case(
        id="dpa-smallest-epsilon-delta0.06",
        source=_src(ACC_TEST, "test_get_smallest_epsilon_from_advanced_composition"),
        argv=argv("advanced-composition --target-eps 22 --k 30 --delta 0.001 --total-delta 0.06"),
        key="result.optimal.max_eps_per_mechanism", expected=1.0, abs=PLACES6, sound=LOWER,
        differs=(
            "on dp_accounting's grid 22 is reached at eps 1; the exact KOV optimum allows each "
            "mechanism 1.0109 within (22, 0.06)"
        ),
        exact=(lambda: exact.kov_max_eps(22.0, 0.06, 0.001, 30)), exact_rel=1e-8,
    ),
    Case(
        id="dpa-smallest-epsilon-delta0.01-k50",
        source=_src(ACC_TEST, "test_get_smallest_epsilon_from_advanced_composition"),
        argv=argv("advanced-composition --target-eps 5 --k 50 --total-delta 0.01"),
        key="result.optimal.max_eps_per_mechanism", expected=0.25, abs=PLACES6, sound=LOWER,
        differs="the exact KOV optimum allows each mechanism slightly more than dp_accounting's grid point 0.25",
        exact=(lambda: exact.kov_max_eps(5.0, 0.01, 0.0, 50)), exact_rel=1e-8,
    ),
    Case(
        id="dpa-smallest-epsilon-total-delta-too-small",
        source=_src(ACC_TEST, "test_get_smallest_epsilon_from_advanced_composition"),
        argv=argv("advanced-composition --target-eps 1 --k 1 --delta 0.2 --total-delta 0.1"),
        key="", expected=0.0, compare=REFUSED,
    ),
    Case(
        id="dpa-smallest-epsilon-total-delta-too-small2",
        source=_src(ACC_TEST, "test_get_smallest_epsilon_from_advanced_composition"),
        argv=argv("advanced-composition --target-eps 30 --k 30 --delta 0.01 --total-delta 0.26"),
        key="", expected=0.0, compare=REFUSED,
    ),
]
