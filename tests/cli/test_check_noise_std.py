"""Budget files: noise_std with sensitivity in subsampled-gaussian and gaussian releases, sigma the
noise multiplier (noise std / sensitivity) in both, and their refusals, each naming the line."""

from __future__ import annotations

import pytest

HEAD = "[budget]\nepsilon = 3.0\ndelta = 1e-5\n\n[[release]]\nname = 'train'\n"
SAMPLED = "mechanism = 'subsampled-gaussian'\np = 0.01\nT = 200\n"


def check(dpcalc, tmp_path, body):
    path = tmp_path / "budget.toml"
    path.write_text(HEAD + body)
    return path, dpcalc("check", path, "--json")


def test_subsampled_noise_std_over_sensitivity_is_sigma(dpcalc, tmp_path):
    # 2.2 / 2 == 1.1 exactly (halving is exact in binary): the same phase, the same figures
    _, by_sigma = check(dpcalc, tmp_path, SAMPLED + "sigma = 1.1\n")
    _, by_std = check(dpcalc, tmp_path, SAMPLED + "noise_std = 2.2\nsensitivity = 2.0\n")
    assert (by_sigma.code, by_std.code, by_std.stderr) == (0, 0, "")
    assert by_std.json()["result"] == by_sigma.json()["result"]


def test_subsampled_noise_std_alone_has_sensitivity_one(dpcalc, tmp_path):
    _, by_sigma = check(dpcalc, tmp_path, SAMPLED + "sigma = 2.2\n")
    _, by_std = check(dpcalc, tmp_path, SAMPLED + "noise_std = 2.2\n")
    assert by_std.json()["result"] == by_sigma.json()["result"]


def test_gaussian_sigma_is_the_noise_multiplier(dpcalc, tmp_path):
    # a gaussian release's sigma is its noise multiplier, as in a subsampled-gaussian one: 6 / 2 = 3
    _, by_sigma = check(dpcalc, tmp_path, "mechanism = 'gaussian'\nsigma = 3.0\ncount = 3\n")
    _, by_std = check(dpcalc, tmp_path, "mechanism = 'gaussian'\nnoise_std = 6.0\nsensitivity = 2.0\ncount = 3\n")
    _, unit = check(dpcalc, tmp_path, "mechanism = 'gaussian'\nnoise_std = 3.0\ncount = 3\n")
    assert (by_sigma.code, by_std.code) == (0, 0)
    assert by_std.json()["result"] == by_sigma.json()["result"] == unit.json()["result"]


@pytest.mark.parametrize(("body", "message"), [
    (SAMPLED + "sigma = 1.1\nnoise_std = 2.2\n", ":5: release 'train': give exactly one of 'sigma' and 'noise_std'"),
    (SAMPLED, ":5: release 'train': give exactly one of 'sigma' and 'noise_std'"),
    (SAMPLED + "sigma = 1.1\nsensitivity = 2.0\n",
     ":5: release 'train': 'sensitivity' goes with 'noise_std': 'sigma' is already noise std / sensitivity"),
    (SAMPLED + "noise_std = 2.2\nsensitivity = 0\n", ":5: release 'train': sensitivity must be in (0, inf), got 0"),
    (SAMPLED + "noise_std = -1\n", ":5: release 'train': noise_std must be in (0, inf), got -1"),
    ("mechanism = 'gaussian'\nsigma = 1.0\nnoise_std = 1.0\n",
     ":5: release 'train': give exactly one of 'sigma' and 'noise_std'"),
    ("mechanism = 'gaussian'\nsensitivity = 1.0\n", ":5: release 'train': give exactly one of 'sigma' and 'noise_std'"),
    # the old meaning (sigma the noise std beside its sensitivity) is refused, with the new spelling
    ("mechanism = 'gaussian'\nsigma = 6.0\nsensitivity = 2.0\n",
     ":5: release 'train': 'sensitivity' goes with 'noise_std': 'sigma' is the noise multiplier, noise std / "
     "sensitivity (for the noise std itself write noise_std)"),
])
def test_refusals_name_the_line(dpcalc, tmp_path, body, message):
    path, run = check(dpcalc, tmp_path, body)
    assert run.code == 2 and run.only_error
    assert run.stderr == f"Error: {path}{message}\n"
