"""Budget files with the release types exponential, noisy-max and svt (`dpcalc check`): each
accounted as the eps-DP mechanism it is, exponential mechanisms also through bounded range."""

from __future__ import annotations

import math

import pytest

from dpcalc.core import composition
from dpcalc.core.budget import account_budget, load_budget
from dpcalc.core.budget.schema import BudgetFileError
from dpcalc.core.zcdp import zcdp_epsilon

HEADER = """\
[budget]
epsilon = 10.0
delta = 1e-5
"""


def budget(*releases, header=HEADER):
    return load_budget(header + "".join("\n[[release]]\n" + release for release in releases), "budget.toml")


def write(tmp_path, text):
    path = tmp_path / "budget.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("release, basis", [
    ('name = "pick"\nmechanism = "exponential"\nepsilon = 0.5\n', "Thm 3.10"),
    ('name = "pick"\nmechanism = "noisy-max"\nnoise = "gumbel"\nepsilon = 0.5\n', "Thm 3.10"),
    ('name = "pick"\nmechanism = "noisy-max"\nnoise = "laplace"\nepsilon = 0.5\n', "Claim 3.9"),
    ('name = "pick"\nmechanism = "noisy-max"\nnoise = "exponential"\nepsilon = 0.5\n', "McKenna and Sheldon 2020"),
    ('name = "pick"\nmechanism = "svt"\nepsilon = 0.5\n', "Thm 3.23, 3.25"),
])
def test_one_release_is_its_pure_epsilon(release, basis):
    # one use: the mechanism is (0.5, 0)-DP; the total at delta 1e-5 is the optimal composition of
    # the one release, a little below 0.5 (some of delta is spent)
    result = account_budget(budget(release))
    (own,) = result.releases
    assert (own.epsilon, own.delta) == (0.5, 0.0) and basis in own.method
    assert 0.5 - 1e-4 <= result.total_epsilon <= 0.5 and result.within_budget


def test_many_exponential_mechanisms_compose_through_zcdp():
    # 100 uses of a 0.1-DP exponential mechanism: eps^2/8-zCDP each (bounded range), rho = 0.125,
    # beats their optimal composition as eps-DP (Kairouz, Oh, Viswanath: 4.30679 at delta 1e-5)
    result = account_budget(budget('name = "top"\nmechanism = "exponential"\nepsilon = 0.1\ncount = 100\n'))
    expected = zcdp_epsilon(0.125, 1e-5)[0]
    optimal = composition.compose(0.1, 0.0, 100, total_delta=1e-5).optimal.epsilon
    assert optimal == pytest.approx(4.30679, abs=5e-6)  # docs/reference-values.md: 100-fold 0.1-DP, optimal
    assert expected < optimal
    # the classical conversion rho + 2 sqrt(rho ln(1/delta)) bounds the one used from above (Bun, Steinke 2016)
    assert expected <= 0.125 + 2 * math.sqrt(0.125 * math.log(1e5))
    assert result.total_epsilon == pytest.approx(expected, rel=1e-12)
    (own,) = result.releases
    assert own.epsilon == pytest.approx(expected, rel=1e-12) and "zCDP" in own.method
    assert "bounded range" in result.method


def test_few_exponential_mechanisms_keep_pure_composition():
    # two uses of a 1-DP exponential mechanism: 2-DP (delta 0) beats zCDP at rho = 0.25 and delta 1e-5
    result = account_budget(budget('name = "top"\nmechanism = "exponential"\nepsilon = 1.0\ncount = 2\n'))
    assert zcdp_epsilon(0.25, 1e-5)[0] > 2.0
    assert result.total_epsilon <= 2.0 + 1e-12
    assert result.releases[0].epsilon <= 2.0 + 1e-12 and "optimal composition" in result.releases[0].method


def test_laplace_and_permute_and_flip_noisy_max_compose_as_pure_dp():
    # noisy max with Laplace or exponential noise is not claimed bounded range: its 100 uses compose
    # as eps-DP, the optimal composition (Kairouz, Oh, Viswanath 2015: 4.30679)
    for noise in ("laplace", "exponential"):
        result = account_budget(budget(f'name = "top"\nmechanism = "noisy-max"\nnoise = "{noise}"\nepsilon = 0.1\n'
                                       'count = 100\n'))
        assert result.total_epsilon == pytest.approx(4.30679, abs=5e-6)
        assert result.split == {"dp": 1.0}


def test_mixed_budget_groups():
    result = account_budget(budget(
        'name = "top"\nmechanism = "exponential"\nepsilon = 0.1\ncount = 50\n',
        'name = "alerts"\nmechanism = "svt"\nepsilon = 1.0\n',
        'name = "given"\nmechanism = "dp"\nepsilon = 0.5\ndelta = 1e-7\n',
        'name = "train"\nmechanism = "gaussian"\nsigma = 5.0\n',
    ))
    assert set(result.split) == {"pld", "dp", "bounded-range"}
    assert sum(result.split.values()) == pytest.approx(1.0)
    # basic composition of the groups bounds the total from above by the sum of the parts at their shares
    assert result.total_epsilon <= 0.1 * 50 + 1.0 + 0.5 + result.releases[3].epsilon * 2
    assert result.within_budget


