"""rdp --csv: one row per order (docs/json.md, "CSV"): the run's inputs, the target, the order,
its composed RDP and the epsilon (or delta, with --eps) that order alone gives."""

from __future__ import annotations

import csv
import io

import pytest

from dpcalc.core.rdp.accountant import delta_by_order, delta_from_curve, epsilon_by_order, epsilon_from_curve

RUN = ["--p", "0.004", "--sigma", "1.1", "--T", "1000", "--no-tight"]


def table(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_one_row_per_order_whose_smallest_epsilon_is_the_commands(dpcalc):
    rows = table(dpcalc("rdp", *RUN, "--orders", "2,4,8,16,32", "--csv").stdout)
    document = dpcalc("rdp", *RUN, "--orders", "2,4,8,16,32", "--json").json()
    assert [float(row["order"]) for row in rows] == [2, 4, 8, 16, 32]
    assert list(rows[0])[-3:] == ["order", "rdp", "epsilon"]
    assert {row["p"] for row in rows} == {"0.004"} and {row["T"] for row in rows} == {"1000"}
    assert {row["delta"] for row in rows} == {"1e-05"} and {row["conversion"] for row in rows} == {"improved"}
    assert [float(row["rdp"]) for row in rows] == [point["rdp"] for point in document["result"]["curve"]]
    assert min(float(row["epsilon"]) for row in rows) == document["result"]["epsilon"]  # the same floats, exactly


def test_with_eps_each_order_gives_a_delta(dpcalc):
    rows = table(dpcalc("rdp", *RUN, "--eps", "1", "--orders", "2,4,8", "--csv").stdout)
    document = dpcalc("rdp", *RUN, "--eps", "1", "--orders", "2,4,8", "--json").json()
    assert list(rows[0])[-4:] == ["conversion", "order", "rdp", "delta"] and rows[0]["eps"] == "1.0"
    assert min(float(row["delta"]) for row in rows) == document["result"]["delta"]


def test_a_sweep_gives_each_combination_its_orders(dpcalc):
    rows = table(dpcalc("rdp", "--p", "0.004", "--sigma", "0.8,1.1", "--T", "1000", "--orders", "2,4,8",
                        "--no-tight", "--csv").stdout)
    assert [(row["sigma"], row["order"]) for row in rows] == [
        ("0.8", "2.0"), ("0.8", "4.0"), ("0.8", "8.0"), ("1.1", "2.0"), ("1.1", "4.0"), ("1.1", "8.0")]
    assert "curve" not in rows[0] and "tight_epsilon" not in rows[0]


def test_several_phases_are_columns_of_their_own(dpcalc):
    rows = table(dpcalc("rdp", "--phase", "p=0.01,sigma=2,T=500", "--phase", "p=0.01,sigma=0.9,T=1800",
                        "--orders", "2,4", "--no-tight", "--csv").stdout)
    assert len(rows) == 2 and rows[0]["phase1.sigma"] == "2.0" and rows[0]["phase2.T"] == "1800"


@pytest.mark.parametrize("conversion", ["improved", "classic"])
def test_per_order_figures_meet_at_the_curves_optimum(conversion):
    orders, rdp = [1.5, 2.0, 8.0, 64.0], [0.001, 0.01, 0.3, 4.0]
    assert min(epsilon_by_order(orders, rdp, 1e-5, conversion)) == epsilon_from_curve(orders, rdp, 1e-5, conversion)[0]
    assert min(delta_by_order(orders, rdp, 0.5, conversion)) == delta_from_curve(orders, rdp, 0.5, conversion)[0]
