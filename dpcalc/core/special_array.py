"""Log-space special functions on numpy arrays (numpy only: no scipy).

The vectorised counterparts of the scalar, math-only helpers in `dpcalc.core.special`, shared
by the PLD accountant (`pld.discretise`, `pld.pairs`) and the RDP accountant (`rdp`). The closed-form
commands must not import numpy, so the two modules stay apart. Where a formula here differs
from the scalar one (`log_expm1`), it is the formula the PLD pairs' error bounds were derived
for, and the PLD bounds are compared bit for bit: changing it would change them.

Each function is elementwise, takes float arrays (anything `np.asarray` makes one of; 0-d in
gives 0-d out, as numpy's ufuncs do) and handles the ends of its domain explicitly: the values
at 0, -inf and +inf are stated in its docstring, and an argument outside the domain, or nan,
gives nan (except in `log_sub`, which is clamped: see there). None of them emits a numpy
floating-point warning or error for any input: the PLD grid runs under
np.errstate(over="raise", divide="raise", invalid="raise"), so every intended inf, 0 or nan is
produced under a local np.errstate that ignores it.

Accuracy. u is the unit roundoff 2^-53 ~ 1.1e-16. For f(x_1, ..., x_n) the error is stated
against the condition scale |f| + sum_i |x_i df/dx_i|: the change in f that rounding each
input to float64 alone causes, per unit u. Where that scale is of the order of |f| the error is
relative; where f is near 0 because of a cancellation in its inputs (log_add(-1, log(e - 1)))
no float64 algorithm can be relative. Measured against mpmath at 50 digits (grids of the edge
cases and some thousands of random points, tests/core/test_special_array.py): every function
is within 1.7 u of its condition scale, plus 2^-1074 (one subnormal unit) where the result
underflows.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    ArrayLike = npt.ArrayLike

_LOG2 = math.log(2.0)

# Elementwise work on long arrays is done in pieces of this many values by the callers that
# bother (their temporaries stay in the processor's cache; the same floats).
CHUNK = 16384

__all__ = ["CHUNK", "finite_abs", "log1mexp", "log1p_exp", "log_add", "log_expm1", "log_slack", "log_sub"]


def finite_abs(x: ArrayLike) -> FloatArray:
    """|x| where x is finite, 0 where x is +-inf or nan (exact).

    For rounding slacks of the form c u (1 + |x|) added to a log value x: at x = -inf (a zero
    mass) the slack must stay finite, since -inf + inf would be nan.
    """
    x = np.asarray(x, dtype=float)
    out: FloatArray = np.where(np.isfinite(x), x, 0.0)
    return np.abs(out, out=out)  # (in place: the same values)


def log_slack(x: ArrayLike, unit: float) -> FloatArray:
    """unit (1 + |x|) for the finite x, unit where x is infinite (`finite_abs`), in one new array:
    the rounding slack of a log value x (`unit` a float such as 4 u); the same floats as
    `unit * (1.0 + finite_abs(x))`."""
    out = finite_abs(x)
    out += 1.0
    out *= unit
    return out


def log1mexp(x: ArrayLike) -> FloatArray:
    """log(1 - e^x) for x <= 0 (Maechler 2012, "Accurately computing log(1 - exp(-|a|))").

    log(-expm1(x)) for x > -log 2, log1p(-exp(x)) below: each branch avoids the cancellation of
    the other, and exp, expm1, log and log1p are each within an ulp of exact, so the error is
    relative: measured <= 1.6 u (~2e-16) wherever the result is a normal float64 (x >= -708);
    below, the result -e^x underflows like e^x itself.
    Ends: x = 0 -> -inf, x = -inf -> -0.0, x > 0 or nan -> nan.

    On a 1-d array each branch is evaluated at its own points only (in place; a branch that takes
    every point needs no gathering): the same values as both branches everywhere and a choice.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if x.ndim != 1:
            out: FloatArray = np.where(x > -_LOG2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))
            return out
        near = x > -_LOG2
        near_count = int(np.count_nonzero(near))
        if near_count == len(x):
            return _log_neg_expm1(x)
        if near_count == 0:
            return _log1p_neg_exp(x)
        out = np.empty_like(x)
        out[near] = _log_neg_expm1(x[near])
        far = ~near
        out[far] = _log1p_neg_exp(x[far])
    return out


def _log_neg_expm1(x: FloatArray) -> FloatArray:
    """log(-expm1(x)), in one new array (the caller ignores the floating-point flags)."""
    out: FloatArray = np.expm1(x)
    np.negative(out, out=out)
    return np.log(out, out=out)


def _log1p_neg_exp(x: FloatArray) -> FloatArray:
    """log1p(-exp(x)), in one new array (the caller ignores the floating-point flags)."""
    out: FloatArray = np.exp(x)
    np.negative(out, out=out)
    return np.log1p(out, out=out)


