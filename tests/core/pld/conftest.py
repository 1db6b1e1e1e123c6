"""Fixtures for the PLD engine's tests: mpmath at 50 digits for every test here (other test
modules may change mpmath's global precision)."""

from __future__ import annotations

import mpmath as mp
import pytest


@pytest.fixture(autouse=True)
def fifty_digits():
    """mpmath at 50 digits for every test of the PLD engine."""
    with mp.workdps(50):
        yield
