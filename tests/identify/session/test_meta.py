"""Estimates of one quantity from several captures: the random-effects mean, the line in
the covariate, each capture against the others; their tests keep their level."""

from __future__ import annotations

import numpy as np
import pytest

from hilrig.identify.session import departures, line, mean, relative_line


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


def _rising_sessions(n: int, own: float, seed: int):
    """Sessions of 10 captures 0-8 h of a level rising 10 % over the night, linearly in
    its value, the captures scattering by twice their stated relative error `own`: (y =
    logs, s, x about its mean, the true slope as a fraction of the level at the mean)."""
    rng = np.random.default_rng(seed)
    x = np.linspace(0, 8, 10)
    rate = 0.1 / 8
    truth = rate / (1 + rate * x.mean())
    for _ in range(n):
        values = 2e-4 * (1 + rate * x) * (1 + rng.normal(0, 2 * own, 10))
        yield np.log(values), np.full(10, own), x - x.mean(), truth


def test_a_linear_rise_is_a_line_through_the_values_and_its_interval_holds_its_slope():
    """A drift rises by a share of the level per hour: the line through the values has
    that slope (as a fraction of the level at the mean hour), and its interval holds it in
    about 95 % of sessions even where each capture is 100 times more precise than the
    rise's bend in the logs."""
    held = 0
    for y, s, xc, truth in _rising_sessions(1000, 1e-4, 5):
        fit = relative_line(y, s, xc, np.zeros(10))
        lo, hi = fit.slope_interval()
        held += lo <= truth <= hi
    assert 0.93 <= held / 1000 <= 0.97
    y, s, xc, truth = next(_rising_sessions(1, 0.0, 6))
    exact = relative_line(y, np.full(10, 1e-6), xc, np.zeros(10))
    assert exact.slope == pytest.approx(truth, rel=1e-9)
    assert np.exp(exact.level) == pytest.approx(2e-4 * 1.05, rel=1e-9)


def test_through_the_logs_the_bend_of_a_linear_rise_is_taken_for_scatter():
    """Why the values: the line through the logs of the same sessions reads the bend as
    scatter between captures, and its interval is wider than its error (it holds the slope
    in nearly every session)."""
    held, tau = 0, []
    for y, s, xc, truth in _rising_sessions(300, 1e-4, 5):
        fit = line(y, s, xc, np.zeros(10))
        lo, hi = fit.slope_interval()
        held += lo <= truth <= hi
        tau.append(fit.tau)
    assert held / 300 > 0.99
    assert np.median(tau) > 2e-4  # the bend, 2 times the captures' own errors and more


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
