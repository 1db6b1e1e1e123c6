"""Truncation: a measure's window cut to where it matters; the top moved to +inf (upper
measures, S3 of docs/pld-soundness.md) and the bottom dropped with a certified bound on what
it weighed (S6).
"""

from __future__ import annotations

import math

import numpy as np

from dpcalc.core.pld.measure import LOWER_THETAS, THETAS, UPPER_THETAS, Tilted, U, renormalise, replace

# Tilted weight the lower bound may drop at its lower end per truncation (before dividing by
# the multiplicity): it lowers delta_lower by at most this part of the Chernoff bound.
_LOWER_DROP = 1e-8

class _LogMassFrom:
    """log of an upper bound on the untilted mass at or above c, by Chernoff over theta < 0:
    P(S >= c) <= e^(theta c) E[e^(-theta S)], with a margin for the rounding of the sum; the
    table's parts for theta < 0 taken once for the many points a truncation asks about."""

    def __init__(self, log_theta_mgf: np.ndarray) -> None:
        self.theta = THETAS[UPPER_THETAS]
        self.mgf = log_theta_mgf[UPPER_THETAS]
        self.size = np.abs(self.mgf)

    def __call__(self, c: float) -> float:
        spread = self.theta * c
        values = spread + self.mgf
        values = values + 4.0 * U * (np.abs(spread) + self.size + 1.0)
        return float(values.min())


def _chernoff_cut(m: Tilted, log_mass_from: _LogMassFrom, lo: int, hi: int, log_budget: float) -> int:
    """The smallest i in [lo, hi) whose mass above s_i (at or above s_(i+1)) is within the budget
    by `log_mass_from`, or hi if none is (the bound decreases in i: a bisection on single losses,
    `Tilted.loss_at`, not the whole grid's)."""
    bad, good = lo - 1, hi
    while good - bad > 1:
        mid = (bad + good) // 2
        if log_mass_from(m.loss_at(mid + 1)) <= log_budget:
            good = mid
        else:
            bad = mid
    return good


# The upper end's scan sums a part of its range per vectorised pass, of at least so many points
# (`_UpperScan`): the cut lies about half way up after a convolution.
_SCAN_CHUNK = 4096
_SCAN_PARTS = 8


