"""The composition of two discretised measures: a convolution of their tilted masses (direct or
by FFT), with a bound on its rounding error (S5 of docs/pld-soundness.md).

Source of the FFT bound: Higham, "Accuracy and Stability of Numerical Algorithms" (2nd ed.,
2002), Thm 24.2.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from dpcalc.core.pld import work
from dpcalc.core.pld.measure import Tilted, U, add_offsets

# Relative error of one complex FFT pass of length n, per level of the radix-2 recursion:
# Higham, "Accuracy and Stability of Numerical Algorithms" (2002), Thm 24.2, gives
# ||fl(FFT x) - FFT x||_2 <= log2(n) eta/(1 - log2(n) eta) ||FFT x||_2 with eta = mu + gamma_4 (sqrt 2 + mu),
# mu the error of the twiddle factors; with mu <= u that is eta <= 6.7 u. 16 u adds margin for
# the mixed radix-4/2 passes and the real-input packing of pocketfft (numpy.fft).
FFT_ETA = 16.0 * U

# Below this many multiplications a direct convolution is faster than the FFT.
_DIRECT_CONVOLUTION_BELOW = 40_000

# A product whose double-precision rounding bound, times the copies of it the run's composition
# holds, would exceed this L1 error is transformed in extended precision where the platform has a
# hardware one (`extended_round_off`): the error of an early square of a long run is multiplied
# by every later level (T = 1e11: 5e-12 of the first square becomes 0.3 of the composition).
_EXTENDED_ABOVE = 1e-2
# An extended-precision transform costs about this many double ones (x87 arithmetic, measured
# 3.5-4x for lengths 2^17 to 2^19): what the work meter charges for it.
_EXTENDED_COST = 4.0


@lru_cache(maxsize=1)
def extended_round_off() -> float | None:
    """The unit round-off of np.longdouble where numpy's FFT computes in it and it is the x87
    80-bit format (64-bit significand, u = 2^-64, in hardware); None elsewhere (where long double
    is double, as on Windows and macOS on ARM; the 128-bit software format of Linux on ARM, far
    slower; numpy before 2.0, whose FFT computes long double input in double)."""
    info = np.finfo(np.longdouble)
    if info.nmant != 63:
        return None
    if np.fft.rfft(np.zeros(8, dtype=np.longdouble)).dtype != np.clongdouble:
        return None
    return float(info.epsneg)

@lru_cache(maxsize=1024)
def fast_length(n: int) -> int:
    """The smallest 2^a 3^b 5^c >= n: FFT lengths pocketfft handles at full speed, with less
    zero padding than the next power of two (which wastes a quarter on average). Remembered
    (a composition asks for the same few lengths again and again)."""
    best = 1 << (n - 1).bit_length()
    five = 1
    while five < best:
        three = five
        while three < best:
            length = three
            while length < n:
                length *= 2
            best = min(best, length)
            three *= 3
        five *= 5
    return best


def _norm_sums(x: np.ndarray) -> tuple[float, float]:
    """(sum |x_i|, sum x_i^2) as numpy sums them (`np.abs(x).sum()`, `(x * x).sum()`: the same
    floats), the two elementwise results written to one scratch array."""
    scratch = np.abs(x)
    total = float(scratch.sum())
    np.multiply(x, x, out=scratch)
    return total, float(scratch.sum())


def _fft_error_l2(n_fft: int, na2: float, nb2: float, na1: float, nb1: float, u: float = U) -> float:
    """2-norm bound on the rounding error of the FFT convolution of a and b (S5).

    The 2-norm error of an FFT-based convolution c = F^-1(F a . F b) is at most
    gamma (||a||_2 ||b||_1 + ||a||_1 ||b||_2) with gamma = 3 log2(n) eta + 8u: each of the three
    transforms contributes log2(n) eta relative to its input (Higham Thm 24.2 for radix 2; the
    radix-3 and -5 passes of a 2^a 3^b 5^c length are within the same margin, and the test
    measures it), ||F x||_2 = sqrt(n) ||x||_2, and |F a|_inf <= ||a||_1 turns the pointwise
    product into the stated norms. na2, nb2 and na1, nb1 are the 2- and 1-norms of a and b;
    u the unit round-off of the arithmetic the transforms run in.
    """
    return _gamma(n_fft, u) * (na2 * nb1 + na1 * nb2)


def _fft_error_l1(n_fft: int, na2: float, nb2: float, na1: float, nb1: float, u: float = U) -> float:
    """L1 bound on the rounding error of the FFT convolution of a and b (S5): the L1 norm of a
    vector of length n is at most sqrt(n) times its 2-norm (`_fft_error_l2`)."""
    return math.sqrt(n_fft) * _gamma(n_fft, u) * (na2 * nb1 + na1 * nb2)


def _gamma(n_fft: int, u: float) -> float:
    """gamma = 3 log2(n) eta + 8u of the FFT bounds, eta = 16 u (`FFT_ETA` at double precision)."""
    return 3.0 * math.log2(n_fft) * (16.0 * u) + 8.0 * u


def _extended_convolve(a: np.ndarray, b: np.ndarray | None, n: int, n_fft: int, a1: float, a2: float, b1: float,
                       b2: float, u_ext: float) -> tuple[np.ndarray, float, float]:
    """a * b (b None: a * a) transformed in extended precision (unit round-off u_ext) and rounded
    to double, with its L1 and L2 rounding bounds (S5): the transforms' bound at u_ext, plus the
    rounding of each output c_i to double, at most u |c_i|, whose sum is at most
    u (||a||_1 ||b||_1 + the transforms' L1 error), and whose 2-norm at most
    u (min(||a||_2 ||b||_1, ||a||_1 ||b||_2) + their L2 error) (Young's inequality)."""
    fa = np.fft.rfft(a.astype(np.longdouble), n_fft)
    fb = fa if b is None else np.fft.rfft(b.astype(np.longdouble), n_fft)
    c = np.fft.irfft(np.multiply(fa, fb, out=fa), n_fft)[:n].astype(np.float64)
    ext1 = _fft_error_l1(n_fft, a2, b2, a1, b1, u_ext)
    ext2 = _fft_error_l2(n_fft, a2, b2, a1, b1, u_ext)
    # (the 1-norms as the caller computed them may be a few u short: 1.01; an output rounded to
    # a subnormal double errs by at most half the smallest one, 2^-1075, instead)
    tiny = math.ulp(0.0)
    l1 = ext1 + U * (1.01 * a1 * b1 + ext1) * 1.01 + n * tiny
    l2 = (ext2 + U * (min(a2 * b1, a1 * b2) + ext2) * 1.01 + math.sqrt(n) * tiny) * (1.0 + 4.0 * U)
    return c, l1, l2


def _split_convolve(a: np.ndarray, b: np.ndarray | None, n: int, n_fft: int, a1: float, a2: float, b1: float,
                    b2: float, fresh: float, fresh2: float, gain: float) -> tuple[np.ndarray, float, float] | None:
    """a * b (b None: a * a) with the largest atom of each factor split off (S5):
    a * b = c_a shift(b) + c_b shift(r_a) + r_a * r_b, r the rest, only r_a * r_b through the FFT,
    whose round-off (`_fft_error_l1`, `_fft_error_l2`) is then relative to the rest's norms.
    Returns the product with its L1 and L2 rounding bounds if both are below the plain FFT's
    (`fresh`, `fresh2`) divided by `gain`, else None (then nothing was transformed).
    The two shifted products and additions round each output by at most 4u times the sum of the
    absolute terms (two products and two additions), whose norms are at most
    ||r_a||_p ||r_b||_1 + |c_a| ||b||_p + |c_b| ||r_a||_p."""
    # the masses are non-negative up to round-off, so the largest atom is the largest value
    ia = int(np.argmax(a))
    ca = float(a[ia])
    ib = ia if b is None else int(np.argmax(b))
    cb = ca if b is None else float(b[ib])
    # Most products gain nothing from the split: estimate the rest's norms from the whole's
    # (central values, no margins) and transform nothing unless the estimate gains at least half
    # of what is asked; the bounds themselves are computed from the rests below.
    ra1_est, ra2_est = max(a1 - abs(ca), 0.0), math.sqrt(max(a2 * a2 - ca * ca, 0.0))
    rb1_est, rb2_est = max(b1 - abs(cb), 0.0), math.sqrt(max(b2 * b2 - cb * cb, 0.0))
    if 0.5 * gain * _fft_error_l1(n_fft, ra2_est, rb2_est, ra1_est, rb1_est) >= fresh:
        return None
    ra = a.copy()
    ra[ia] = 0.0
    if b is None:
        rb, bb = ra, a
    else:
        rb = b.copy()
        rb[ib] = 0.0
        bb = b
    ra1_sum, ra2_sum = _norm_sums(ra)
    ra1 = ra1_sum * (1.0 + len(ra) * U)
    ra2 = math.sqrt(ra2_sum * (1.0 + (len(ra) + 4) * U))
    if b is None:
        rb1, rb2 = ra1, ra2
    else:
        rb1_sum, rb2_sum = _norm_sums(rb)
        rb1 = rb1_sum * (1.0 + len(rb) * U)
        rb2 = math.sqrt(rb2_sum * (1.0 + (len(rb) + 4) * U))
    if ra1 == 0.0 or rb1 == 0.0:
        return None
    # (the inputs' 1-norms as the caller computed them, b1 and b2, may be a few u short: 1.01)
    l1 = (_fft_error_l1(n_fft, ra2, rb2, ra1, rb1)
          + 4.0 * U * (ra1 * rb1 + abs(ca) * b1 * 1.01 + abs(cb) * ra1) * 1.01)
    l2 = (_fft_error_l2(n_fft, ra2, rb2, ra1, rb1)
          + 4.0 * U * (ra2 * rb1 + abs(ca) * b2 + abs(cb) * ra2) * 1.01) * (1.0 + 4.0 * U)
    if not (l1 * gain < fresh and l2 * gain < fresh2):
        return None
    fr = np.fft.rfft(ra, n_fft)
    fs = fr if b is None else np.fft.rfft(rb, n_fft)
    c = np.fft.irfft(np.multiply(fr, fs, out=fr), n_fft)[:n]  # (the product in place: the same floats)
    c[ia : ia + len(bb)] += ca * bb
    c[ib : ib + len(ra)] += cb * ra
    return c, l1, l2


def convolve(a: Tilted, b: Tilted, copies: int = 1) -> Tilted:
    """The composition a * b (same kind, tilt and grid step); `copies`, how many copies of the
    product the run's composition holds, decides whether its transforms need extended precision
    (`_EXTENDED_ABOVE`)."""
    if a.kind != b.kind or a.lam != b.lam or a.h != b.h:
        raise ValueError("convolve needs measures of the same kind, tilt and grid step")
    n = len(a.t) + len(b.t) - 1
    # 1-norms, and 2-norms (the L2 bounds take them rounded up: a sum of n squares is within n u
    # of its value); |x| and x^2 share one scratch array per factor
    a1, a2_sum = _norm_sums(a.t)
    b1, b2_sum = (a1, a2_sum) if b is a else _norm_sums(b.t)
    a2 = math.sqrt(a2_sum * (1.0 + (len(a.t) + 4) * U))
    b2 = math.sqrt(b2_sum * (1.0 + (len(b.t) + 4) * U))
    if len(a.t) * len(b.t) < _DIRECT_CONVOLUTION_BELOW:
        work.charge(len(a.t) * len(b.t))
        c = np.convolve(a.t, b.t)
        # each output is a sum of at most min(len) products: gamma_n sum |a_i| |b_j|
        m = min(len(a.t), len(b.t))
        fresh = 1.01 * m * U * a1 * b1
        # componentwise |error| <= 1.01 m u (|a| * |b|), whose 2-norm is at most
        # 1.01 m u min(||a||_2 ||b||_1, ||a||_1 ||b||_2) (Young's inequality)
        fresh2 = 1.01 * m * U * min(a2 * b1, a1 * b2) * (1.0 + 4.0 * U)
    else:
        n_fft = fast_length(n)
        fresh = _fft_error_l1(n_fft, math.sqrt(a2_sum), math.sqrt(b2_sum), a1, b1)
        fresh2 = _fft_error_l2(n_fft, a2, b2, a1, b1) * (1.0 + 4.0 * U)
        u_ext = extended_round_off() if copies * fresh > _EXTENDED_ABOVE else None
        work.charge(work.fft_cost(n_fft) * (_EXTENDED_COST if u_ext is not None else 1.0))
        # a lower measure's merges depend on its values and on err (`coarsen`): its bounds move
        # by a few parts in 1e3 of their width either way when the rounding changes, so its
        # products are split only where that divides the bound by 16 or more
        gain = 1.0 if a.kind == "upper" else 16.0
        split = None if u_ext is not None else _split_convolve(
            a.t, b.t if b is not a else None, n, n_fft, a1, a2, b1, b2, fresh, fresh2, gain)
        if u_ext is not None:
            c, fresh, fresh2 = _extended_convolve(a.t, b.t if b is not a else None, n, n_fft, a1, a2, b1, b2, u_ext)
        elif split is not None:
            c, fresh, fresh2 = split
        else:
            fa = np.fft.rfft(a.t, n_fft)
            fb = fa if b is a else np.fft.rfft(b.t, n_fft)
            c = np.fft.irfft(np.multiply(fa, fb, out=fa), n_fft)[:n]
    err = fresh + a.err * b1 + a1 * b.err + a.err * b.err
    # the same in L2 (S5): with e the input errors, a_c * b_c - a * b = e_a * b_c + a_c * e_b - e_a * e_b,
    # and ||x * y||_2 <= ||x||_2 ||y||_1 (Young's inequality) in either order
    ea1, ea2, eb1, eb2 = a.err, a.l2, b.err, b.l2
    err2 = (fresh2 + min(ea2 * b1, ea1 * b2) + min(a2 * eb1, a1 * eb2) + min(ea2 * eb1, ea1 * eb2)) * (1.0 + 4.0 * U)
    total = float(c.sum())
    if not total > 0.0:
        raise FloatingPointError("composition lost all mass")
    c /= total
    err = err / total + 2.0 * U
    err2 = min(err2 / total + 2.0 * U, err)
    log_s = math.log(total)
    log_z = a.log_z + b.log_z + log_s
    log_z_err = a.log_z_err + b.log_z_err + 4.0 * U * (abs(log_z) + abs(a.log_z) + abs(log_s) + 1.0)
    out = Tilted(
        kind=a.kind, lam=a.lam, h=a.h, k0=a.k0 + b.k0, t=c, log_z=log_z, log_z_err=log_z_err, err=err, err2=err2,
        steps=a.steps + b.steps, offset=add_offsets(a.offset, b.offset),
    )
    if a.kind == "upper":
        ma, mb = math.exp(a.log_mass), math.exp(b.log_mass)
        # (finite_a + inf_a)(finite_b + inf_b): the inf part is at most inf_a M_b + M_a inf_b
        out.inf_mass = (a.inf_mass * mb + ma * b.inf_mass) * (1.0 + 8.0 * U)
        out.log_mass = a.log_mass + b.log_mass + math.log1p(a.inf_mass * b.inf_mass / (ma * mb)) + 8.0 * U
        out.drop_rel = a.drop_rel + b.drop_rel
        out.drop_mass = a.drop_mass + b.drop_mass
    else:
        # true = represented + D; true_a * true_b - rep_a * rep_b = D_a * true_b + rep_a * D_b
        out.deficiency = (a.deficiency * (b1 + b.err + b.deficiency) + (a1 + a.err) * b.deficiency) / total * (1 + 8 * U)
    if a.log_theta_mgf is not None and b.log_theta_mgf is not None:
        out.log_theta_mgf = a.log_theta_mgf + b.log_theta_mgf + 1e-12
    return out

