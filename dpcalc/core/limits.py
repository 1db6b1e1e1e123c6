"""Defaults and limits shared by the core and the command line, in a module free of numpy.

The command line states these numbers in its help and checks its options against them before
any numerical module is imported (`dpcalc gdp`, `convert` and `--help` never load numpy or
scipy). Each is written here once; the core modules that use them import them from here.
"""

from __future__ import annotations

from dpcalc.core.validation import Interval

# The PLD accountant (core.pld): the default relative width of the certified interval,
# (upper - lower) <= 0.001 * upper, and the widths a caller may ask for.
DEFAULT_ACCURACY = 1e-3
ACCURACY = Interval(0.0, 1.0, low_closed=False, high_closed=False)

# The RDP accountant (core.rdp). Orders up to SUMMED_ORDER are evaluated term by term (an order a
# costs about a terms): the optimum order is about sqrt(2 log(1/delta) / rho) for a composed RDP
# slope rho, so 1e5 already serves epsilon ~ 1e-4 at delta = 1e-5. Larger orders, up to
# MAX_ORDER, are accepted for grids written for other accountants (dp_accounting emulates pure
# DP with order 1e10): there the subsampled Gaussian's RDP comes from its largest binomial term
# and a bound on the others (core/rdp/large_orders.py), exact where that bound is negligible and
# a labelled upper bound elsewhere; the Laplace mechanism's closed form holds at every order.
SUMMED_ORDER = 1e5
MAX_ORDER = 1e100

# The most orders one --orders list (ranges expanded) may hold: a grid of 0.001 steps from 1 to
# 100 fits; a typo such as 1:1e9:1 fails at once instead of running for hours.
MAX_ORDERS = 100_000
# What bounds the work of a list of orders: each order a up to SUMMED_ORDER costs about a terms
# of its series (per mechanism), so the orders' sum, their terms, is at most MAX_ORDER_TERMS
# (about 5 s on one core); orders above SUMMED_ORDER cost a few terms each and count 0 here. The
# default grid sums to about 2.1e4; 1000:10000:10 to 5e6; 1000:100000:1 to 5e9 (refused).
MAX_ORDER_TERMS = 10_000_000


# User-level privacy (examples per user, the PLD accountant's Binomial(k, p) mixture pair): each
# step's pair has k + 1 components and its cost grows with k (k = 50: 4 s for three steps, 1000:
# 67 s), so k is at most MAX_EXAMPLES_PER_USER. Beyond it, group privacy of the example-level
# figure (`dpcalc convert --group`) is a valid, looser bound.
MAX_EXAMPLES_PER_USER = 64
EXAMPLES_PER_USER = Interval(1.0, float(MAX_EXAMPLES_PER_USER), low_closed=True, high_closed=True, integer=True)


def order_terms(orders: list[float] | tuple[float, ...]) -> float:
    """The terms the series of `orders` sum (about one per unit of each order up to SUMMED_ORDER)."""
    import math

    return math.fsum(math.ceil(order) for order in orders if order <= SUMMED_ORDER)

# The RDP accountant's default orders (core.rdp.orders.DEFAULT_ORDERS), as segments (first, last,
# step) and the single orders after them: written once, for the accountant and for the help of
# `dpcalc rdp`. Why this grid: core/rdp/orders.py.
DEFAULT_ORDER_SEGMENTS = (
    (1.05, 10.95, 0.05), (11.0, 31.5, 0.5), (32.0, 63.0, 1.0), (64.0, 124.0, 4.0), (128.0, 240.0, 16.0),
    (256.0, 960.0, 64.0),
)
DEFAULT_ORDER_SINGLES = (1024.0, 2048.0, 4096.0)


def default_orders() -> tuple[float, ...]:
    """The default Renyi orders, ascending: every segment's orders, then the single ones. Each
    order has at most two decimals and is the float nearest them (round(., 2))."""
    grid: list[float] = []
    for first, last, step in DEFAULT_ORDER_SEGMENTS:
        count = round((last - first) / step) + 1
        grid += [round(first + index * step, 2) for index in range(count)]
    return (*grid, *DEFAULT_ORDER_SINGLES)


def default_orders_text() -> str:
    """The default orders in words, for help texts: "1.05-10.95 by 0.05, ..., then 1024, ..."."""
    segments = ", ".join(f"{first:g}-{last:g} by {step:g}" for first, last, step in DEFAULT_ORDER_SEGMENTS)
    singles = ", ".join(f"{order:g}" for order in DEFAULT_ORDER_SINGLES)
    return f"{segments}, then {singles} ({len(default_orders())} orders; a superset of dp_accounting's default orders)"


# Calibration (core.calibrate): the relative precision of sigma and p. The returned value and a
# rejected one are at most this far apart; 1e-4 is below what any training run can tell apart
# and costs about two evaluations beyond the ones needed to find the answer at all.
DEFAULT_PRECISION = 1e-4
# At least 1e-12: the search steps sigma and p on a decimal grid this fine, and below about 1e-15
# relative two neighbouring grid points are one float64 and the search cannot move between them.
PRECISION = Interval(1e-12, 0.1, low_closed=True, high_closed=True)
# The delta a calibration meets: at least 1e-300. Each candidate is composed for epsilon at delta,
# and the work grows with log(1/delta); below 1e-300 delta nears float64's smallest normal numbers
# (2.2e-308), whose tails carry few digits, and one calibration took 20 s at 1e-320 (0.9 s at 1e-300).
CALIBRATION_DELTA = Interval(1e-300, 1.0, low_closed=True)

# Conversions (core.conversions): the notions a guarantee can be stated in; tradeoff is a
# target only.
SOURCE_NOTIONS = ("dp", "gdp", "zcdp", "rdp", "gaussian", "laplace")
TARGET_NOTIONS = (*SOURCE_NOTIONS, "tradeoff")

# The orders of a converted RDP curve when none are given: where the optimum of the conversion
# to (epsilon, delta) usually falls for single mechanisms, plus a few large ones.
DEFAULT_CONVERT_ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 16.0, 32.0, 64.0)

# Trade-off curves (core.conversions): the number of evenly spaced type I errors of a printed
# curve, by default alpha = 0, 0.1, ..., 1.
DEFAULT_TRADEOFF_POINTS = 11
TRADEOFF_POINTS = Interval(2.0, 100_000.0, low_closed=True, high_closed=True, integer=True)

# Attack risk (core.risk): the false-positive rates at which `dpcalc risk` bounds a membership
# attack's true-positive rate when none are given (low FPR is where the risk lives), and the
# prior of the Bayes success figure.
DEFAULT_FPRS = (1e-5, 1e-4, 1e-3, 1e-2, 0.1)
DEFAULT_PRIOR = 0.5
