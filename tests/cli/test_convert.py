"""`dpcalc convert` on the command line: every conversion's keys, every option, every error path."""

from __future__ import annotations

import math

import pytest

from dpcalc.cli import convert as cli
from dpcalc.core import conversions, gdp, zcdp

TOP_LEVEL_KEYS = {"command", "version", "inputs", "result", "warnings"}
INPUT_KEYS = {
    "from", "to", "eps", "delta", "mu", "rho", "order", "rdp_eps", "sigma", "noise_std", "scale", "sensitivity",
    "orders", "points", "group", "max_eps", "max_delta",
}

# Each conversion of the issue with its exact result keys (besides "theorem").
CONVERSIONS = [
    (("--from", "gdp", "--mu", "0.5", "--to", "dp"), {"epsilon", "delta"}),
    (("--from", "gdp", "--mu", "0.5", "--to", "dp", "--eps", "1"), {"epsilon", "delta"}),
    (("--from", "gdp", "--mu", "0.5", "--to", "zcdp"), {"rho"}),
    (("--from", "gdp", "--mu", "0.5", "--to", "gdp", "--group", "2"), {"mu"}),
    (("--from", "gdp", "--mu", "0.5", "--to", "rdp"), {"curve"}),
    (("--from", "gdp", "--mu", "0.5", "--to", "gaussian"), {"noise_std"}),
    (("--from", "gdp", "--mu", "0.5", "--to", "tradeoff"), {"tradeoff"}),
    (("--from", "zcdp", "--rho", "0.5", "--to", "dp"), {"epsilon", "epsilon_bs16", "delta", "order"}),
    (("--from", "zcdp", "--rho", "0.5", "--to", "dp", "--eps", "5"), {"epsilon", "delta", "delta_bs16", "order"}),
    (("--from", "zcdp", "--rho", "0.5", "--to", "zcdp", "--group", "2"), {"rho"}),
    (("--from", "zcdp", "--rho", "0.5", "--to", "rdp"), {"curve"}),
    (("--from", "zcdp", "--rho", "0.5", "--to", "gaussian"), {"noise_std"}),
    (("--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "gaussian"),
     {"noise_std", "noise_std_classic", "classic_valid"}),
    (("--from", "dp", "--eps", "1", "--to", "laplace"), {"scale"}),
    (("--from", "dp", "--eps", "1", "--to", "zcdp"), {"rho"}),
    (("--from", "dp", "--eps", "1", "--to", "gdp"), {"mu"}),
    (("--from", "dp", "--eps", "1", "--to", "rdp"), {"curve"}),
    (("--from", "dp", "--eps", "1", "--delta", "1e-6", "--to", "dp", "--group", "3"), {"epsilon", "delta"}),
    (("--from", "dp", "--eps", "1", "--delta", "1e-6", "--to", "tradeoff"), {"tradeoff"}),
    (("--from", "gaussian", "--sigma", "2", "--to", "gdp"), {"mu"}),
    (("--from", "gaussian", "--sigma", "2", "--to", "zcdp"), {"rho"}),
    (("--from", "gaussian", "--sigma", "2", "--to", "dp"), {"epsilon", "delta", "mu"}),
    (("--from", "gaussian", "--sigma", "2", "--to", "rdp"), {"curve"}),
    (("--from", "gaussian", "--sigma", "2", "--to", "tradeoff"), {"tradeoff"}),
    (("--from", "laplace", "--scale", "2", "--to", "dp"), {"epsilon", "delta"}),
    (("--from", "laplace", "--scale", "2", "--to", "dp", "--delta", "1e-5"), {"epsilon", "delta"}),
    (("--from", "laplace", "--scale", "2", "--to", "dp", "--eps", "0.1"), {"epsilon", "delta"}),
    (("--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "laplace"), {"scale"}),
    (("--from", "laplace", "--scale", "2", "--to", "rdp"), {"curve"}),
    (("--from", "laplace", "--scale", "2", "--to", "zcdp"), {"rho"}),
    (("--from", "rdp", "--order", "8", "--rdp-eps", "0.5", "--to", "dp"), {"epsilon", "epsilon_classic", "delta"}),
    (("--from", "rdp", "--order", "8", "--rdp-eps", "0.5", "--to", "dp", "--eps", "2"),
     {"epsilon", "delta", "delta_classic"}),
    (("--from", "rdp", "--order", "8", "--rdp-eps", "0.5", "--to", "gaussian"), {"noise_std"}),
]


@pytest.mark.parametrize("args, keys", CONVERSIONS)
def test_result_keys_and_theorem(dpcalc, args, keys):
    run = dpcalc("convert", *args, "--json")
    assert run.code == 0, run.stderr
    document = run.json()
    assert set(document) == TOP_LEVEL_KEYS and document["command"] == "convert"
    assert set(document["inputs"]) == INPUT_KEYS
    assert set(document["result"]) == keys | {"theorem"}
    assert isinstance(document["result"]["theorem"], str) and document["result"]["theorem"]


@pytest.mark.parametrize("args, keys", CONVERSIONS)
def test_table_mode(dpcalc, args, keys):
    run = dpcalc("convert", *args)
    assert run.code == 0
    assert "theorem" in run.stdout
    for key in keys - {"curve", "tradeoff"}:
        assert key in run.stdout


def test_spec_gaussian_calibration(dpcalc):
    # reference values (docs/reference-values.md, Gaussian calibration): eps = 1, delta = 1e-5, sensitivity 1 ->
    # analytic 3.730632, classic 4.844805.
    run = dpcalc("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "gaussian", "--json")
    document = run.json()
    result = document["result"]
    assert result["noise_std"] == pytest.approx(3.730632, abs=5e-7)
    assert result["noise_std_classic"] == pytest.approx(4.844805, abs=5e-7)
    assert result["classic_valid"] is False
    assert result["theorem"].startswith("Balle, Wang 2018, Thm 8")
    assert document["warnings"] == [
        "the classic noise std (Dwork, Roth 2014, Thm A.1) is valid only for 0 < eps < 1, not eps = 1: use the "
        "analytic one."
    ]
    assert document["inputs"]["sensitivity"] == 1.0
    table = dpcalc("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "gaussian")
    # docs/reference-values.md: 3.730632 / 4.844805 to nearest; the classic sigma (4.8448052...) is printed rounded
    # up, since printing less noise than the formula asks for would not meet (eps, delta)
    assert "3.730632" in table.stdout and "4.844806" in table.stdout
    assert table.stderr.startswith("Warning: the classic noise std")


def test_sensitivity_scales_the_noise(dpcalc):
    one = dpcalc("convert", "--from", "dp", "--eps", "0.5", "--delta", "1e-6", "--to", "gaussian", "--json").json()
    three = dpcalc("convert", "--from", "dp", "--eps", "0.5", "--delta", "1e-6", "--to", "gaussian",
                   "--sensitivity", "3", "--json").json()
    assert three["result"]["noise_std"] == pytest.approx(3 * one["result"]["noise_std"], rel=1e-12)
    assert one["result"]["classic_valid"] is True and one["warnings"] == []
    laplace = dpcalc("convert", "--from", "dp", "--eps", "0.5", "--to", "laplace", "--sensitivity", "2", "--json")
    assert laplace.json()["result"]["scale"] == 4.0


def test_round_trip_gdp_dp_gaussian(dpcalc):
    # gdp -> dp, then dp -> gaussian gives sigma = sensitivity/mu back.
    first = dpcalc("convert", "--from", "gdp", "--mu", "0.5", "--to", "dp", "--delta", "1e-6", "--json").json()
    epsilon = first["result"]["epsilon"]
    second = dpcalc("convert", "--from", "dp", "--eps", repr(epsilon), "--delta", "1e-6", "--to", "gaussian",
                    "--sensitivity", "2", "--json").json()
    assert second["result"]["noise_std"] == pytest.approx(2 / 0.5, rel=1e-9)


def test_gdp_to_dp_matches_core_and_defaults_delta(dpcalc):
    document = dpcalc("convert", "--from", "gdp", "--mu", "0.5", "--to", "dp", "--json").json()
    assert document["inputs"]["delta"] == 1e-5 and document["inputs"]["eps"] is None
    assert document["result"]["epsilon"] == gdp.epsilon_for_delta(1e-5, 0.5)
    assert document["result"]["theorem"] == "Dong, Roth, Su 2022, Cor. 2.13 (exact)"
    at_eps = dpcalc("convert", "--from", "gdp", "--mu", "0.5", "--to", "dp", "--eps", "1", "--json").json()
    assert at_eps["result"]["delta"] == gdp.delta_for_epsilon(1.0, 0.5)
    assert at_eps["inputs"]["eps"] == 1.0 and at_eps["inputs"]["delta"] is None


def test_zcdp_to_dp(dpcalc):
    result = dpcalc("convert", "--from", "zcdp", "--rho", "0.5", "--to", "dp", "--json").json()["result"]
    tight, order = zcdp.zcdp_epsilon(0.5, 1e-5)
    assert result["epsilon"] == tight and result["order"] == order
    assert result["epsilon_bs16"] == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e5)), rel=1e-15)
    assert result["epsilon"] < result["epsilon_bs16"]
    assert "Canonne, Kamath, Steinke 2020, Prop. 12" in result["theorem"]


def test_rdp_to_dp_both_conversions(dpcalc):
    result = dpcalc("convert", "--from", "rdp", "--order", "8", "--rdp-eps", "0.5", "--to", "dp",
                    "--delta", "1e-6", "--json").json()["result"]
    assert result["epsilon"] == conversions.rdp_to_epsilon(8, 0.5, 1e-6, "improved")
    assert result["epsilon_classic"] == pytest.approx(0.5 + math.log(1e6) / 7, rel=1e-15)
    assert result["epsilon"] < result["epsilon_classic"]


def test_group_privacy(dpcalc):
    document = dpcalc("convert", "--from", "dp", "--eps", "0.5", "--delta", "1e-6", "--to", "dp",
                      "--group", "3", "--json").json()
    assert document["inputs"]["group"] == 3
    assert document["result"]["epsilon"] == 1.5
    assert document["result"]["delta"] == pytest.approx(1e-6 * (1 + math.exp(0.5) + math.exp(1.0)), rel=1e-14)
    assert document["result"]["theorem"].startswith("group privacy, k = 3")
    mu = dpcalc("convert", "--from", "gdp", "--mu", "0.5", "--to", "gdp", "--group", "4", "--json").json()
    assert mu["result"]["mu"] == 2.0
    rho = dpcalc("convert", "--from", "zcdp", "--rho", "0.5", "--to", "zcdp", "--group", "3", "--json").json()
    assert rho["result"]["rho"] == 4.5
    vacuous = dpcalc("convert", "--from", "dp", "--eps", "1", "--delta", "0.01", "--to", "dp", "--group", "50",
                     "--json").json()
    assert vacuous["result"]["delta"] == 1.0 and "vacuous" in vacuous["warnings"][0]


def test_rdp_curve_orders(dpcalc):
    document = dpcalc("convert", "--from", "gaussian", "--noise-std", "4", "--sensitivity", "2", "--to", "rdp",
                      "--orders", "2, 8,32.5", "--json").json()
    assert document["inputs"]["orders"] == [2.0, 8.0, 32.5]
    assert document["result"]["curve"] == [
        {"order": 2.0, "rdp": 0.25}, {"order": 8.0, "rdp": 1.0}, {"order": 32.5, "rdp": 4.0625},
    ]
    default = dpcalc("convert", "--from", "zcdp", "--rho", "0.1", "--to", "rdp", "--json").json()
    assert [point["order"] for point in default["result"]["curve"]] == list(conversions.DEFAULT_CONVERT_ORDERS)
    laplace = dpcalc("convert", "--from", "laplace", "--scale", "2", "--to", "rdp", "--orders", "2", "--json").json()
    assert laplace["result"]["curve"][0]["rdp"] == conversions.laplace_rdp(2.0, 2.0)
    table = dpcalc("convert", "--from", "gaussian", "--sigma", "4", "--to", "rdp", "--orders", "2,8")
    assert "RDP epsilon" in table.stdout and "0.0625" in table.stdout
    # ranges start:stop:step expand as sweeps expand theirs (exact decimals, stop included)
    ranged = dpcalc("convert", "--from", "gdp", "--mu", "1", "--to", "rdp", "--orders", "1.5:2.5:0.25,1e10",
                    "--json").json()
    assert ranged["inputs"]["orders"] == [1.5, 1.75, 2.0, 2.25, 2.5, 1e10]
    assert ranged["result"]["curve"][-1] == {"order": 1e10, "rdp": 5e9}


def test_tradeoff_points(dpcalc):
    document = dpcalc("convert", "--from", "gdp", "--mu", "1", "--to", "tradeoff", "--points", "5", "--json").json()
    curve = document["result"]["tradeoff"]
    assert [point["alpha"] for point in curve] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert curve[2]["beta"] == pytest.approx(gdp.tradeoff(0.5, 1.0), rel=1e-15)
    assert document["inputs"]["points"] == 5
    default = dpcalc("convert", "--from", "dp", "--eps", "1", "--to", "tradeoff", "--json").json()
    assert len(default["result"]["tradeoff"]) == cli.DEFAULT_POINTS


def test_cli_notions_match_the_core():
    assert cli.SOURCES == conversions.SOURCE_NOTIONS and cli.TARGETS == conversions.TARGET_NOTIONS
    assert cli.DEFAULT_ORDERS_TEXT == ",".join(f"{order:g}" for order in conversions.DEFAULT_CONVERT_ORDERS)
    assert cli.DEFAULT_POINTS == conversions.DEFAULT_TRADEOFF_POINTS


def test_max_eps(dpcalc):
    base = ("convert", "--from", "gdp", "--mu", "0.5", "--to", "dp")
    within = dpcalc(*base, "--max-eps", "3", "--json")
    budget = within.json()["budget"]
    assert within.code == 0 and budget["within_budget"] is True and budget["max_epsilon"] == 3.0
    assert budget["epsilon"] == within.json()["result"]["epsilon"] and budget["basis"].startswith("gdp -> dp")
    over = dpcalc(*base, "--max-eps", "1", "--json")
    assert over.code == 1 and over.json()["budget"]["within_budget"] is False
    assert "Budget exceeded" in over.stderr


def test_infinite_values_are_strict_json(dpcalc):
    run = dpcalc("convert", "--from", "dp", "--eps", "0", "--delta", "1e-5", "--to", "gaussian", "--json")
    result = run.json()["result"]
    assert result["noise_std_classic"] == "inf" and math.isfinite(result["noise_std"])
    big = dpcalc("convert", "--from", "gdp", "--mu", "1e300", "--to", "dp", "--json").json()
    assert big["result"]["epsilon"] == "inf" and "infinite" in big["warnings"][0]


@pytest.mark.parametrize(
    "args, message",
    [
        (("--to", "dp"), "--from is required: one of dp, gdp, zcdp, rdp, gaussian, laplace"),
        (("--from", "gdp", "--mu", "1"), "--to is required: one of dp, gdp, zcdp, rdp, gaussian, laplace, tradeoff"),
        (("--from", "xdp", "--to", "dp"),
         "Invalid value for '--from': 'xdp' is not one of 'dp', 'gdp', 'zcdp', 'rdp', 'gaussian', 'laplace'."),
        (("--from", "tradeoff", "--to", "dp"),
         "Invalid value for '--from': 'tradeoff' is not one of 'dp', 'gdp', 'zcdp', 'rdp', 'gaussian', 'laplace'."),
        (("--from", "gdp", "--mu", "1", "--to", "pld"),
         "Invalid value for '--to': 'pld' is not one of 'dp', 'gdp', 'zcdp', 'rdp', 'gaussian', 'laplace', "
         "'tradeoff'."),
        # Missing and extra options name the option.
        (("--from", "gdp", "--to", "dp"), "--from gdp needs --mu (mu, > 0)"),
        (("--from", "dp", "--to", "tradeoff"), "--from dp needs --eps (epsilon, >= 0)"),
        (("--from", "rdp", "--order", "2", "--to", "dp"),
         "--from rdp needs --rdp-eps (the RDP epsilon at that order, >= 0)"),
        (("--from", "rdp", "--rdp-eps", "2", "--to", "dp"), "--from rdp needs --order (the Renyi order, > 1)"),
        (("--from", "zcdp", "--to", "dp"), "--from zcdp needs --rho (rho, > 0)"),
        (("--from", "gaussian", "--to", "dp"), "--from gaussian needs --sigma (the noise multiplier, noise std / "
                                               "sensitivity, > 0) or --noise-std (the noise std, > 0)"),
        (("--from", "gaussian", "--sigma", "1", "--noise-std", "1", "--to", "dp"),
         "--sigma and --noise-std cannot be given together; sigma is noise std / sensitivity; give one"),
        # --sigma was the noise std here: beside a sensitivity the old and the new meaning differ, so it is refused
        (("--from", "gaussian", "--sigma", "4", "--sensitivity", "2", "--to", "dp"),
         "--sensitivity goes with --noise-std: --sigma is the noise multiplier, noise std / sensitivity (for the "
         "noise std itself give --noise-std)"),
        (("--from", "laplace", "--to", "dp"), "--from laplace needs --scale (the Laplace scale b, > 0)"),
        (("--from", "gdp", "--mu", "1", "--rho", "1", "--to", "dp"),
         "--rho does not apply to --from gdp --to dp; it takes --mu, --delta, --eps, --group, --max-eps, --max-delta"),
        (("--from", "gdp", "--mu", "1", "--to", "zcdp", "--delta", "1e-5"),
         "--delta does not apply to --from gdp --to zcdp; it takes --mu, --group"),
        (("--from", "gdp", "--mu", "1", "--to", "tradeoff", "--orders", "2"),
         "--orders does not apply to --from gdp --to tradeoff; it takes --mu, --points, --group"),
        (("--from", "gdp", "--mu", "1", "--to", "rdp", "--points", "3"),
         "--points does not apply to --from gdp --to rdp; it takes --mu, --orders, --group"),
        (("--from", "zcdp", "--rho", "1", "--to", "dp", "--sensitivity", "2"),
         "--sensitivity does not apply to --from zcdp --to dp; it takes --rho, --delta, --eps, --group, --max-eps, --max-delta"),
        (("--from", "dp", "--eps", "1", "--to", "dp", "--mu", "2"),
         "--mu does not apply to --from dp --to dp; it takes --eps, --delta, --group, --max-eps, --max-delta"),
        (("--from", "laplace", "--scale", "1", "--to", "dp", "--delta", "1e-5", "--eps", "1"),
         "--delta and --eps cannot be given together; give --delta to get epsilon, or --eps to get delta"),
        (("--from", "laplace", "--scale", "1", "--to", "dp", "--delta", "1"), "--delta must be in [0, 1), got 1"),
        (("--from", "laplace", "--scale", "1", "--to", "zcdp", "--delta", "1e-5"),
         "--delta does not apply to --from laplace --to zcdp; it takes --scale, --sensitivity, --group"),
        (("--from", "gdp", "--mu", "1", "--to", "zcdp", "--max-eps", "1"),
         "--max-eps applies only with --to dp, the only target with an epsilon"),
        (("--from", "gdp", "--mu", "1", "--to", "dp", "--delta", "1e-5", "--eps", "1"),
         "--delta and --eps cannot be given together; give --delta to get epsilon, or --eps to get delta"),
        # --group where it does not apply.
        (("--from", "rdp", "--order", "2", "--rdp-eps", "1", "--to", "dp", "--group", "2"),
         "--group does not apply to --from rdp: group privacy for RDP changes the order (Mironov 2017); "
         "convert to dp first, then use --from dp --group"),
        (("--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "gaussian", "--group", "2"),
         "--group does not apply to --to gaussian: group privacy weakens a guarantee, while calibrating noise "
         "that protects groups of k means multiplying --sensitivity by k"),
    ],
)
def test_usage_errors(dpcalc, args, message):
    run = dpcalc("convert", *args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


@pytest.mark.parametrize(
    "args, start, hint",
    [
        (("--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "zcdp"),
         "no conversion dp -> zcdp: (eps, delta)-DP with delta > 0 implies no rho-zCDP", "zcdp -> dp exists"),
        (("--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "gdp"),
         "no conversion dp -> gdp: (eps, delta)-DP with delta > 0 implies no mu-GDP", "use --to gaussian"),
        (("--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "rdp"),
         "no conversion dp -> rdp: (eps, delta)-DP with delta > 0 implies no RDP curve", "rdp -> dp exists"),
        (("--from", "dp", "--eps", "1", "--to", "gaussian"),
         "no conversion dp -> gaussian: no Gaussian noise gives pure DP", "use --to laplace"),
        (("--from", "zcdp", "--rho", "1", "--to", "gdp"),
         "no conversion zcdp -> gdp: rho-zCDP does not imply mu-GDP in general", "exists, one way only"),
        (("--from", "rdp", "--order", "2", "--rdp-eps", "1", "--to", "zcdp"),
         "no conversion rdp -> zcdp:", "zcdp -> rdp exists, one way only"),
        (("--from", "rdp", "--order", "2", "--rdp-eps", "1", "--to", "gdp"),
         "no conversion rdp -> gdp:", "gdp -> rdp exists, one way only"),
        (("--from", "rdp", "--order", "2", "--rdp-eps", "1", "--to", "rdp"), "no conversion rdp -> rdp:", ""),
        (("--from", "gaussian", "--sigma", "1", "--to", "gaussian"), "no conversion gaussian -> gaussian:", ""),
        (("--from", "gaussian", "--sigma", "1", "--to", "laplace"), "no conversion gaussian -> laplace:", ""),
        (("--from", "laplace", "--scale", "1", "--to", "gaussian"), "no conversion laplace -> gaussian:", ""),
        (("--from", "laplace", "--scale", "1", "--to", "gdp"), "no conversion laplace -> gdp:", ""),
        (("--from", "laplace", "--scale", "1", "--to", "tradeoff"), "no conversion laplace -> tradeoff:", ""),
        (("--from", "zcdp", "--rho", "1", "--to", "tradeoff"), "no conversion zcdp -> tradeoff:", ""),
        (("--from", "gdp", "--mu", "1", "--to", "laplace"), "no conversion gdp -> laplace:", "--to gaussian"),
    ],
)
def test_conversions_that_do_not_exist(dpcalc, args, start, hint):
    run = dpcalc("convert", *args)
    assert run.code == 2 and run.stdout == ""
    assert run.stderr.startswith(f"Error: {start}") and run.stderr.count("\n") == 1
    assert hint in run.stderr
    source = args[1]
    assert f"From {source}, dpcalc converts to: {conversions.AVAILABLE[source].format_map(cli._TERMS)}." in run.stderr


def test_pure_dp_to_laplace_with_zero_epsilon(dpcalc):
    run = dpcalc("convert", "--from", "dp", "--eps", "0", "--to", "laplace")
    assert (run.code, run.stderr) == (2, "Error: --to laplace needs eps > 0: eps = 0 would need infinite noise\n")


@pytest.mark.parametrize(
    "args, message",
    [
        (("--from", "dp", "--eps", "-1", "--to", "tradeoff"), "--eps must be in [0, inf), got -1"),
        (("--from", "dp", "--eps", "1", "--delta", "1", "--to", "tradeoff"), "--delta must be in [0, 1), got 1"),
        (("--from", "dp", "--eps", "abc", "--to", "tradeoff"), "--eps must be a number in [0, inf), got 'abc'"),
        (("--from", "gdp", "--mu", "1", "--to", "dp", "--delta", "0"), "--delta must be in (0, 1), got 0"),
        (("--from", "gdp", "--mu", "1", "--to", "dp", "--eps", "nan"), "--eps must be in [0, inf), got nan"),
        (("--from", "gdp", "--mu", "0", "--to", "dp"), "--mu must be in (0, inf), got 0"),
        (("--from", "zcdp", "--rho", "inf", "--to", "dp"), "--rho must be in (0, inf), got inf"),
        (("--from", "rdp", "--order", "1", "--rdp-eps", "1", "--to", "dp"), "--order must be in (1, inf), got 1"),
        (("--from", "rdp", "--order", "2", "--rdp-eps", "-1", "--to", "dp"), "--rdp-eps must be in [0, inf), got -1"),
        (("--from", "gaussian", "--sigma", "0", "--to", "dp"), "--sigma must be in (0, inf), got 0"),
        (("--from", "gaussian", "--noise-std", "1", "--sensitivity", "-2", "--to", "dp"),
         "--sensitivity must be in (0, inf), got -2"),
        (("--from", "laplace", "--scale", "-1", "--to", "dp"), "--scale must be in (0, inf), got -1"),
        (("--from", "gdp", "--mu", "1", "--to", "rdp", "--orders", "2,1"), "--orders must be in (1, inf), got 1"),
        (("--from", "gdp", "--mu", "1", "--to", "rdp", "--orders", "2,,3"),
         "--orders must be a comma-separated list of numbers in (1, inf), got '2,,3'"),
        (("--from", "gdp", "--mu", "1", "--to", "rdp", "--orders", "2,x"),
         "--orders must be a number in (1, inf), got 'x'"),
        (("--from", "gdp", "--mu", "1", "--to", "rdp", "--orders", "2:3"),
         "--orders: a range is start:stop:step, got '2:3'"),
        (("--from", "gdp", "--mu", "1", "--to", "rdp", "--orders", "0.5:2:0.5"),
         "--orders must be in (1, inf), got 0.5"),
        (("--from", "gdp", "--mu", "1", "--to", "rdp", "--orders", "2:1e9:1"),
         "--orders: the range '2:1e9:1' has 999999999 values; --orders takes at most 100000 orders (ranges expanded)"),
        (("--from", "gdp", "--mu", "1", "--to", "tradeoff", "--points", "1"),
         "--points must be an integer in [2, 100000], got 1"),
        (("--from", "gdp", "--mu", "1", "--to", "tradeoff", "--points", "2.5"),
         "--points must be an integer in [2, 100000], got 2.5"),
        (("--from", "gdp", "--mu", "1", "--to", "dp", "--group", "0"), "--group must be an integer in [1, inf), got 0"),
        (("--from", "gdp", "--mu", "1", "--to", "dp", "--max-eps", "-1"), "--max-eps must be in [0, inf), got -1"),
    ],
)
def test_invalid_values(dpcalc, args, message):
    run = dpcalc("convert", *args)
    assert (run.code, run.stderr, run.stdout) == (2, f"Error: {message}\n", "")


def test_help_lists_notions_and_examples(dpcalc):
    run = dpcalc("convert", "--help")
    assert run.code == 0
    for notion in cli.TARGETS:
        assert notion in run.stdout
    assert "dpcalc convert --from dp --eps 1 --delta 1e-5 --to gaussian" in run.stdout


def test_the_command_names_every_term_of_the_core_refusals():
    assert set(cli._TERMS) == set(conversions.TERMS)


# The Laplace mechanism's privacy profile (docs/mathematics.md §6): delta(eps) = 1 - e^((eps - eps0)/2)
# below eps0 = sensitivity/scale; the references are the closed forms, evaluated here in float
# (their own accuracy against mpmath is tests/core/test_laplace_profile.py's).


def test_laplace_to_dp_at_a_delta_and_at_an_epsilon(dpcalc):
    run = dpcalc("convert", "--from", "laplace", "--scale", "1", "--to", "dp", "--eps", "0", "--json").json()
    assert run["inputs"]["eps"] == 0.0 and run["inputs"]["delta"] is None
    # delta(0) = 1 - e^(-1/2) = 0.39346934028736658 (mpmath, 30 digits), the total variation distance
    assert run["result"]["delta"] == pytest.approx(0.39346934028736658, rel=1e-15)
    assert run["result"]["epsilon"] == 0.0 and "privacy profile" in run["result"]["theorem"]
    run = dpcalc("convert", "--from", "laplace", "--scale", "2", "--sensitivity", "3", "--to", "dp",
                 "--delta", "1e-5", "--json").json()
    assert run["inputs"]["delta"] == 1e-5
    assert run["result"] == {"epsilon": pytest.approx(1.5 + 2 * math.log1p(-1e-5), rel=1e-15), "delta": 1e-5,
                             "theorem": run["result"]["theorem"]}
    # at or above eps0 nothing is left: delta = 0
    run = dpcalc("convert", "--from", "laplace", "--scale", "1", "--to", "dp", "--eps", "1", "--json").json()
    assert run["result"]["delta"] == 0.0


def test_laplace_to_dp_keeps_pure_dp_without_a_delta(dpcalc):
    for extra in ((), ("--delta", "0")):
        run = dpcalc("convert", "--from", "laplace", "--scale", "4", "--to", "dp", *extra, "--json").json()
        assert (run["result"]["epsilon"], run["result"]["delta"]) == (0.25, 0.0)
        assert run["result"]["theorem"].startswith("Dwork, Roth 2014, Thm 3.6")
        assert run["inputs"]["delta"] == (None if not extra else 0.0)


def test_laplace_to_dp_a_large_delta_gives_epsilon_zero(dpcalc):
    # delta >= 1 - e^(-eps0/2) = delta(0): epsilon 0
    run = dpcalc("convert", "--from", "laplace", "--scale", "1", "--to", "dp", "--delta", "0.4", "--json").json()
    assert run["result"]["epsilon"] == 0.0


def test_laplace_to_dp_gate_and_group(dpcalc):
    # epsilon = 1 + 2 log(0.999) = 0.997999: within 0.999, over 0.99
    within = dpcalc("convert", "--from", "laplace", "--scale", "1", "--to", "dp", "--delta", "1e-3", "--max-eps", "0.999")
    over = dpcalc("convert", "--from", "laplace", "--scale", "1", "--to", "dp", "--delta", "1e-3", "--max-eps", "0.99")
    assert (within.code, over.code) == (0, 1)
    run = dpcalc("convert", "--from", "laplace", "--scale", "1", "--to", "dp", "--delta", "1e-3", "--json",
                 "--group", "2").json()
    # group privacy doubles the sensitivity: eps0 = 2
    assert run["result"]["epsilon"] == pytest.approx(2 + 2 * math.log1p(-1e-3), rel=1e-15)


def test_dp_with_delta_to_laplace(dpcalc):
    run = dpcalc("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "laplace", "--sensitivity", "2",
                 "--json").json()
    scale = run["result"]["scale"]
    assert scale == pytest.approx(2 / (1 - 2 * math.log1p(-1e-5)), rel=1e-15)
    # the round trip: that scale gives epsilon 1 at delta 1e-5 back
    back = dpcalc("convert", "--from", "laplace", "--scale", repr(scale), "--sensitivity", "2", "--to", "dp",
                  "--delta", "1e-5", "--json").json()
    assert back["result"]["epsilon"] == pytest.approx(1.0, rel=1e-14)
    # eps = 0 with delta > 0 has a finite scale: delta(0) = 1 - e^(-eps0/2) = delta
    run = dpcalc("convert", "--from", "dp", "--eps", "0", "--delta", "0.3934693402873666", "--to", "laplace",
                 "--json").json()
    assert run["result"]["scale"] == pytest.approx(1.0, rel=1e-14)
    table = dpcalc("convert", "--from", "dp", "--eps", "1", "--delta", "1e-5", "--to", "laplace").stdout
    assert "smallest scale that meets (eps, delta)" in table
    pure = dpcalc("convert", "--from", "dp", "--eps", "0.5", "--to", "laplace", "--json").json()
    assert pure["result"]["scale"] == 2.0 and pure["result"]["theorem"] == "Dwork, Roth 2014, Thm 3.6"


def test_gaussian_source_sigma_is_the_noise_multiplier(dpcalc):
    # --noise-std 4 --sensitivity 2 is noise multiplier 2: the same guarantee as --sigma 2 (mu = 0.5)
    by_std = dpcalc("convert", "--from", "gaussian", "--noise-std", "4", "--sensitivity", "2", "--to", "dp", "--json")
    by_sigma = dpcalc("convert", "--from", "gaussian", "--sigma", "2", "--to", "dp", "--json")
    assert (by_std.code, by_sigma.code) == (0, 0)
    assert by_std.json()["result"] == by_sigma.json()["result"]
    assert by_std.json()["result"]["mu"] == 0.5
    inputs = by_std.json()["inputs"]
    assert (inputs["sigma"], inputs["noise_std"], inputs["sensitivity"]) == (None, 4.0, 2.0)
    assert by_sigma.json()["inputs"]["sigma"] == 2.0 and by_sigma.json()["inputs"]["noise_std"] is None
