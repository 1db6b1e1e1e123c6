"""OpenDP's accuracy helpers (opendp.accuracy) for Laplace noise: the two-sided accuracy a at level alpha
satisfies P(|noise| > a) = alpha, so a = b ln(1/alpha) (Dwork, Roth 2014, Fact 3.7), which
`dpcalc laplace-eps` answers with sensitivity 1 (epsilon = 1/b)."""

from __future__ import annotations

import math

from tests.conformance.case import AT_LEAST, AT_MOST, Case, argv

PROJECT = "OpenDP"
R_TEST = "R/opendp/tests/testthat/test-accuracy.R"
PY_TEST = "python/test/test_accuracy.py"
CLOSED_FORM = 1e-9  # the Python test prints the figures; the docs define them by the closed form

CASES: list[Case] = [
    Case(
        id="opendp-laplacian-scale-to-accuracy-bound",
        source=f"{PROJECT}, {R_TEST}, test_laplacian_scale_to_accuracy",
        argv=argv("laplace-eps --eps 1 --probability 0.95"),
        key="result.tolerance", expected=3.0, compare=AT_MOST,
    ),
    Case(
        id="opendp-accuracy-to-laplacian-scale-bound",
        source=f"{PROJECT}, {R_TEST}, test_accuracy_to_laplacian_scale",
        argv=argv("laplace-eps --tolerance 1 --probability 0.95"),
        key="result.scale", expected=0.334, compare=AT_MOST,
    ),
]
for _scale, _alpha in ((1.0, 0.05), (2.0, 0.05)):
    CASES.append(Case(
        id=f"opendp-laplacian-scale-to-accuracy-b{_scale:g}-alpha{_alpha:g}",
        source=f"{PROJECT}, {PY_TEST}, test_laplacian_scale_to_accuracy",
        argv=argv(f"laplace-eps --eps {1 / _scale!r} --probability {1 - _alpha:g}"),
        key="result.tolerance", expected=_scale * math.log(1 / _alpha), rel=CLOSED_FORM,
    ))
for _accuracy, _alpha in ((1.0, 0.05), (2.0, 0.05), (0.01, 0.1)):
    CASES.append(Case(
        id=f"opendp-accuracy-to-laplacian-scale-a{_accuracy:g}-alpha{_alpha:g}",
        source=f"{PROJECT}, {PY_TEST}, test_accuracy_to_laplacian_scale",
        argv=argv(f"laplace-eps --tolerance {_accuracy:g} --probability {1 - _alpha:g}"),
        key="result.scale", expected=_accuracy / math.log(1 / _alpha), rel=CLOSED_FORM,
    ))
# binary_search_param's docstring: the scale for accuracy 1000 at 95% confidence, then the smallest
# dataset size whose clipped mean (bounds [0, 500000], one record changed) is 1-DP at that scale: 1498
MOD = "python/src/opendp/mod.py"
CASES += [
    Case(
        id="opendp-doc-accuracy-1000-scale",
        source=f"{PROJECT}, {MOD}, binary_search_param docstring",
        argv=argv("laplace-eps --tolerance 1000 --probability 0.95"),
        key="result.scale", expected=1000 / math.log(20), rel=CLOSED_FORM,
    ),
    Case(
        id="opendp-doc-mean-size-1498-within",
        source=f"{PROJECT}, {MOD}, binary_search_param docstring",
        argv=argv(f"laplace-eps --tolerance 1000 --probability 0.95 --sensitivity {500000 / 1498!r}"),
        key="result.epsilon", expected=1.0, compare=AT_MOST,
    ),
    Case(
        id="opendp-doc-mean-size-1497-over",
        source=f"{PROJECT}, {MOD}, binary_search_param docstring",
        argv=argv(f"laplace-eps --tolerance 1000 --probability 0.95 --sensitivity {500000 / 1497!r}"),
        key="result.epsilon", expected=1.0, compare=AT_LEAST,
        note="one record fewer needs more than epsilon 1 (strictly: 1.00062)",
    ),
]
