"""Reading a grid-sampled signal between its points: the estimator's fit over a capture is
its segments simulated on the fit's grid, read at the capture's samples this way."""

from __future__ import annotations

import numpy as np
import pytest

from hilrig.identify.signal import cubic_at


def test_a_cubic_is_read_exactly_everywhere_the_ends_included():
    k = np.arange(12.0)
    y = 0.5 - 2.0 * k + 0.3 * k**2 - 0.07 * k**3
    x = np.linspace(0.0, 11.0, 97)
    assert np.allclose(cubic_at(y, x), 0.5 - 2.0 * x + 0.3 * x**2 - 0.07 * x**3,
                       rtol=0, atol=1e-12)


def test_a_swing_is_read_within_the_cubics_error_bound():
    h, omega = 0.004, 9.0  # the estimator's grid; a pendulum at 1.4 Hz, 2 rad
    t = np.arange(0.0, 2.0, h)
    y = np.column_stack([2.0 * np.sin(omega * t), 0.5 * np.cos(omega * t)])
    ts = np.arange(0.0, t[-1], 1e-4)  # the capture's samples
    got = cubic_at(y, ts / h)
    exact = np.column_stack([2.0 * np.sin(omega * ts), 0.5 * np.cos(omega * ts)])
    bound = h**4 * omega**4 * np.array([2.0, 0.5]) / 24  # the end intervals' bound
    assert np.all(np.abs(got - exact).max(axis=0) <= bound)
    assert np.abs(got - exact).max() < 2e-7  # a thousandth of an encoder count, 1.6e-4 rad


def test_a_jump_in_acceleration_costs_about_h_squared_over_16():
    h, a = 0.004, 1.0  # a friction reversal: y'' jumps by a at t = 0.0123
    t = np.arange(0.0, 0.05, h)
    kink = 0.0123
    y = 0.5 * a * np.clip(t - kink, 0.0, None) ** 2
    ts = np.arange(0.0, t[-1], 1e-4)
    err = np.abs(cubic_at(y, ts / h) - 0.5 * a * np.clip(ts - kink, 0.0, None) ** 2).max()
    assert 1e-8 < err <= h**2 * a / 16


def test_too_few_points_or_a_position_off_the_grid_is_refused():
    with pytest.raises(ValueError, match="3 grid points"):
        cubic_at(np.zeros(3), np.zeros(1))
    with pytest.raises(ValueError, match="outside the grid 0 to 4"):
        cubic_at(np.zeros(5), np.array([0.0, 4.5]))
