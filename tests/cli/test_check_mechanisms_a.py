"""`dpcalc check` with the release types of `dpcalc mechanism laplace, gaussian, randomized-response`.

Each new form is checked against an equivalent release of an existing type, which the other
check tests cover against independent references: a laplace release with a domain against
one with the sensitivity stated, per-coordinate Gaussian noise against a gdp release with
mu = sqrt(sum s_i^2 / sigma_i^2) (Xu et al. 2020, ADADP, Lemma 1), randomized response against
a pure dp release with its epsilon (eps = log(k - 1) + log(1 - f) - log f).
"""

from __future__ import annotations

import math

import pytest

from dpcalc.core import gdp

HEAD = "[budget]\nepsilon = 8.0\ndelta = 1e-5\n\n"


def write(tmp_path, text):
    path = tmp_path / "budget.toml"
    path.write_text(HEAD + text)
    return path


def releases(dpcalc, tmp_path, text):
    run = dpcalc("check", write(tmp_path, text), "--json")
    assert run.code in (0, 1), run.stderr
    return run.json()["result"]


def test_laplace_domain_counts_and_simplex(dpcalc, tmp_path):
    result = releases(dpcalc, tmp_path, """\
[[release]]
name = "histogram"
mechanism = "laplace"
domain = "counts"
scale = 2.0

[[release]]
name = "stated"
mechanism = "laplace"
scale = 2.0
sensitivity = 1.0

[[release]]
name = "softmax"
mechanism = "laplace"
domain = "simplex"
scale = 4.0

[[release]]
name = "stated twice"
mechanism = "laplace"
scale = 2.0
sensitivity = 1.0
""")
    epsilons = {r["name"]: r["epsilon"] for r in result["releases"]}
    # counts: L1 sensitivity 1; simplex: 2, so scale 4 on the simplex is scale 2 at sensitivity 1
    assert epsilons["histogram"] == epsilons["stated"] == epsilons["softmax"] == epsilons["stated twice"]
    assert epsilons["histogram"] == pytest.approx(0.5, rel=1e-3) and epsilons["histogram"] <= 0.5 * (1 + 1e-9)


def test_laplace_domain_real_keeps_the_sensitivity(dpcalc, tmp_path):
    result = releases(dpcalc, tmp_path, """\
[[release]]
name = "a"
mechanism = "laplace"
domain = "real"
scale = 6.0
sensitivity = 3.0
""")
    assert result["releases"][0]["epsilon"] == pytest.approx(0.5, rel=1e-3)


def test_per_coordinate_gaussian_is_gdp_with_mu(dpcalc, tmp_path):
    result = releases(dpcalc, tmp_path, """\
[[release]]
name = "adaptive"
mechanism = "gaussian"
sensitivities = [12, 6]
noise_stds = [17, 8.5]
clipping = "per-layer"
count = 2
""")
    release = result["releases"][0]
    # two releases of 12 sqrt(2)/17-GDP: mu = 24/17 (Dong, Roth, Su 2022, Cor. 3.3)
    expected = gdp.epsilon_for_delta(1e-5, 24 / 17)
    assert release["epsilon"] == pytest.approx(expected, rel=1e-9) and release["epsilon"] >= expected
    assert release["method"] == "exact (Gaussian DP)"


def test_randomized_response_is_pure_dp(dpcalc, tmp_path):
    result = releases(dpcalc, tmp_path, """\
[[release]]
name = "survey"
mechanism = "randomized-response"
flip_probability = 0.25
k = 4

[[release]]
name = "binary"
mechanism = "randomized-response"
epsilon = 1.0
""")
    survey, binary = result["releases"]
    # k = 4, flip 1/4: eps = log 3 + log(3/4) - log(1/4) = log 9, exactly eps-DP (delta 0)
    assert survey["epsilon"] == pytest.approx(math.log(9), rel=1e-15) and survey["delta"] == 0.0
    assert survey["method"] == "exact (randomized response is pure epsilon-DP)"
    assert binary["epsilon"] == 1.0
    # composed with the exact optimum of pure DP releases (Kairouz, Oh, Viswanath 2015): at most the sum
    assert result["total"]["epsilon"] <= math.log(9) + 1.0
    assert "Kairouz, Oh, Viswanath 2015" in result["method"]


def test_randomized_response_matches_a_dp_release(dpcalc, tmp_path):
    rr = releases(dpcalc, tmp_path, '[[release]]\nname = "a"\nmechanism = "randomized-response"\nepsilon = 0.5\n'
                                    'count = 20\n')
    dp = releases(dpcalc, tmp_path, '[[release]]\nname = "a"\nmechanism = "dp"\nepsilon = 0.5\ncount = 20\n')
    assert rr["total"] == dp["total"] and rr["releases"][0]["epsilon"] == dp["releases"][0]["epsilon"]


