"""The defaults and limits shared by the core and the command line: written once, free of numpy."""

from __future__ import annotations

import subprocess
import sys

from dpcalc.core import limits


def test_limits_load_without_numpy():
    code = "import sys, dpcalc.core.limits; print('numpy' in sys.modules, 'scipy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]


def test_the_core_reads_its_constants_from_limits():
    from dpcalc.core import conversions, pld, rdp

    assert rdp.MAX_ORDER is limits.MAX_ORDER
    assert pld.DEFAULT_ACCURACY is limits.DEFAULT_ACCURACY and pld.ACCURACY is limits.ACCURACY
    assert conversions.SOURCE_NOTIONS is limits.SOURCE_NOTIONS
    assert conversions.TARGET_NOTIONS is limits.TARGET_NOTIONS
    assert conversions.DEFAULT_CONVERT_ORDERS is limits.DEFAULT_CONVERT_ORDERS
    assert conversions.TRADEOFF_POINTS is limits.TRADEOFF_POINTS
    assert conversions.DEFAULT_TRADEOFF_POINTS is limits.DEFAULT_TRADEOFF_POINTS


def test_the_command_line_states_the_same_constants():
    from dpcalc.cli import calibrate, convert, pld, rdp

    assert rdp.MAX_ORDER == limits.MAX_ORDER and convert.SOURCES is limits.SOURCE_NOTIONS
    assert f"[default: {limits.DEFAULT_ACCURACY:g}]" in pld.HELP
    assert f"[default: {limits.DEFAULT_PRECISION:g}]" in calibrate.HELP
