"""`dpcalc check` budget files with `neighbours` ([budget]), `sampling` and `examples_per_user`
(subsampled-gaussian releases): the figures the core computes, the grouping of shuffled runs, and
every refusal (one line naming the file, the release's line and the problem; exit 2)."""

from __future__ import annotations

import math

import pytest

from dpcalc.core import gdp
from dpcalc.core.phases import Phase
from dpcalc.core.pld import tight_epsilon

HEAD = '[budget]\nepsilon = 50.0\ndelta = 1e-5\n'
MODEL = '[[release]]\nname = "model"\nmechanism = "subsampled-gaussian"\nn = 60000\nbatch_size = 256\nepochs = 2\nsigma = 1.1\n'


def _check(dpcalc, tmp_path, text: str, *args: str):
    path = tmp_path / "budget.toml"
    path.write_text(text)
    return dpcalc("check", str(path), *args)


def test_default_relation_is_echoed(dpcalc, tmp_path):
    document = _check(dpcalc, tmp_path, HEAD + MODEL, "--json").json()
    assert document["result"]["budget"]["neighbours"] == "add-remove"


@pytest.mark.slow
def test_uniform_under_replace_one(dpcalc, tmp_path):
    text = HEAD + 'neighbours = "replace-one"\n' + MODEL + 'sampling = "uniform"\n'
    run = _check(dpcalc, tmp_path, text, "--json")
    assert run.code == 0
    document = run.json()
    assert document["result"]["budget"]["neighbours"] == "replace-one"
    phase = Phase("gaussian", 256 / 60000, 1.1, None, math.ceil(2 * 60000 / 256), sampling="uniform",
                  neighbours="replace-one")
    core = tight_epsilon([phase], 1e-5)
    assert document["result"]["releases"][0]["epsilon"] == core.epsilon_upper


@pytest.mark.slow
def test_user_level_release(dpcalc, tmp_path):
    run = _check(dpcalc, tmp_path, HEAD + MODEL + "examples_per_user = 3\n", "--json")
    assert run.code == 0
    phase = Phase("gaussian", 256 / 60000, 1.1, None, math.ceil(2 * 60000 / 256), examples_per_user=3)
    assert run.json()["result"]["releases"][0]["epsilon"] == tight_epsilon([phase], 1e-5).epsilon_upper


def test_full_batch_user_level_and_gaussian_merge_exactly(dpcalc, tmp_path):
    """Unsampled Gaussian releases compose exactly: mu^2 = T (k / sigma)^2 + (sensitivity / sigma)^2;
    each phase's own shift (k at user level) is in mu."""
    text = (HEAD + '[[release]]\nname = "a"\nmechanism = "subsampled-gaussian"\np = 1.0\nT = 4\nsigma = 5.0\n'
            'examples_per_user = 2\n[[release]]\nname = "b"\nmechanism = "gaussian"\nnoise_std = 10.0\nsensitivity = 3.0\n')
    total = _check(dpcalc, tmp_path, text, "--json").json()["result"]["total"]["epsilon"]
    mu = math.sqrt(4 * (2 / 5.0) ** 2 + (3.0 / 10.0) ** 2)
    assert total == pytest.approx(gdp.epsilon_for_delta(1e-5, mu), rel=1e-6)


def test_gaussian_release_under_replace_one_keeps_its_sensitivity(dpcalc, tmp_path):
    text = (HEAD + 'neighbours = "replace-one"\n[[release]]\nname = "counts"\nmechanism = "gaussian"\n'
            'noise_std = 4.0\nsensitivity = 2.0\n')
    epsilon = _check(dpcalc, tmp_path, text, "--json").json()["result"]["releases"][0]["epsilon"]
    assert epsilon == pytest.approx(gdp.epsilon_for_delta(1e-5, 0.5), rel=1e-6)


@pytest.mark.slow
def test_shuffled_release_is_its_own_group(dpcalc, tmp_path):
    small = MODEL.replace("n = 60000", "n = 1000").replace("batch_size = 256", "batch_size = 100")
    text = HEAD + 'neighbours = "zero-out"\n' + small + 'sampling = "shuffle"\n[[release]]\nname = "c"\nmechanism = "gaussian"\nsigma = 20.0\n'
    run = _check(dpcalc, tmp_path, text, "--json")
    assert run.code in (0, 1)
    result = run.json()["result"]
    assert set(result["split"]) == {"pld", "shuffled"}
    assert "shuffled batches" in result["method"]


@pytest.mark.parametrize(
    "extra, budget_extra, message",
    [
        ('sampling = "shuffle"\n', "", "release 'model': sampling 'shuffle' with neighbours 'add-remove': shuffled "
         "batches are accounted under zero-out or replace-one"),
        ('sampling = "fixed"\n', "", "release 'model': sampling must be one of poisson, uniform, shuffle, allocation, got 'fixed'"),
        ('sampling = "uniform"\nexamples_per_user = 2\n', 'neighbours = "replace-one"\n', "examples_per_user 2"),
        ("", 'neighbours = "swap"\n', "neighbours must be one of add-remove, replace-one, zero-out, got 'swap'"),
        ('sampling = "shuffle"\n', 'accountant = "rdp"\nneighbours = "zero-out"\n', "the rdp accountant has no bound for sampling 'shuffle'"),
        ("examples_per_user = 0\n", "", "examples_per_user"),
    ],
)
def test_refusals(dpcalc, tmp_path, extra, budget_extra, message):
    run = _check(dpcalc, tmp_path, HEAD + budget_extra + MODEL + extra)
    assert run.code == 2 and run.stdout == ""
    assert message in run.stderr and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


def test_full_fixed_size_batches_are_refused_under_add_remove(dpcalc, tmp_path):
    text = HEAD + MODEL.replace("batch_size = 256", "batch_size = 60000") + 'sampling = "uniform"\n'
    run = _check(dpcalc, tmp_path, text)
    assert run.code == 2 and run.stderr.count("\n") == 1
    assert ("release 'model': sampling 'uniform' with neighbours 'add-remove': fixed-size batches under add-remove "
            "need a batch smaller than the dataset") in run.stderr


def test_shuffle_needs_n_and_laplace_is_refused_under_replace_one(dpcalc, tmp_path):
    text = HEAD + 'neighbours = "zero-out"\n[[release]]\nname = "m"\nmechanism = "subsampled-gaussian"\np = 0.01\nT = 10\n' \
        'sigma = 1.0\nsampling = "shuffle"\n'
    run = _check(dpcalc, tmp_path, text)
    assert run.code == 2 and "sampling 'shuffle' needs n and batch_size" in run.stderr
    text = HEAD + 'neighbours = "replace-one"\n[[release]]\nname = "l"\nmechanism = "laplace"\nscale = 2.0\n'
    run = _check(dpcalc, tmp_path, text)
    assert run.code == 2 and "a laplace release is accounted under add-remove or zero-out budgets" in run.stderr
