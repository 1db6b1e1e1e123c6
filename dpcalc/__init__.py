"""dpcalc: a command-line differential-privacy calculator."""

__version__ = "0.1.0"