def test_rdp_accountant_keeps_the_mechanisms_apart():
    header = HEADER + 'accountant = "rdp"\n'
    result = account_budget(budget('name = "top"\nmechanism = "noisy-max"\nnoise = "gumbel"\nepsilon = 0.1\n'
                                   'count = 100\n', 'name = "z"\nmechanism = "zcdp"\nrho = 0.01\n', header=header))
    assert set(result.split) == {"rdp", "bounded-range"}


def test_risk_limits_take_the_textbook_mechanisms():
    # one eps-DP release: the largest advantage is (e^eps - 1) / (e^eps + 1) = tanh(eps / 2)
    # (Kairouz, Oh, Viswanath 2015), the randomized response's
    header = HEADER + "max_advantage = 0.5\n"
    result = account_budget(budget('name = "alerts"\nmechanism = "svt"\nepsilon = 1.0\n', header=header))
    (check,) = result.risk
    assert check.value == pytest.approx(math.tanh(0.5), rel=1e-6) and check.value >= math.tanh(0.5)
    result = account_budget(budget('name = "top"\nmechanism = "exponential"\nepsilon = 0.5\ncount = 2\n',
                                   header=header))
    # two 0.5-DP randomized responses: the advantage is p - q = tanh(1/4), p = e^0.5 / (1 + e^0.5)
    assert result.risk[0].value == pytest.approx(math.tanh(0.25), rel=1e-6)
    assert result.risk[0].value >= math.tanh(0.25)


@pytest.mark.parametrize("release, message", [
    ('name = "x"\nmechanism = "noisy-max"\nepsilon = 1.0\n',
     "budget.toml:5: release 'x': missing 'noise' for mechanism 'noisy-max' (one of laplace, gumbel, exponential)"),
    ('name = "x"\nmechanism = "noisy-max"\nnoise = "cauchy"\nepsilon = 1.0\n',
     "budget.toml:5: release 'x': noise must be one of laplace, gumbel, exponential, got 'cauchy'"),
    ('name = "x"\nmechanism = "svt"\n', "budget.toml:5: release 'x': missing 'epsilon' for mechanism 'svt'"),
    ('name = "x"\nmechanism = "exponential"\nepsilon = 0\n',
     "budget.toml:5: release 'x': epsilon must be in (0, inf), got 0"),
    ('name = "x"\nmechanism = "exponential"\nepsilon = 1\nnoise = "gumbel"\n',
     "budget.toml:5: release 'x': unknown key 'noise' for mechanism 'exponential'; allowed: epsilon, count"),
    ('name = "x"\nmechanism = "svt"\nepsilon = 1\nanswers = 3\n',
     "budget.toml:5: release 'x': unknown key 'answers' for mechanism 'svt'; allowed: epsilon, count"),
])
def test_malformed_releases(release, message):
    with pytest.raises(BudgetFileError) as error:
        budget(release)
    assert str(error.value) == message


def test_cli_reports_the_basis_per_release(dpcalc, tmp_path):
    text = HEADER + ('\n[[release]]\nname = "top"\nmechanism = "exponential"\nepsilon = 0.1\ncount = 100\n'
                     '\n[[release]]\nname = "argmax"\nmechanism = "noisy-max"\nnoise = "laplace"\nepsilon = 0.5\n'
                     '\n[[release]]\nname = "alerts"\nmechanism = "svt"\nepsilon = 1\n')
    run = dpcalc("check", write(tmp_path, text), "--json")
    assert run.code == 0
    releases = {r["name"]: r for r in run.json()["result"]["releases"]}
    assert releases["top"]["method"] == "zCDP, eps^2/8 each: eps-bounded range (Cesar and Rogers 2021)"
    assert releases["argmax"]["method"] == "eps-DP (Dwork and Roth 2014, Claim 3.9)"
    assert releases["alerts"]["method"] == "eps-DP (Dwork and Roth 2014, Thm 3.23, 3.25)"
    over = dpcalc("check", write(tmp_path, text.replace("epsilon = 10.0", "epsilon = 1.0")))
    assert over.code == 1


def test_cli_malformed_release(dpcalc, tmp_path):
    run = dpcalc("check", write(tmp_path, HEADER + '\n[[release]]\nname = "x"\nmechanism = "noisy-max"\nepsilon = 1\n'))
    assert run.code == 2 and run.stderr.endswith(
        "budget.toml:5: release 'x': missing 'noise' for mechanism 'noisy-max' (one of laplace, gumbel, exponential)\n")
