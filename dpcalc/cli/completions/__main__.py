"""`python -m dpcalc.cli.completions [--check] [DIRECTORY]`: write (or check) the completion scripts."""

import sys

from dpcalc.cli.completions.scripts import main

sys.exit(main())
