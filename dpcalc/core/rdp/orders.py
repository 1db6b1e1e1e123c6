"""The Renyi orders the accountant evaluates: the default grid, the allowed range, the check.

The grid is a superset of dp_accounting's DEFAULT_RDP_ORDERS (Mironov, "Renyi Differential
Privacy", CSF 2017, arXiv 1702.07476, "M17": epsilon is a minimum over the orders, so a
superset is never worse); docs/mathematics.md §2 states it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpcalc.core.limits import MAX_ORDER, default_orders
from dpcalc.core.validation import Interval

# The default order grid: a superset of dp_accounting's DEFAULT_RDP_ORDERS (1.1..10.9 by 0.1,
# 11..63, 128, 256, 512, 1024), twice as dense from 1 to 32, where the optima of DP-SGD runs
# fall (epsilon between ~0.3 and ~10 at delta ~ 1e-5), and with 64..1024 filled in and 2048,
# 4096 added for small-epsilon runs. A superset is never worse: epsilon is a minimum over
# the grid. The size is bounded by speed: every order a costs ~a terms per phase.
# Its segments are written in dpcalc.core.limits (numpy-free), where `dpcalc rdp --help` reads them.
DEFAULT_ORDERS: tuple[float, ...] = default_orders()

# The largest order, MAX_ORDER (1e100), is in dpcalc.core.limits, where the command line reads it
# without loading numpy (as SUMMED_ORDER, above which orders are not summed term by term).
ORDERS_RANGE = Interval(1.0, MAX_ORDER, high_closed=True)


def _check_orders(orders: Sequence[float] | np.ndarray) -> np.ndarray:
    """The orders as a flat float64 array; ParameterError ("order") for one outside (1, MAX_ORDER]."""
    order_array = np.asarray(orders, dtype=np.float64).reshape(-1)
    if order_array.size == 0:
        raise ValueError("orders must not be empty")
    if not np.all((order_array > 1.0) & (order_array <= MAX_ORDER)):
        for order in order_array:
            ORDERS_RANGE.check("order", float(order))
    return order_array
