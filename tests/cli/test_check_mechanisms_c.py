"""`dpcalc check` with ptr and smooth-sensitivity releases: each accounted through the guarantee
it states (ptr (2 eps, delta)-DP; smooth-sensitivity laplace (eps, delta)-DP, cauchy eps-DP,
laplace-log-normal rho-zCDP with rho = eps^2/2), with every malformed-release message."""

from __future__ import annotations

import pytest

from dpcalc.core.budget import account_budget, load_budget
from dpcalc.core.zcdp import zcdp_epsilon

HEAD = """\
[budget]
epsilon = 4.0
delta = 1e-5
"""


def write(tmp_path, text):
    path = tmp_path / "budget.toml"
    path.write_text(text)
    return path


def release(body: str) -> str:
    return HEAD + '\n[[release]]\nname = "r"\n' + body


def test_ptr_release_is_its_total_guarantee(dpcalc, tmp_path):
    run = dpcalc("check", write(tmp_path, release('mechanism = "ptr"\nepsilon = 0.5\ndelta = 1e-6\n')), "--json")
    assert run.code == 0, run.stderr
    result = run.json()["result"]
    (own,) = result["releases"]
    # PTR with the user's eps = 0.5 is (1, 1e-6)-DP (test 0.5 + release 0.5), stated as given
    assert (own["mechanism"], own["epsilon"], own["delta"]) == ("ptr", 1.0, 1e-6)
    assert own["method"].startswith("PTR is (2 eps, delta)-DP") and "Dwork and Roth 2014, Sec. 7.2" in own["method"]
    # one (1, 1e-6) release at total delta 1e-5: optimal composition of one pair is below 1 (exact at its own delta)
    assert result["total"]["epsilon"] <= 1.0 and result["within_budget"] is True


def test_ptr_count_composes_as_dp(tmp_path):
    budget = load_budget(release('mechanism = "ptr"\nepsilon = 0.5\ndelta = 1e-7\ncount = 3\n'), "b.toml")
    result = account_budget(budget)
    equivalent = load_budget(release('mechanism = "dp"\nepsilon = 1.0\ndelta = 1e-7\ncount = 3\n'), "b.toml")
    assert result.total_epsilon == account_budget(equivalent).total_epsilon  # the same composition, exactly
    assert result.releases[0].mechanism == "ptr" and result.budget is budget


@pytest.mark.parametrize("noise, extra, pair", [
    ("laplace", "delta = 1e-6\n", (0.5, 1e-6)),
    ("cauchy", "", (0.5, 0.0)),
    ("student-t", "", (0.5, 0.0)),
])
def test_smooth_sensitivity_dp_releases(tmp_path, noise, extra, pair):
    text = release(f'mechanism = "smooth-sensitivity"\nnoise = "{noise}"\nepsilon = 0.5\n{extra}')
    result = account_budget(load_budget(text, "b.toml"))
    (own,) = result.releases
    assert (own.mechanism, own.epsilon, own.delta) == ("smooth-sensitivity", *pair)
    assert ("Bun and Steinke 2019, Thm 31" if noise == "student-t" else "Nissim, Raskhodnikova and Smith 2007") in own.method
    assert result.total_epsilon <= 0.5


def test_smooth_sensitivity_laplace_log_normal_is_zcdp(dpcalc, tmp_path):
    text = release('mechanism = "smooth-sensitivity"\nnoise = "laplace-log-normal"\nepsilon = 0.3\ncount = 4\n')
    run = dpcalc("check", write(tmp_path, text), "--json")
    assert run.code == 0, run.stderr
    result = run.json()["result"]
    # 4 releases at rho = 0.3^2 / 2 each compose to rho = 0.18 (Bun, Steinke 2016), stated at delta 1e-5 (CKS 2020)
    expected = zcdp_epsilon(4 * 0.045, 1e-5)[0]
    assert result["total"]["epsilon"] == pytest.approx(expected, rel=1e-12)
    assert result["releases"][0]["method"].startswith("(eps^2/2)-CDP = rho-zCDP Laplace log-normal noise")


def test_rdp_accountant_takes_the_zcdp_release(tmp_path):
    text = (HEAD + 'accountant = "rdp"\n\n[[release]]\nname = "r"\nmechanism = "smooth-sensitivity"\n'
            'noise = "laplace-log-normal"\nepsilon = 0.3\n')
    result = account_budget(load_budget(text, "b.toml"))
    assert result.method == "RDP accountant" and result.total_epsilon >= zcdp_epsilon(0.045, 1e-5)[0] * (1 - 1e-9)