class _UpperScan:
    """The upper end's test at the points i in [peak, len(t)) (`truncate`, S3 of
    docs/pld-soundness.md): the untilted mass above s_i plus its error bound, relative to the
    budget, at most 1.

    The mass above s_i is a suffix sum, accumulated from the top in order; it only grows
    downwards (every term is >= 0), and a point where it exceeds 1 fails the test, as does every
    point below it, whatever its error term (>= 0). So the scan runs from the top in chunks,
    carrying the running sum, and stops at the first chunk below which the sum exceeds 1: the
    same sums and verdicts as over the whole range (a cumulative sum adds in order, so carrying
    the sum into the next chunk gives the same floats), the part below the cut (about half the
    grid after a convolution) not computed unless a lower cut asks for it (`value`).
    """

    def __init__(self, m: Tilted, peak: int, log_inf_budget: float) -> None:
        self.m, self.peak, self.log_inf_budget = m, peak, log_inf_budget
        lam, h = m.lam, m.h
        self.factor = 0.0
        if m.kind == "upper":
            # sum_(j > i) |e_j| w_j <= min(err max_j w_j, err2 ||w||_2); over the whole grid above
            # s_i, ||w||_2 <= w_(i+1) / sqrt(1 - e^(-2 lam h)) (a geometric series)
            l2_term = m.l2 / math.sqrt(-math.expm1(-2.0 * lam * h)) * (1.0 + 8.0 * U) if lam * h > 0.0 else math.inf
            self.factor = min(m.err, l2_term)
        self.lo = len(m.t)  # the tests at [lo, len(t)) are known
        self.carry = 0.0  # the sum over j >= lo
        self.chunks: list[tuple[int, np.ndarray]] = []  # (start, tests), from the top down
        self.size = max(_SCAN_CHUNK, (len(m.t) - peak) // _SCAN_PARTS)

    def _extend(self, lo: int) -> np.ndarray:
        """The tests at [lo, self.lo), which become known."""
        m, hi = self.m, self.lo
        lam = m.lam
        top_t, top_s = m.t[lo:hi], m.losses_at(np.arange(lo, hi))
        # (the operations of the one-line formulas, in their order, in place: fewer fresh arrays)
        positive = top_t > 0.0
        every = bool(positive.all())
        with np.errstate(divide="ignore"):
            expo = np.log(top_t if every else np.where(positive, top_t, 1.0))
        scratch = np.multiply(top_s, lam)
        np.subtract(expo, scratch, out=expo)
        np.add(expo, m.log_z - self.log_inf_budget, out=expo)
        # (clipped: a value above e^300 fails the test as surely as an infinite one)
        np.minimum(expo, 300.0, out=expo)
        if not every:
            expo[~positive] = -math.inf
        np.exp(expo, out=expo)
        running = np.empty(hi - lo + 1)
        running[0] = self.carry
        running[1:] = expo[::-1]
        np.cumsum(running, out=running)  # running[k]: the sum over j >= hi - k
        above = running[-2::-1]  # the sum over j > i, for i in [lo, hi)
        # error of the moved bins: weights exp(log_z - lam s_j) are largest at j = i + 1. Dropping
        # mass is safe for a lower bound whatever its size, so there only the computed mass counts.
        if m.kind == "upper":
            weight = np.add(top_s, m.h, out=scratch)
            np.multiply(weight, lam, out=weight)
            np.subtract(m.log_z, weight, out=weight)
            np.subtract(weight, self.log_inf_budget, out=weight)
            np.minimum(weight, 300.0, out=weight)
            np.exp(weight, out=weight)
            np.multiply(weight, self.factor, out=weight)
            tests: np.ndarray = np.add(above, weight, out=weight)
        else:
            tests = above + 0.0
        self.carry = float(running[-1])
        self.lo = lo
        self.chunks.append((lo, tests))
        return tests

    def cut(self) -> tuple[int, float]:
        """The lowest point that passes the test and its value, or (len(t) - 1, nan) if none."""
        cut, value = len(self.m.t) - 1, math.nan
        while self.lo > self.peak:
            tests = self._extend(max(self.peak, self.lo - self.size))
            ok = tests <= 1.0
            if ok.any():
                first = int(np.argmax(ok))
                cut, value = self.lo + first, float(tests[first])
            if self.carry > 1.0 and not self.factor < 0.0:
                break  # every point below fails the test (a NaN error term fails it too)
        return cut, value

    def value(self, i: int) -> float:
        """The test's value at a point i in [peak, len(t))."""
        if i < self.lo:
            self._extend(i)
        for start, tests in self.chunks:
            if i >= start:
                return float(tests[i - start])
        raise AssertionError("unreachable: the chunks cover [lo, len(t))")


def truncate(m: Tilted, *, log_inf_budget: float, log_rho_budget: float, multiplicity: int,
             cap: bool = True, floor: bool = True, whole_theta_mgf: np.ndarray | None = None) -> Tilted:
    """Cut the window to where the measure matters (S3 for the upper end, S6 for the lower).

    Upper end: the lowest grid point above which the untilted mass, computed plus its error
    bound, is at most exp(log_inf_budget), or, for an upper measure, the Chernoff bound
    min_(theta < 0) e^(theta c) E[e^(-theta S)] on it (from `log_theta_mgf`, or from
    `whole_theta_mgf`, that of the whole measure m is a layer of); that mass moves to +inf
    (upper, a rounding up, counted as the smaller of the two bounds) or is dropped (lower). Lower end, kind upper: the highest grid point f with
    multiplicity * nu(f) e^(lam f) / MGF <= exp(log_rho_budget), nu(f) the Chernoff bound
    min(M, min_theta e^(theta f) E[e^(-theta S)]) on the mass below f; that mass is dropped and
    the bound of this one copy recorded (S6: compositions sum the records over the copies).
    Lower end, kind lower: bins whose tilted mass sums (from below) to at most
    exp(log_rho_budget)/multiplicity are dropped (dropping only lowers the lower bound).
    """
    t = m.t
    n = len(t)
    lam = m.lam
    peak = int(np.argmax(t))
    # --- upper end: untilted mass above s_i, relative to the budget, in linear space ---
    # (the cut lies at or above the peak: only that part is summed, from the top)
    cut = n - 1
    moved = 0.0
    whole_mgf = m.log_theta_mgf if whole_theta_mgf is None else whole_theta_mgf
    if cap:
        log_mass_from = None if whole_mgf is None else _LogMassFrom(whole_mgf)
        scan = _UpperScan(m, peak, log_inf_budget)
        cut, at_cut = scan.cut()
        if log_mass_from is not None and cut > peak:
            # Where the FFT's noise floor decides the cut above (a small tilt weighs the noise of
            # a high bin nearly as much as that of the peak), the Chernoff bound on the mass at or
            # above a point, from the tracked E[e^(-theta S)] (theta < 0), can place it lower (S3).
            chernoff_cut = _chernoff_cut(m, log_mass_from, peak, cut, log_inf_budget)
            if chernoff_cut < cut:
                cut, at_cut = chernoff_cut, scan.value(chernoff_cut)
        if cut < n - 1:
            computed = at_cut * math.exp(log_inf_budget) * (1.0 + 4.0 * U * n)
            chernoff = (math.exp(min(log_mass_from(m.loss_at(cut + 1)), 700.0))
                        * (1.0 + 4.0 * U) if log_mass_from is not None and m.kind == "upper" else math.inf)
            moved = min(computed, chernoff)
    # --- lower end ---
    start = 0
    drop_rel = drop_mass = 0.0
    if not floor:
        pass
    elif m.kind == "upper":
        kept = float(t[: cut + 1].sum()) - m.err
        if kept > 0.0 and peak > 0:
            base = -m.log_z - math.log(kept)
            copies = math.log(multiplicity)

            lower_theta = THETAS[LOWER_THETAS]
            lower_mgf = None if m.log_theta_mgf is None else m.log_theta_mgf[LOWER_THETAS]

            def lhs(i: int) -> tuple[float, float]:
                log_nu = m.log_mass
                s_i = m.loss_at(i)
                if lower_mgf is not None:
                    log_nu = min(log_nu, float((lower_theta * s_i + lower_mgf).min()))
                return log_nu + lam * s_i + base, log_nu

            # lhs increases with i; find the largest i <= peak with multiplicity * rho <= budget
            lo_i, hi_i = -1, peak + 1
            while hi_i - lo_i > 1:
                mid = (lo_i + hi_i) // 2
                if lhs(mid)[0] + copies <= log_rho_budget:
                    lo_i = mid
                else:
                    hi_i = mid
            if lo_i > 0:
                start = lo_i
                value, log_nu = lhs(start)
                # rho and nu of this one copy: compositions add them up over the copies a run
                # holds (`fft.convolve`), so the multiplicity enters only the budget (S6)
                drop_rel = math.exp(value)
                drop_mass = math.exp(log_nu)
    else:
        # only tightness is at stake: a dropped tilted weight w lowers delta by at most
        # kappa e^(-lam eps) Z w, a part w of the Chernoff bound
        limit = _LOWER_DROP / multiplicity
        cumulative = np.cumsum(t[:peak])
        fine = np.flatnonzero(cumulative <= limit)
        if len(fine):
            start = int(fine[-1]) + 1
    if start == 0 and cut == n - 1:
        return m
    out = replace(m, t=t[start : cut + 1].copy(), k0=m.k0 + start)
    if m.kind == "upper":
        out.inf_mass = m.inf_mass + moved
        out.drop_rel = m.drop_rel + drop_rel
        out.drop_mass = m.drop_mass + drop_mass
    return renormalise(out, m)