def log_add(a: ArrayLike, b: ArrayLike) -> FloatArray:
    """log(e^a + e^b), without overflow (numpy's logaddexp).

    Identity: max(a, b) + log1p(e^-|a - b|). Condition scale |f| + |a| w_a + |b| w_b with the
    weights w = e^(a - f), e^(b - f) in [0, 1], which add up to 1; measured error <= 1.6 u of it:
    relative (~2e-16) unless a negative max(a, b) and the log1p term in [0, log 2] nearly cancel.
    Ends: log_add(-inf, b) = b, log_add(+inf, b) = +inf (b not nan), log_add(-inf, -inf) = -inf;
    nan in -> nan out. Inputs of opposite signs near the largest float64 (whose difference
    overflows) give the correct max(a, b), without numpy's overflow flag.
    """
    with np.errstate(invalid="ignore", over="ignore"):
        return np.logaddexp(a, b)


def log_sub(log_a: ArrayLike, log_b: ArrayLike) -> FloatArray:
    """log(max(e^log_a - e^log_b, 0)): log(a - b) where a > b >= 0, -inf where a <= b.

    Identity: log_a + log1mexp(log_b - log_a). Rounding the difference d = log_b - log_a costs
    at most u |d| in d, which moves log1mexp(d) by u |d| / (e^|d| - 1) <= u. Condition scale
    |f| + |log_a| e^(log_a - f) + |log_b| e^(log_b - f), whose weights grow like 1/(a - b) as b
    approaches a (the cancellation is in the problem, not the method); measured error <= 1.6 u
    of it, which is relative (~2e-16) when b <= a/2 (log_b <= log_a - log 2) and f is not near 0.
    Unlike the scalar `special.log_sub`, which raises when b > a, this one is clamped: -inf
    wherever a <= b, including log_a = log_b = +-inf (inf - inf, which has no defined sign, is
    taken as 0). Ends: log_b = -inf -> log_a; log_a = +inf, log_b finite -> +inf;
    log_a = -inf -> -inf. A difference that overflows float64 (both near the largest float64,
    opposite signs) gives log_a or -inf, the correct limits. A nan argument gives -inf (the nan
    difference is read as a = b; nan only for log_a = nan, log_b = -inf), as the PLD code this
    was taken from does.
    """
    log_a = np.asarray(log_a, dtype=float)
    log_b = np.asarray(log_b, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        d = log_b - log_a
    if d.ndim != 1 or log_a.shape != d.shape or log_b.shape != d.shape:
        d = np.where(np.isnan(d), np.where(np.isneginf(log_b), -math.inf, 0.0), d)
        with np.errstate(invalid="ignore"):  # inf + log1mexp(0) = inf - inf where a = b = inf, discarded
            out: FloatArray = np.where(d < 0.0, log_a + log1mexp(np.minimum(d, 0.0)), -math.inf)
        return out
    # 1-d: the same values, log_a + log1mexp(d) evaluated where d < 0 only
    unknown = np.isnan(d)
    if unknown.any():
        d = np.where(unknown, np.where(np.isneginf(log_b), -math.inf, 0.0), d)
    below = d < 0.0
    below_count = int(np.count_nonzero(below))
    if below_count == len(d):
        out = log1mexp(d)
        np.add(log_a, out, out=out)
        return out
    out = np.full(d.shape, -math.inf)
    if below_count:
        out[below] = log_a[below] + log1mexp(d[below])
    return out


def log_expm1(x: ArrayLike) -> FloatArray:
    """log(e^x - 1) for x > 0, without overflow for large x.

    Identity: x + log(-expm1(-x)), i.e. x + log(1 - e^-x). Condition scale
    |f| + x e^x / (e^x - 1), which is about |f| for small x (f ~ log x) and for large x (f ~ x),
    but about 1.4 near x = log 2, where f crosses 0; measured error <= 1.6 u of it. So the error
    is relative (~2e-16) except near x = log 2, where it is absolute, <= 2.5e-16 (and the
    sum x + log(1 - e^-x) cancels there: log(expm1(x)), the scalar `special.log_expm1`'s form
    below x = 40, would stay relative, but the PLD pairs' error bounds were derived for this one).
    Ends: x = 0 -> -inf, x = +inf -> +inf, x < 0 or nan -> nan.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out: FloatArray = x + np.log(-np.expm1(-x))
    return out


def log1p_exp(x: ArrayLike) -> FloatArray:
    """log(1 + e^x) (softplus), without overflow for large x.

    Identity: x + log1p(e^-x) for x > 0 (no overflow), log1p(e^x) for x <= 0: sums of positive
    terms, or the log1p of a positive number, each operation within an ulp: the error is
    relative, measured <= 1.9 u (~2e-16).
    Ends: x = -inf -> 0, x = +inf -> +inf, nan -> nan. For x < -708 the result e^x is below
    the smallest normal float64 and carries a subnormal's reduced precision; it is 0 for
    x < -745, as e^x itself is in float64.
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore"):
        out: FloatArray = np.where(x > 0.0, x + np.log1p(np.exp(-np.abs(x))), np.log1p(np.exp(np.minimum(x, 0.0))))
    return out
