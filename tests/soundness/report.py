"""Print, for each sampling scheme x neighbour relation, the cases the harness checks and the
largest ratio (attained lower bound on delta) / (dpcalc's certified upper delta).

    python -m tests.soundness.report            # the slow suite's cases (several minutes)
    python -m tests.soundness.report --fast     # the default suite's cases only

A ratio above 1 is a violation (a pair attains more than dpcalc certifies); the script lists
those, and any case where dpcalc's certified lower bound lies above every pair's bracketed delta.
"""

from __future__ import annotations

import sys

from tests.soundness.cases import FAST, SLOW, UNIFORM_FAST, Case, check


def _cases(fast: bool) -> dict[tuple[str, str], list[Case]]:
    if not fast:
        return SLOW
    grouped: dict[tuple[str, str], list[Case]] = {}
    for case in FAST + UNIFORM_FAST:
        grouped.setdefault((case.scheme, case.relation), []).append(case)
    return grouped


def main(arguments: list[str]) -> int:
    problems = []
    print(f"{'scheme':<11} {'relation':<12} {'checks':>6} {'pairs':>7} {'max ratio':>10}  worst case (eps, pair)")
    for (scheme, relation), cases in _cases("--fast" in arguments).items():
        worst = None
        checked = pairs = 0
        refused = ""
        for case in cases:
            for eps in case.eps:
                try:
                    outcome = check(case, eps)
                except ValueError as error:  # a combination dpcalc refuses
                    refused = str(error).split(":")[0]
                    break
                checked += 1
                pairs += outcome.pairs
                problems += [f"{case} eps {eps}: {v}" for v in outcome.violations]
                if outcome.lower_checked and outcome.attained_upper < outcome.lower:
                    problems.append(f"{case} eps {eps}: certified lower {outcome.lower!r} above every pair's "
                                    f"delta (at most {outcome.attained_upper!r})")
                if worst is None or outcome.ratio > worst.ratio:
                    worst = outcome
            if refused:
                break
        if refused:
            print(f"{scheme:<11} {relation:<12} refused: {refused}")
            continue
        assert worst is not None
        print(f"{scheme:<11} {relation:<12} {checked:>6} {pairs:>7} {worst.ratio:>10.6f}  "
              f"{worst.case} (eps {worst.eps}, {worst.best_label})", flush=True)
    for problem in problems:
        print("VIOLATION", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
