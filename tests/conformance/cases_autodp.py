"""autodp (yuxiangw/autodp, test/): the Poisson-sampled DP-SGD RDP table it checks against TensorFlow
Privacy, its noise calibrators and its Gaussian f-DP curve, as a user asks dpcalc."""

from __future__ import annotations

import math

import mpmath as mp

from tests.conformance import exact
from tests.conformance.case import Case, argv

PROJECT = "autodp"
SGD_TEST = "test/test_dp_sgd_poisson_sampling_add_remove.py"
CALIBRATOR_TEST = "test/unit_test_calibrator.py"
FDP_TEST = "test/unit_test_approxdp_to_fdp_conversion.py"
RDP_REL = 0.01  # rel_tol of test_RDP_values_lowerbound
CALIBRATOR_REL = 0.01  # tol of the calibrator tests
PLACES4 = 5e-5


def _src(file: str, test: str) -> str:
    return f"{PROJECT}, {file}, {test}"


CASES: list[Case] = []

# --- RDP of Poisson-sampled DP-SGD: the values autodp's test takes from TensorFlow Privacy ---
ORDERS = (1.25, 2.0, 2.25, 4.0, 4.5, 10.0, 25.0, 64.0, 128.0)
_ONE_STEP = {
    (0.01, 0.1): (39.47435359280898, 90.7896596280238, 104.21069366522143, 193.85977308534916,
                  219.07906690372957, 494.8831442377909, 1245.2029477229287, 3195.321731874551,
                  6395.3585686314445),
    (0.01, 0.25): (0.1103603174246269, 6.790784234628705, 9.710698228804564, 25.859773085349214,
                   30.079066903729597, 74.883144237791, 195.20294772292905, 507.3217318745518,
                   1019.3585686314451),
    (0.01, 0.5): (0.0018977736416478479, 0.005345502314345245, 0.0083541177519165, 1.8618755130319669,
                  3.0791796010526946, 14.883144237791036, 45.202947722929075, 123.32173187455179,
                  251.35856863144505),
    (0.2, 2.0): (0.006824777906499827, 0.011296964989239926, 0.012858854549446597, 0.02497156532232035,
                 0.028878485101326103, 0.09784245743693407, 1.459148041400704, 6.365016041204642,
                 14.377889348097982),
    (0.2, 10.0): (0.0002509008471776042, 0.0004019259003295167, 0.00045234870800072715,
                  0.0008064504053491498, 0.0009079912638877577, 0.002035935314438469,
                  0.005219181973251608, 0.014331998148967217, 0.03281124876177494),
}
# dpcalc differs where TensorFlow Privacy's fractional-order series (|binomial coefficients|) is loose
# by more than the 1% tolerance; the quadrature decides
_LOOSE: dict[tuple[float, float, float], str] = {}

_ORDER_LIST = ",".join(f"{o:g}" for o in ORDERS)
for (_q, _s), _values in _ONE_STEP.items():
    for _i, (_order, _value) in enumerate(zip(ORDERS, _values)):
        _why = _LOOSE.get((_q, _s, _order))
        CASES.append(Case(
            id=f"autodp-rdp-q{_q:g}-s{_s:g}-T1-order{_order:g}",
            source=_src(SGD_TEST, "test_RDP_values_lowerbound"),
            argv=argv(f"rdp --p {_q:g} --sigma {_s:g} --T 1 --orders {_ORDER_LIST} --no-tight"),
            key=f"result.curve.{_i}.rdp", expected=_value, rel=RDP_REL,
            differs=_why, exact=None if _why is None else (lambda q=_q, s=_s, o=_order: exact.subsampled_gaussian_rdp(q, s, o)),
        ))

# many steps: RDP composes linearly in T (Mironov 2017)
for _q, _s, _steps, _order, _value in (
    (0.01, 0.5, 10000, 2.0, 53.45502314345245),
    (0.01, 0.5, 10000, 4.5, 30791.796010526945),
    (0.2, 10.0, 10000, 1.25, 2.509008471776042),
    (0.2, 10.0, 10000, 128.0, 328.1124876177494),
    (0.2, 1.0, 1000, 1.25, 34.64231664770922),
    (0.2, 1.0, 1000, 10.0, 3212.2861197951906),
    (0.2, 2.0, 5000, 25.0, 7295.7402070035205),
    (0.01, 0.25, 5000, 2.25, 48553.49114402282),
):
    CASES.append(Case(
        id=f"autodp-rdp-q{_q:g}-s{_s:g}-T{_steps}-order{_order:g}",
        source=_src(SGD_TEST, "test_RDP_values_lowerbound"),
        argv=argv(f"rdp --p {_q:g} --sigma {_s:g} --T {_steps} --orders {_order:g} --no-tight"),
        key="result.curve.0.rdp", expected=_value, rel=RDP_REL,
    ))

