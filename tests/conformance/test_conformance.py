"""Drive the corpus: every case is one dpcalc command run in-process with --json (see __init__.py)."""

from __future__ import annotations

import math

import pytest

from tests.conformance import ALL_CASES, PEERS
from tests.conformance.case import AT_LEAST, AT_MOST, CLOSE, LOWER, REFUSED, UPPER, WITHIN, Case, lookup

# Cases whose run takes over 0.2 s, where cheaper cases check the same command against the same peer:
# they run in the slow set (`python -m pytest -m slow`).
SLOW_IDS = frozenset({
    "dpa-pld-laplace-delta-b1-sens1-q1-eps0",
    "dpa-pld-laplace-delta-b1-sens1-q1-eps1",
    "dpa-pld-laplace-delta-b2-sens2-q0.3-eps0",
    "dpa-pld-laplace-delta-b2-sens2-q1-eps0",
    "dpa-pld-laplace-delta-b2-sens4-q1-eps0.5",
    "dpa-pld-laplace-delta-b2-sens4-q1-eps1",
    "dpa-pld-laplace-delta-b2-sens4-q1-eps2",
    "dpa-rdp-gaussian-epsilon-orders-range",
    "dpa-rdp-sg-q0.01-s2.5-T50-order1.5",
    "dpa-smallest-epsilon-delta0.01-k50",
    "dpa-smallest-laplace-noise-k20-sens0.5",
    "dpa-smallest-laplace-noise-k20-sens1",
    "dpa-smallest-laplace-noise-k500-sens1",
    "dpa-smallest-subsampled-gaussian-noise-base",
    "prv-find-noise-multiplier-range-above",
    "prv-find-noise-multiplier-robustness-2",
    "tfp-compute-noise-Test2",
    "tfp-dp-sgd-privacy-Test2-epsilon-default-grid",
    "tfp-dp-sgd-privacy-Test2-epsilon-tf-orders",
    "tfp-example-microbatching-subsampling-rdp-default-grid",
    "tfp-example-microbatching-subsampling-rdp-dp-accounting-orders",
    "tfp-example-no-microbatching-subsampling-rdp-default-grid",
    "tfp-example-no-microbatching-subsampling-rdp-dp-accounting-orders",
    "tfp-statement-user2-poisson",
    "tfp-statement-user3-poisson",
})


def _param(case: Case):
    marks = []
    if case.slow or case.id in SLOW_IDS:
        marks.append(pytest.mark.slow)
    if case.defect is not None:
        marks.append(pytest.mark.xfail(strict=True, reason=f"issue 22 defect {case.defect}"))
    return pytest.param(case, id=case.id, marks=marks)


def _agrees(case: Case, value: float, document: dict) -> bool:
    """Whether dpcalc's figure agrees with the peer's at the peer's own tolerance."""
    tolerance = case.abs + case.rel * abs(case.expected)
    if case.compare == CLOSE:
        if math.isinf(case.expected):
            return value == case.expected
        return abs(value - case.expected) <= tolerance
    if case.compare == WITHIN:
        assert case.key_lower is not None
        lower = lookup(document, case.key_lower)
        assert lower <= value, f"{case.id}: the interval [{lower}, {value}] is upside down"
        return lower - tolerance <= case.expected <= value + tolerance
    if case.compare == AT_MOST:
        if case.key_lower is not None and lookup(document, case.key_lower) > case.expected + tolerance:
            return False
        return value <= case.expected + tolerance
    if case.compare == AT_LEAST:
        return value >= case.expected - tolerance
    raise AssertionError(f"{case.id}: unknown comparison {case.compare!r}")


_RUNS: dict[tuple[str, ...], object] = {}


@pytest.mark.parametrize("case", [_param(case) for case in ALL_CASES])
def test_case(case: Case, dpcalc):
    # cases that read several keys of one command share its run (results depend on the inputs alone)
    run = _RUNS.get(case.argv)
    if run is None:
        run = _RUNS[case.argv] = dpcalc(*case.argv, "--json")
    if case.compare == REFUSED:
        assert run.code == 2, f"{case.id}: expected a refusal, got exit {run.code}: {run.stdout[:300]}"
        assert run.only_error  # with --json: the error as one JSON object
        assert run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1, run.stderr
        return
    assert run.code == 0, f"{case.id}: exit {run.code}: {run.stderr.strip()}"
    document = run.json()
    value = lookup(document, case.key)
    if case.differs is None:
        assert _agrees(case, value, document), (
            f"{case.id}: dpcalc {value!r} against the peer's {case.expected!r} "
            f"(rel {case.rel}, abs {case.abs}, {case.compare}); source: {case.source}"
        )
        return
    # dpcalc differs from the peer: the independent check decides, and dpcalc must be the closer one.
    assert case.exact is not None
    truth = case.exact()
    assert not _agrees(case, value, document), f"{case.id}: agrees with the peer after all; drop `differs`"
    if case.compare == WITHIN:
        assert case.key_lower is not None
        lower = lookup(document, case.key_lower)
        assert lower <= truth * (1 + 1e-12) and truth <= value * (1 + 1e-12), (
            f"{case.id}: the exact {truth!r} is outside dpcalc's certified [{lower!r}, {value!r}]"
        )
    elif case.sound == UPPER:
        assert value >= truth * (1 - 1e-12), f"{case.id}: dpcalc {value!r} is below the exact {truth!r}: unsound"
        assert value <= truth * (1 + case.exact_rel), f"{case.id}: dpcalc {value!r} is not the exact {truth!r}"
    else:
        assert case.sound == LOWER
        assert value <= truth * (1 + 1e-12), f"{case.id}: dpcalc {value!r} is above the exact {truth!r}: unsound"
        assert value >= truth * (1 - case.exact_rel), f"{case.id}: dpcalc {value!r} is not the exact {truth!r}"
    # never looser than the peer: at least as close to the truth, on the sound side
    assert abs(value - truth) <= abs(case.expected - truth), (
        f"{case.id}: dpcalc {value!r} is further from the exact {truth!r} than the peer's {case.expected!r}"
    )


def test_corpus_shape():
    """Every case names its source and tolerance; ids are unique; the corpus covers every peer."""
    ids = [case.id for case in ALL_CASES]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    assert len(ALL_CASES) >= 150
    for case in ALL_CASES:
        assert case.source.count(",") >= 1 and case.source.split(",")[0] in PEERS, case.id
        assert case.compare in (CLOSE, WITHIN, AT_MOST, AT_LEAST, REFUSED)
        assert case.sound in (UPPER, LOWER)


def test_readme_summary_matches_the_corpus():
    """The "How dpcalc compares" table (docs/comparison.md) counts the corpus as it is."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "docs" / "comparison.md").read_text(encoding="utf-8")
    rows = {}
    for line in readme.split("## How dpcalc compares", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].isdigit():
            rows[cells[0]] = tuple(int(cell) for cell in cells[1:])

    def counts(cases):
        agree = sum(1 for c in cases if c.defect is None and c.differs is None)
        differs = sum(1 for c in cases if c.defect is None and c.differs is not None)
        pending = sum(1 for c in cases if c.defect is not None)
        return (len(cases), agree, differs, pending)

    expected = {peer: counts([c for c in ALL_CASES if c.source.split(",")[0] == peer]) for peer in PEERS}
    expected["all"] = counts(ALL_CASES)
    assert rows == expected