def test_randomized_response_with_risk_limits(dpcalc, tmp_path):
    text = '[[release]]\nname = "a"\nmechanism = "randomized-response"\nepsilon = 1.0\n'
    path = tmp_path / "risk.toml"
    path.write_text("[budget]\nepsilon = 8.0\ndelta = 1e-5\nmax_advantage = 0.9\n\n" + text)
    result = dpcalc("check", path, "--json").json()["result"]
    # one eps-DP randomized response: advantage (e^eps - 1)/(e^eps + 1) = tanh(1/2)
    assert result["risk"]["max_advantage"]["value"] == pytest.approx(math.tanh(0.5), rel=1e-6)
    assert result["risk"]["max_advantage"]["value"] >= math.tanh(0.5)


@pytest.mark.parametrize("text, message", [
    ('mechanism = "randomized-response"\nepsilon = 1.0\nflip_probability = 0.2\n',
     "give exactly one of 'epsilon' and 'flip_probability'"),
    ('mechanism = "randomized-response"\nk = 3\n', "give exactly one of 'epsilon' and 'flip_probability'"),
    ('mechanism = "randomized-response"\nflip_probability = 0.7\nk = 3\n',
     "flip_probability must be in (0, 0.666667) for k = 3, got 0.7"),
    ('mechanism = "randomized-response"\nepsilon = 1.0\nk = 1\n', "k must be an integer in [2, 1e+15], got 1"),
    ('mechanism = "laplace"\ndomain = "simplex"\nscale = 1.0\nsensitivity = 2.0\n',
     "'sensitivity' is set by domain 'simplex' (2: the L1 diameter of the simplex); give it with domain = \"real\""),
    ('mechanism = "laplace"\ndomain = "counts"\nscale = 1.0\nsensitivity = 1.0\n',
     "'sensitivity' is set by domain 'counts' (1); give it with domain = \"real\""),
    ('mechanism = "laplace"\ndomain = "vector"\nscale = 1.0\n', "domain must be one of counts, simplex, real, got 'vector'"),
    ('mechanism = "gaussian"\nsigma = 1.0\nnoise_stds = [1.0]\nsensitivities = [1.0]\n',
     "give exactly one of 'sigma', 'noise_std' and 'noise_stds' (with 'sensitivities')"),
    ('mechanism = "gaussian"\nnoise_stds = [1.0]\n',
     "missing 'sensitivities' for per-coordinate noise (one sensitivity and one noise std per coordinate or layer)"),
    ('mechanism = "gaussian"\nnoise_stds = [1.0, 2.0]\nsensitivities = [1.0]\n',
     "noise_stds must have as many values as sensitivities (1), got 2"),
    ('mechanism = "gaussian"\nnoise_stds = [1.0]\nsensitivities = [1.0]\nsensitivity = 2.0\n',
     "'sensitivity' goes with 'sigma' or 'noise_std', not with 'sensitivities'"),
    ('mechanism = "gaussian"\nsigma = 1.0\nclipping = "joint"\n',
     "'clipping' goes with 'sensitivities' and 'noise_stds' (per-coordinate noise)"),
    ('mechanism = "gaussian"\nnoise_stds = [1.0]\nsensitivities = [1.0]\nclipping = "global"\n',
     "clipping must be one of per-coordinate, per-layer, joint, got 'global'"),
    ('mechanism = "gaussian"\nnoise_stds = [1.0, -1.0]\nsensitivities = [1.0, 1.0]\n',
     "noise_stds item 2 of 2 must be in (0, inf), got -1.0"),
    ('mechanism = "gaussian"\nnoise_stds = []\nsensitivities = []\n',
     "noise_stds must be a non-empty array of numbers in (0, inf), got []"),
    ('mechanism = "gaussian"\nnoise_stds = [1e-300]\nsensitivities = [1e299]\n',
     "sensitivities / noise_stds must have a positive finite root sum of squares"),
    # the per-coordinate noise stds were 'sigmas' once: refused with the new key ('sigma' is a multiplier)
    ('mechanism = "gaussian"\nsigmas = [1.0]\nsensitivities = [1.0]\n',
     "key 'sigmas' is refused: 'sigma' is a noise multiplier elsewhere; the per-coordinate noise stds are 'noise_stds'"),
])
def test_malformed_releases(dpcalc, tmp_path, text, message):
    path = write(tmp_path, '[[release]]\nname = "a"\n' + text)
    run = dpcalc("check", path)
    assert (run.code, run.stdout) == (2, "")
    assert run.stderr == f"Error: {path}:5: release 'a': {message}\n"