# q = 1: the Gaussian mechanism, order / (2 sigma^2) per step
for _s, _steps in ((1.0, 1), (10.0, 1000)):
    _orders = (2.0, 2.5, 4.0, 4.5, 8.0, 8.5)
    for _i, _order in enumerate(_orders):
        CASES.append(Case(
            id=f"autodp-rdp-q1-s{_s:g}-T{_steps}-order{_order:g}",
            source=_src(SGD_TEST, "test_RDP_values_lowerbound"),
            argv=argv(f"rdp --p 1 --sigma {_s:g} --T {_steps} --orders {','.join(f'{o:g}' for o in _orders)} --no-tight"),
            key=f"result.curve.{_i}.rdp", expected=_steps * _order / (2 * _s * _s), rel=RDP_REL,
        ))

# q = 0: nothing is released about anyone, RDP 0 (dpcalc refuses p = 0 today)
for _s, _steps, _order in ((1.0, 1, 2.0), (1.0, 1000, 4.5), (10.0, 1, 8.5), (10.0, 1000, 2.5)):
    CASES.append(Case(
        id=f"autodp-rdp-q0-s{_s:g}-T{_steps}-order{_order:g}",
        source=_src(SGD_TEST, "test_RDP_values_lowerbound"),
        argv=argv(f"rdp --p 0 --sigma {_s:g} --T {_steps} --orders {_order:g} --no-tight"),
        key="result.curve.0.rdp", expected=0.0, abs=1e-12,
    ))

# --- calibrators: the noise that meets the exact Gaussian epsilon of sigma at delta gives sigma back ---
# (the test builds eps from autodp's exact Gaussian mechanism; here from its closed form in mpmath)
for _sigma in (1, 2, 4, 10, 26, 68):
    for _delta in (1e-3, 1e-6):
        _eps = exact.gaussian_eps(1 / _sigma, _delta)
        CASES.append(Case(
            id=f"autodp-calibrate-gaussian-s{_sigma}-delta{_delta:g}",
            source=_src(CALIBRATOR_TEST, "TestGaussianMechanism.test_single_para"),
            argv=argv(f"convert --from dp --eps {_eps!r} --delta {_delta:g} --to gaussian"),
            key="result.noise_std", expected=float(_sigma), rel=CALIBRATOR_REL,
        ))
for _sigma in (2, 26, 68):
    for _coeff in (10, 1000):
        _eps = exact.gaussian_eps(math.sqrt(_coeff) / _sigma, 1e-5)
        CASES.append(Case(
            id=f"autodp-calibrate-composed-gaussian-s{_sigma}-coeff{_coeff}",
            source=_src(CALIBRATOR_TEST, "TestGeneralizedMechanism.test_single_para"),
            argv=argv(f"convert --from dp --eps {_eps!r} --delta 1e-5 --to gaussian --sensitivity {math.sqrt(_coeff)!r}"),
            key="result.noise_std", expected=float(_sigma), rel=CALIBRATOR_REL,
            note="coeff Gaussian releases of noise sigma compose to one of sensitivity sqrt(coeff)",
        ))


# --- f-DP of the Gaussian mechanism: beta(alpha) = Phi(Phi^-1(1 - alpha) - 1/sigma), alpha on linspace(0, 1, 21) ---
def _beta(sigma: float, alpha: float) -> float:
    with mp.workdps(50):
        return float(mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * mp.mpf(alpha) - 1) - 1 / mp.mpf(sigma)))


for _sigma in (0.5, 1.0, 2.0, 5.0):
    for _index in (1, 4, 10, 16):
        CASES.append(Case(
            id=f"autodp-fdp-gaussian-s{_sigma:g}-alpha{_index / 20:g}",
            source=_src(FDP_TEST, "test_fdp_conversion"),
            argv=argv(f"convert --from gaussian --sigma {_sigma:g} --to tradeoff --points 21"),
            key=f"result.tradeoff.{_index}.beta", expected=_beta(_sigma, _index / 20), abs=PLACES4,
        ))
