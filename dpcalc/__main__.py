"""`python -m dpcalc` runs the command-line interface."""

import sys

try:
    from dpcalc.cli.app import main
except KeyboardInterrupt:  # Ctrl-C in the instant before dpcalc.cli.app holds it (its first statement does)
    exec("pass", {})  # clears CPython's "unhandled KeyboardInterrupt" flag (see app._forget_unhandled_interrupt)
    if sys.stderr is not None:
        sys.stderr.write("Aborted.\n")
    sys.exit(130)

sys.exit(main())
