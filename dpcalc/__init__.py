"""dpcalc: a command-line differential-privacy calculator, and its Python API.

The version is written once, here; pyproject.toml reads it (`dynamic = ["version"]`) into the
package metadata. Reading it back from the metadata (importlib.metadata) would cost about
12-15 ms on every --json call, which prints it (measured), so the code reads this constant.

The Python API (`from dpcalc import pld_epsilon, gdp, calibrate_sigma, check_budget`) lives in
dpcalc.api, which is imported on first use of one of its names (PEP 562 `__getattr__`): the
command line imports this package on every call, and `import dpcalc` stays free of numpy.
"""

__version__ = "0.1.0"

# typing is not imported at run time (its import alone costs about 2 ms); type checkers see the names.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from dpcalc.api import (
        ParameterError,
        Phase,
        calibrate,
        calibrate_sigma,
        check_budget,
        gdp,
        pld_delta,
        pld_epsilon,
        rdp,
        risk,
    )

__all__ = [
    "ParameterError",
    "Phase",
    "__version__",
    "calibrate",
    "calibrate_sigma",
    "check_budget",
    "gdp",
    "pld_delta",
    "pld_epsilon",
    "rdp",
    "risk",
]
# The names of dpcalc.api, served lazily (dpcalc.api.__all__; a test checks they agree).
_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> object:
    if name in _API:
        from dpcalc import api

        return getattr(api, name)
    raise AttributeError(f"module 'dpcalc' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
