"""Estimates of one quantity from several captures: the random-effects mean, the line in
the covariate, each capture against the others; their tests keep their level."""

from __future__ import annotations

import numpy as np
import pytest

from hilrig.identify.session import departures, line, mean


def test_a_mean_of_captures_that_agree_within_their_errors_is_the_weighted_mean():
    y = np.array([1.0, 1.2, 0.9, 1.1])
    s = np.array([0.2, 0.2, 0.2, 0.2])
    m = mean(y, s, np.zeros(4))
    assert m.value == pytest.approx(1.05)
    assert m.tau == 0.0
    assert m.df == 3


def test_the_part_every_capture_shares_is_kept_whole_in_a_mean():
    y = np.full(10, 2.0) + np.random.default_rng(1).normal(0, 0.01, 10)
    own = np.full(10, 0.01)
    without = mean(y, own, np.zeros(10))
    shared = mean(y, own, np.full(10, 0.05))
    assert without.se < 0.01  # the captures' own errors average down
    assert shared.se == pytest.approx(np.hypot(without.se, 0.05))  # the shared one does not


def test_a_line_through_exact_points_has_their_slope():
    x = np.arange(6.0)
    fit = line(2.0 + 0.5 * x, np.full(6, 0.1), x, np.zeros(6))
    assert fit.slope == pytest.approx(0.5)
    assert fit.level == pytest.approx(2.0)


@pytest.mark.parametrize("tau, low, high", [(0.3, 0.035, 0.065), (0.0, 0.01, 0.05)])
def test_the_slope_test_keeps_its_level_without_a_trend(tau: float, low: float, high: float):
    """2,000 sessions of 10 captures whose values scatter by their errors and by tau
    beyond them: the slope's test at 5 % rejects in 3.5-6.5 % of them; without scatter
    beyond the stated errors it is conservative (Knapp-Hartung's q at least 1)."""
    rng = np.random.default_rng(2)
    x = np.linspace(0, 8, 10)
    s = rng.uniform(0.05, 0.2, 10)
    rejected = 0
    for _ in range(2000):
        y = rng.normal(0, np.sqrt(s ** 2 + tau ** 2))
        rejected += line(y, s, x, np.zeros(10)).p_slope < 0.05
    assert low <= rejected / 2000 <= high


def test_the_slope_interval_holds_the_true_slope_in_95_percent_of_sessions():
    rng = np.random.default_rng(3)
    x = np.linspace(0, 8, 10)
    s = np.full(10, 0.01)
    held = 0
    for _ in range(1000):
        y = 0.0125 * x + rng.normal(0, 0.02, 10)  # scatter beyond the stated errors
        lo, hi = line(y, s, x, np.zeros(10)).slope_interval()
        held += lo <= 0.0125 <= hi
    assert 0.93 <= held / 1000 <= 0.97


def test_a_capture_far_off_the_line_through_the_others_stands_out_and_no_other_does():
    rng = np.random.default_rng(4)
    x = np.linspace(0, 8, 10)
    y = 0.01 * x + rng.normal(0, 0.003, 10)
    y[6] += 0.3  # a knocked rig: 30 % on one capture
    found = departures(y, np.full(10, 0.003), x)
    p = {d.index: d.p_value for d in found}
    assert p[6] < 1e-4
    assert min(v for k, v in p.items() if k != 6) > 0.01 / 10


def test_fewer_than_three_captures_make_no_line():
    with pytest.raises(ValueError, match="3 needed"):
        line(np.ones(2), np.ones(2), np.arange(2.0), np.zeros(2))


def test_without_an_outlier_a_capture_stands_out_in_at_most_2_percent_of_sessions():
    """The family's level is 1 % (0.01 / captures each), with scatter beyond the errors."""
    rng = np.random.default_rng(5)
    x = np.linspace(0, 8, 10)
    s = rng.uniform(0.05, 0.2, 10)
    alarms = sum(min(d.p_value for d in departures(rng.normal(0, np.sqrt(s ** 2 + 0.09)), s, x))
                 < 0.01 / 10 for _ in range(1000))
    assert alarms / 1000 <= 0.02
