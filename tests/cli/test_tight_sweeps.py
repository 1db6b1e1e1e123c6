"""The tight figure of gdp and rdp sweeps: rows that differ only in T share one PLD composition."""

from __future__ import annotations

import pytest

from dpcalc.core import pld as core


@pytest.fixture
def shared_calls(monkeypatch):
    calls = []
    real = core.tight_epsilons_over_steps

    def spy(phase, delta, steps, **options):
        calls.append(list(steps))
        return real(phase, delta, steps, **options)

    monkeypatch.setattr(core, "tight_epsilons_over_steps", spy)
    return calls


@pytest.mark.parametrize("command", ["gdp", "rdp"])
def test_T_sweep_shares_the_tight_composition(dpcalc, shared_calls, command):
    document = dpcalc(command, "--p", "0.01", "--sigma", "1.2", "--T", "100:400:100", "--json").json()
    assert shared_calls == [[100, 200, 300, 400]]
    tights = [row["tight_epsilon"] for row in document["result"]["rows"]]
    assert tights == sorted(tights) and all(value > 0 for value in tights)
    # the certified figure of each row: within the interval a single pld call certifies
    single = dpcalc("pld", "--p", "0.01", "--sigma", "1.2", "--T", "300", "--json").json()["result"]
    assert single["epsilon_lower"] <= tights[2] <= single["epsilon_upper"] * (1 + 1e-3)


def test_no_tight_and_eps_sweeps_do_not_account(dpcalc, shared_calls):
    assert dpcalc("rdp", "--p", "0.01", "--sigma", "1.2", "--T", "100:400:100", "--no-tight", "--json").code == 0
    rows = dpcalc("rdp", "--p", "0.01", "--sigma", "1.2", "--T", "100:300:100", "--eps", "1", "--json").json()
    assert shared_calls == []
    assert all(row["tight_epsilon"] is None for row in rows["result"]["rows"])
