"""The composition of two discretised measures: a convolution of their tilted masses (direct or
by FFT), with a bound on its rounding error (S5 of docs/pld-soundness.md).

Source of the FFT bound: Higham, "Accuracy and Stability of Numerical Algorithms" (2nd ed.,
2002), Thm 24.2.
"""

from __future__ import annotations

import math

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

def fast_length(n: int) -> int:
    """The smallest 2^a 3^b 5^c >= n: FFT lengths pocketfft handles at full speed, with less
    zero padding than the next power of two (which wastes a quarter on average)."""
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


def _fft_error_l1(n_fft: int, a: np.ndarray, b: np.ndarray, na1: float, nb1: float) -> float:
    """L1 bound on the rounding error of the FFT convolution of a and b (S5).

    The 2-norm bound of an FFT-based convolution c = F^-1(F a . F b) is
    gamma (||a||_2 ||b||_1 + ||a||_1 ||b||_2) with gamma = 3 log2(n) eta + 8u: each of the three
    transforms contributes log2(n) eta relative to its input (Higham Thm 24.2 for radix 2; the
    radix-3 and -5 passes of a 2^a 3^b 5^c length are within the same margin, and the test
    measures it), and |F a|_inf <=
    ||a||_1 turns the pointwise product into the stated norms. The L1 norm is at most sqrt(n)
    times the 2-norm. na1 and nb1 are the L1 norms of a and b (the caller has them).
    """
    gamma = 3.0 * math.log2(n_fft) * FFT_ETA + 8.0 * U
    na2 = float(np.sqrt((a * a).sum()))
    nb2 = na2 if b is a else float(np.sqrt((b * b).sum()))
    return math.sqrt(n_fft) * gamma * (na2 * nb1 + na1 * nb2)


def convolve(a: Tilted, b: Tilted) -> Tilted:
    """The composition a * b (same kind, tilt and grid step)."""
    if a.kind != b.kind or a.lam != b.lam or a.h != b.h:
        raise ValueError("convolve needs measures of the same kind, tilt and grid step")
    n = len(a.t) + len(b.t) - 1
    a1 = float(np.abs(a.t).sum())
    b1 = a1 if b is a else float(np.abs(b.t).sum())
    if len(a.t) * len(b.t) < _DIRECT_CONVOLUTION_BELOW:
        work.charge(len(a.t) * len(b.t))
        c = np.convolve(a.t, b.t)
        # each output is a sum of at most min(len) products: gamma_n sum |a_i| |b_j|
        m = min(len(a.t), len(b.t))
        fresh = 1.01 * m * U * a1 * b1
    else:
        n_fft = fast_length(n)
        work.charge(work.fft_cost(n_fft))
        fa = np.fft.rfft(a.t, n_fft)
        fb = fa if b is a else np.fft.rfft(b.t, n_fft)
        c = np.fft.irfft(fa * fb, n_fft)[:n]
        fresh = _fft_error_l1(n_fft, a.t, b.t, a1, b1)
    err = fresh + a.err * b1 + a1 * b.err + a.err * b.err
    total = float(c.sum())
    if not total > 0.0:
        raise FloatingPointError("composition lost all mass")
    c /= total
    err = err / total + 2.0 * U
    log_s = math.log(total)
    log_z = a.log_z + b.log_z + log_s
    log_z_err = a.log_z_err + b.log_z_err + 4.0 * U * (abs(log_z) + abs(a.log_z) + abs(log_s) + 1.0)
    out = Tilted(
        kind=a.kind, lam=a.lam, h=a.h, k0=a.k0 + b.k0, t=c, log_z=log_z, log_z_err=log_z_err, err=err,
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

