"""A phase written as text (dpcalc.core.phase_text): what it reads, and refusals that name the key."""

from __future__ import annotations

import pytest

from dpcalc.core.phase_text import phase_from_text
from dpcalc.core.phases import Phase
from dpcalc.core.text import TextError, read_integer, read_real
from dpcalc.core.validation import POSITIVE


def test_a_phase_from_its_text():
    assert phase_from_text("p=0.01,sigma=2,T=500") == Phase("gaussian", sampling_probability=0.01,
                                                            noise_multiplier=2.0, steps=500)
    # the training form: p = 256/60000 exactly, T = ceil(60 * 60000 / 256) = 14063
    phase = phase_from_text("n=60000,batch-size=256,epochs=60,noise_std=2.2,sensitivity=2")
    assert (phase.sampling_probability, phase.noise_multiplier, phase.steps, phase.epoch_steps) == (
        256 / 60000, 1.1, 14063, 235)
    assert phase_from_text("mechanism=laplace,scale=4,sensitivity=2,T=3").scale == 2.0


@pytest.mark.parametrize(("text", "message"), [
    ("p=0.01,sigma=-1,T=5", "sigma must be in (0, inf), got -1"),
    ("p=0.01,sigma=1", "T is required (number of steps"),
    ("sigma=1,T=1_0", "T must be an integer in [1, inf), written with the ASCII digits 0-9 only"),
    ("sigma=1,T=2,colour=red", "unknown key 'colour'; keys are mechanism, p, sigma"),
])
def test_a_refusal_names_the_key_not_a_flag(text, message):
    with pytest.raises(TextError) as raised:
        phase_from_text(text)
    assert str(raised.value).startswith(message) and "--" not in str(raised.value)


def test_numbers_are_read_in_ascii_decimals_only():
    assert read_real("scale", " 1e-5 ", POSITIVE) == 1e-5
    assert read_integer("T", "1e4") == 10_000
    with pytest.raises(TextError, match=r"^T must be an integer in \[1, inf\), written with the ASCII digits"):
        read_integer("T", "\u0661\u0661")