def test_mixed_with_risk_limits(tmp_path):
    text = (HEAD + "max_advantage = 0.9\n\n[[release]]\nname = \"a\"\nmechanism = \"ptr\"\nepsilon = 0.5\ndelta = 1e-6\n"
            "\n[[release]]\nname = \"b\"\nmechanism = \"smooth-sensitivity\"\nnoise = \"cauchy\"\nepsilon = 0.5\n")
    result = account_budget(load_budget(text, "b.toml"))
    (check,) = result.risk
    # ptr (1, 1e-6) and cauchy (0.5, 0) through their trade-off curves: the advantage is below that of
    # one (1.5, 1e-6) pair, (e^1.5 - 1 + 2 * 1e-6) / (e^1.5 + 1) = 0.635..., and above the larger single one
    assert 0.46 < check.value < 0.636 and check.within


@pytest.mark.parametrize("body, message", [
    ('mechanism = "ptr"\nepsilon = 0.5\n', "b.toml:5: release 'r': missing 'delta' for mechanism 'ptr'"),
    ('mechanism = "ptr"\ndelta = 1e-6\n', "b.toml:5: release 'r': missing 'epsilon' for mechanism 'ptr'"),
    ('mechanism = "ptr"\nepsilon = 0.5\ndelta = 0\n', "b.toml:5: release 'r': delta must be in (0, 1), got 0"),
    ('mechanism = "ptr"\nepsilon = 0.5\ndelta = 1e-6\nbound = 2\n',
     "b.toml:5: release 'r': unknown key 'bound' for mechanism 'ptr' (did you mean 'count'?); allowed: epsilon, delta, count"),
    ('mechanism = "smooth-sensitivity"\nepsilon = 0.5\n',
     "b.toml:5: release 'r': missing 'noise' for mechanism 'smooth-sensitivity' (one of laplace, cauchy, "
     "laplace-log-normal, student-t)"),
    ('mechanism = "smooth-sensitivity"\nnoise = "gaussian"\nepsilon = 0.5\n',
     "b.toml:5: release 'r': noise must be one of laplace, cauchy, laplace-log-normal, student-t, got 'gaussian'"),
    ('mechanism = "smooth-sensitivity"\nnoise = "student-t"\nepsilon = 0.5\ndelta = 1e-6\n',
     "b.toml:5: release 'r': smooth-sensitivity noise 'student-t' gives pure epsilon-DP (delta = 0): remove 'delta'"),
    ('mechanism = "smooth-sensitivity"\nnoise = "laplace"\nepsilon = 0.5\n',
     "b.toml:5: release 'r': missing 'delta' for smooth-sensitivity noise 'laplace' (in (0, 1))"),
    ('mechanism = "smooth-sensitivity"\nnoise = "cauchy"\nepsilon = 0.5\ndelta = 1e-6\n',
     "b.toml:5: release 'r': smooth-sensitivity noise 'cauchy' gives pure epsilon-DP (delta = 0): remove 'delta'"),
    ('mechanism = "smooth-sensitivity"\nnoise = "laplace-log-normal"\nepsilon = 0.5\ndelta = 1e-6\n',
     "b.toml:5: release 'r': smooth-sensitivity noise 'laplace-log-normal' gives (epsilon^2/2)-CDP, without a delta: "
     "remove 'delta'"),
    ('mechanism = "smooth-sensitivity"\nnoise = "cauchy"\n',
     "b.toml:5: release 'r': missing 'epsilon' for mechanism 'smooth-sensitivity'"),
    ('mechanism = "smooth-sensitivity"\nnoise = "cauchy"\nepsilon = -1\n',
     "b.toml:5: release 'r': epsilon must be in (0, inf), got -1"),
])
def test_malformed_releases(body, message):
    from dpcalc.core.budget.schema import BudgetFileError

    with pytest.raises(BudgetFileError) as raised:
        load_budget(release(body), "b.toml")
    assert str(raised.value) == message


def test_laplace_log_normal_refused_with_risk_limits():
    from dpcalc.core.budget.schema import BudgetFileError

    text = (HEAD + "max_advantage = 0.9\n\n[[release]]\nname = \"r\"\nmechanism = \"smooth-sensitivity\"\n"
            "noise = \"laplace-log-normal\"\nepsilon = 0.3\n")
    with pytest.raises(BudgetFileError, match="a zcdp release has no trade-off curve"):
        load_budget(text, "b.toml")


def test_cli_exit_code_over_budget(dpcalc, tmp_path):
    text = HEAD.replace("4.0", "0.9") + '\n[[release]]\nname = "r"\nmechanism = "ptr"\nepsilon = 0.5\ndelta = 1e-6\n'
    run = dpcalc("check", write(tmp_path, text))
    assert run.code == 1
