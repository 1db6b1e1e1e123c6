"""Budget files: the `bandmf` release (amplified BandMF), accounted as `dpcalc mf --bands`."""

from __future__ import annotations

import pytest

BUDGET = """[budget]
epsilon = 3
delta = 1e-5
{accountant}
[[release]]
name = "train"
mechanism = "bandmf"
n = 60000
batch_size = 240
epochs = 10
sigma = 1
{keys}
"""


def _check(dpcalc, tmp_path, keys="bands = 4", accountant=""):
    path = tmp_path / "budget.toml"
    path.write_text(BUDGET.format(keys=keys, accountant=accountant))
    return dpcalc("check", str(path), "--json")


def test_bandmf_release_is_mf_bands(dpcalc, tmp_path):
    (release,) = _check(dpcalc, tmp_path).json()["result"]["releases"]
    mf = dpcalc("mf", "--bands", "4", "--n", "60000", "--batch-size", "240", "--epochs", "10", "--sigma", "1",
                "--json").json()["result"]
    assert release["mechanism"] == "bandmf" and release["epsilon"] == pytest.approx(mf["epsilon_upper"], rel=1e-12)
    assert "Thm 4" in release["method"] and "upper bound" in release["method"]


def test_one_band_is_the_subsampled_gaussian(dpcalc, tmp_path):
    (release,) = _check(dpcalc, tmp_path, "bands = 1").json()["result"]["releases"]
    pld = dpcalc("pld", "--n", "60000", "--batch-size", "240", "--epochs", "10", "--sigma", "1",
                 "--json").json()["result"]
    assert release["epsilon"] == pytest.approx(pld["epsilon_upper"], rel=1e-12) and "DP-SGD itself" in release["method"]


def test_rdp_accountant_bounds_it_too(dpcalc, tmp_path):
    (release,) = _check(dpcalc, tmp_path, accountant='accountant = "rdp"').json()["result"]["releases"]
    pld = _check(dpcalc, tmp_path).json()["result"]["releases"][0]
    assert release["epsilon"] >= pld["epsilon"] * 0.999


@pytest.mark.parametrize(("keys", "message"), [
    ("bands = 300", "bands = 300 partitions of n = 60000 records hold 200 records each at the least"),
    ("", "missing 'bands' for mechanism 'bandmf'"),
    ("bands = 0", "bands must be"),
    ("bands = 4\np = 0.01", "give 'p' or 'n' with 'batch_size', not both"),
    ("bandz = 4", "unknown key 'bandz' for mechanism 'bandmf'"),
])
def test_refusals(dpcalc, tmp_path, keys, message):
    run = _check(dpcalc, tmp_path, keys)
    assert run.code == 2 and message in run.json()["error"]["message"]
