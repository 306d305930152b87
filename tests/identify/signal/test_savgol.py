"""Savitzky-Golay smoothing and derivatives (identify.signal.savgol_filter), and what
identifying imports."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.signal import savgol_filter as scipy_savgol

from hilrig.identify.signal import savgol_coefficients, savgol_filter

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("shape", [(300,), (120, 2), (51, 3)])
@pytest.mark.parametrize("window", [5, 11, 51])
def test_it_is_scipys_filter_with_the_ends_interpolated(shape, window):
    x = np.cumsum(np.random.default_rng(window).standard_normal(shape), axis=0)
    for order in range(min(5, window)):
        for deriv in range(3):
            for delta in (1.0, 0.002):
                ours = savgol_filter(x, window, order, deriv=deriv, delta=delta, axis=0)
                theirs = scipy_savgol(x, window, order, deriv=deriv, delta=delta, axis=0,
                                      mode="interp")
                scale = max(float(np.max(np.abs(theirs))), 1e-300)
                assert np.max(np.abs(ours - theirs)) <= 1e-9 * scale, (order, deriv, delta)


def test_a_cubic_is_reproduced_exactly_with_its_derivatives_at_every_sample():
    t = np.linspace(0.0, 1.0, 41)
    h = t[1] - t[0]
    q = 2.0 - t + 0.5 * t ** 2 - 3.0 * t ** 3
    np.testing.assert_allclose(savgol_filter(q, 11, 3), q, atol=1e-12)
    np.testing.assert_allclose(savgol_filter(q, 11, 3, deriv=1, delta=h),
                               -1.0 + t - 9.0 * t ** 2, atol=1e-9)
    np.testing.assert_allclose(savgol_filter(q, 11, 3, deriv=2, delta=h), 1.0 - 18.0 * t,
                               atol=1e-7)
    # the centre weight of a local cubic over 11 points, as the noise estimate uses it
    assert savgol_coefficients(11, 3)[5] == pytest.approx(89 / 429)


def test_coefficients_are_the_callers_own():
    """Computed once per filter, but a caller that writes into its copy does not change
    the filter."""
    x = np.sin(np.linspace(0.0, 3.0, 200))
    before = savgol_filter(x, 25, 3, deriv=2)
    savgol_coefficients(25, 3, 2)[:] = 0.0
    np.testing.assert_array_equal(savgol_filter(x, 25, 3, deriv=2), before)


@pytest.mark.parametrize(("args", "what"), [((np.zeros(20), 10, 3), "odd"),
                                            ((np.zeros(20), 11, 11), "polynomial order"),
                                            ((np.zeros(5), 11, 3), "fewer than the window")])
def test_a_bad_window_is_one_line_naming_it(args, what):
    with pytest.raises(ValueError, match=what) as err:
        savgol_filter(*args)
    assert "\n" not in str(err.value)


def test_identifying_a_capture_imports_neither_scipy_signal_nor_scipy_optimize():
    # scipy.signal (and scipy.stats behind it) took 0.3-0.6 s of every command that
    # identifies, for the three smoothers now here; scipy.optimize, imported by methods
    # the estimator does not run, 0.27 s more
    code = ("import sys\n"
            "from hilrig.identify import identify\n"
            "from hilrig.identify.signal import simulated_measurement\n"
            "from hilrig.identify import TABLE_III_TRUTH, RigParams\n"
            "m = simulated_measurement(RigParams(), TABLE_III_TRUTH, (0.0, 120.0), 6.0)\n"
            "identify(m, 'shooting')\n"
            "print(*(m in sys.modules for m in ('scipy.signal', 'scipy.stats',"
            " 'scipy.optimize')))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["False", "False", "False"]
