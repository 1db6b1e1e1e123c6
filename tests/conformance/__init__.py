"""The conformance corpus: the questions the peers' own test suites ask, answered by dpcalc.

Each case takes one published test value of a peer library (dp_accounting, prv_accountant,
autodp, TensorFlow Privacy, OpenDP) — its input, the expected figure and the tolerance the peer's
test uses — and asks dpcalc the same question as a user would type it: one command line, run
in-process with --json, and one key of the result. The facts and figures come from the peers'
tests; no peer code is used (the cases are written from the test's inputs and numbers).

A case either agrees with the peer at the peer's tolerance, or records in `differs` why dpcalc's
figure is different, with an independent check (`exact`: mpmath quadrature or a closed form,
tests/conformance/exact.py) that the test runs: dpcalc must match the exact figure, sit on its
sound side, and be at least as close to it as the peer. A case that dpcalc cannot answer yet
because of a known defect of issue 22 is marked with `defect=N` and runs as a strict xfail, so
it turns into a failure (to be unmarked) once the fix lands.

To add a case: pick the peer's table (cases_<peer>.py), append a `Case` with an id, the source
("project, file, test name"), the dpcalc command line (`argv("...")`), the JSON key to read
(dotted, list indices as numbers: "result.curve.0.rdp"), the expected value and the peer's
tolerance (`rel`/`abs`; `compare` for interval, one-sided or refusal checks, see case.py). If
dpcalc disagrees, find out which figure is right before writing `differs` and `exact`.
Cases that take more than about a second are marked `slow=True` (skipped by default).
"""

from __future__ import annotations

from tests.conformance import (
    cases_autodp,
    cases_dp_accounting,
    cases_opendp,
    cases_prv_accountant,
    cases_tf_privacy,
)
from tests.conformance.case import Case

PEERS = ("dp_accounting", "prv_accountant", "autodp", "TF Privacy", "OpenDP")

ALL_CASES: list[Case] = [
    *cases_dp_accounting.CASES,
    *cases_prv_accountant.CASES,
    *cases_autodp.CASES,
    *cases_tf_privacy.CASES,
    *cases_opendp.CASES,
]
