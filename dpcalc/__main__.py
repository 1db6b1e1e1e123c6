"""`python -m dpcalc` runs the command-line interface."""

import sys

from dpcalc.cli.app import main

sys.exit(main())
