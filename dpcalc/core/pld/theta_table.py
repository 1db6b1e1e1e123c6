"""The bounds on E[e^(-theta S)] that an upper measure carries (S6 of docs/pld-soundness.md:
they certify what a lower truncation drops and what an upper one moves to +inf), computed from
one step's discretised upper measure (`discretise`)."""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.measure import THETAS, Tilted
from dpcalc.core.special_array import CHUNK

# Weights below e^-700 of the largest are not summed one by one (e^-708.4 is the smallest
# normal float64); their total is bounded by _EXP_REST times the measure's mass instead.
_EXP_CUTOFF = 700.0
_EXP_REST = math.exp(-_EXP_CUTOFF)


def theta_table(measure: Tilted) -> np.ndarray:
    """log of upper bounds on E[e^(-theta S)] of an upper measure for theta in THETAS (S6).

    The stored t differs from the exact measure by at most err in L1 (tilted units); one
    tilted unit at s weighs exp(log_z - (lam + theta) s) in E[e^(-theta S)], so err times the
    largest weight is added.

    The losses are the uniform grid (k0 + i) h, so for each theta the largest weight sits at one
    end, and only points within _EXP_CUTOFF of it in the exponent are summed; every other weight,
    divided by the largest, is below e^-700, so together they add at most e^-700 (1 + err) to the
    sum, which is added. The terms t e^(exponent) are summed in log space, those below e^-700
    times the largest dropped and bounded by e^-700 times it each: every exponential and product
    stays a normal float (a subnormal one costs ~100 times as much on x86: products of tiny
    masses with tiny weights made repeated in-process calls of the design card take 0.1 to 0.4 s,
    now 0.1 to 0.2 s), and for large theta it sums a few points instead of the whole grid.

    The elementwise work of a theta is done in pieces of CHUNK points (their temporaries stay in
    the processor's cache), each point seeing the operations of the formulas in the comments in
    that order; the sum of the kept terms is one sum over them all, as the plain expressions form
    it (numpy's pairwise order depends on the length), so the floats are those of the plain code.
    """
    s = measure.losses
    count = len(measure.t)
    log_sums = np.empty(len(THETAS))
    tops = np.empty(len(THETAS))
    rests = np.zeros(len(THETAS))
    buffer = np.empty(count)
    positive = measure.t > 0.0
    with np.errstate(divide="ignore"):
        log_t = np.log(np.where(positive, measure.t, 0.0))
    # log t is -inf exactly where t is not positive, and finite elsewhere. When those points lie
    # at the ends only, every other term is finite and the test "term >= largest - cutoff" keeps
    # a contiguous run of them whenever the smallest finite one passes it (below)
    where_positive = np.flatnonzero(positive)
    first, last = (int(where_positive[0]), int(where_positive[-1]) + 1) if len(where_positive) else (0, 0)
    ends_only = len(where_positive) == last - first
    with np.errstate(divide="ignore"):
        for index, rate in enumerate((measure.lam + THETAS).tolist()):
            lo, hi = 0, count
            if rate * measure.h > 0.0:  # largest weight at the low end
                hi = min(count, math.floor(_EXP_CUTOFF / (rate * measure.h)) + 1)
            elif rate * measure.h < 0.0:  # at the high end
                lo = max(0, count - 1 - math.floor(_EXP_CUTOFF / (-rate * measure.h)))
            # exponent = log_z - rate s: the losses increase and each rounded operation is
            # monotone, so its largest value is at an end (the two ends by the same operations)
            ends = np.subtract(measure.log_z, np.multiply(rate, s[[lo, hi - 1]]))
            top = max(float(ends[0]), float(ends[1]))
            if (lo, hi) != (0, count):
                rests[index] = _EXP_REST * (1.0 + measure.err)
            # terms = log_t + ((log_z - rate s) - top), the log of t e^(exponent - top), at
            # most log t; in `buffer`, a piece at a time, with the largest and, over the
            # finite run [a, b), the smallest
            terms = buffer[: hi - lo]
            a, b = max(lo, first), min(hi, last)
            maxima, minima = [], []  # of the pieces (reduced by numpy: a nan would propagate)
            for start in range(lo, hi, CHUNK):
                stop = min(start + CHUNK, hi)
                part = np.multiply(rate, s[start:stop], out=buffer[start - lo : stop - lo])
                np.subtract(measure.log_z, part, out=part)
                np.subtract(part, top, out=part)
                np.add(log_t[start:stop], part, out=part)
                maxima.append(part.max())
                if ends_only and max(start, a) < min(stop, b):
                    minima.append(part[max(start, a) - start : min(stop, b) - start].min())
            largest = float(np.max(maxima))
            if math.isfinite(largest):
                cutoff = largest - _EXP_CUTOFF
                if ends_only and a < b and float(np.min(minima)) >= cutoff:
                    # kept: exactly the finite run [a, b) (the others are -inf)
                    kept_count = b - a
                    selected = terms[a - lo : b - lo]
                else:
                    kept = terms >= cutoff
                    kept_count = int(np.count_nonzero(kept))
                    selected = terms if kept_count == len(terms) else terms[kept]
                # exp(selected - largest), in place, a piece at a time; then one sum
                for start in range(0, len(selected), CHUNK):
                    part = selected[start : start + CHUNK]
                    np.exp(np.subtract(part, largest, out=part), out=part)
                inner = float(selected.sum()) + (len(terms) - kept_count) * _EXP_REST
                log_sums[index] = largest + math.log(inner)
            else:
                log_sums[index] = -math.inf
            tops[index] = top
        # (elementwise, the same floats as one theta at a time)
        values = np.logaddexp(log_sums, np.log(measure.err + rests)) + tops
    return values + 1e-12
