"""Holoborodko's smooth noise-robust differentiators (seed 002 eqs. 16-19, Algorithm 1)."""

from fractions import Fraction

import numpy as np
import pytest

from hilrig.identify import (
    contiguous_segments,
    decimate_mean,
    holoborodko_first,
    holoborodko_first_coefficients,
    holoborodko_second,
    holoborodko_second_coefficients,
)


@pytest.mark.parametrize("n, numerators, denominator", [
    (5, (2, 1), 8),
    (7, (5, 4, 1), 32),
    (9, (14, 14, 6, 1), 128),
    (11, (42, 48, 27, 8, 1), 512),
])
def test_first_derivative_coefficients_match_published(n, numerators, denominator):
    np.testing.assert_array_equal(holoborodko_first_coefficients(n),
                                  np.array(numerators) / denominator)


@pytest.mark.parametrize("n, published", [
    (5, (-2, 0, 1)),
    (7, (-4, -1, 2, 1)),
    (9, (-10, -4, 4, 4, 1)),
    (11, (-28, -14, 8, 13, 6, 1)),
])
def test_second_derivative_coefficients_match_published(n, published):
    np.testing.assert_array_equal(holoborodko_second_coefficients(n), published)


@pytest.mark.parametrize("n", [13, 21, 51, 101])
def test_general_formula_is_exact_on_quadratics_for_large_n(n):
    h = 1e-3
    x = np.arange(400) * h
    y = 3.0 + 2.0 * x - 5.0 * x**2
    d1 = holoborodko_first(y, h, n)
    d2 = holoborodko_second(y, h, n)
    m = (n - 1) // 2
    np.testing.assert_allclose(d1[m:-m], 2.0 - 10.0 * x[m:-m], atol=1e-8)
    np.testing.assert_allclose(d2[m:-m], -10.0, rtol=1e-6)


@pytest.mark.parametrize("n", [15, 51])
def test_first_coefficients_are_the_binomial_formula(n):
    from math import comb
    m = (n - 3) // 2

    def c(a, b):
        return comb(a, b) if 0 <= b <= a else 0

    expected = [Fraction(c(2 * m, m - k + 1) - c(2 * m, m - k - 1), 2 ** (2 * m + 1))
                for k in range(1, (n - 1) // 2 + 1)]
    np.testing.assert_array_equal(holoborodko_first_coefficients(n), [float(e) for e in expected])


def test_derivative_has_the_right_sign_and_accuracy_on_a_sine():
    h = 1e-3
    t = np.arange(3000) * h
    y = np.sin(3 * t)
    d1 = holoborodko_first(y, h, 51)
    d2 = holoborodko_second(y, h, 101)
    sl = slice(60, -60)
    np.testing.assert_allclose(d1[sl], 3 * np.cos(3 * t[sl]), atol=1e-3)
    np.testing.assert_allclose(d2[sl], -9 * np.sin(3 * t[sl]), atol=5e-3)


def test_filters_suppress_the_nyquist_frequency():
    y = (-1.0) ** np.arange(200)  # alternating: pure Nyquist noise
    assert np.nanmax(np.abs(holoborodko_first(y, 1.0, 11))) < 1e-12
    assert np.nanmax(np.abs(holoborodko_second(y, 1.0, 11))) < 1e-12


def test_edges_are_nan_not_guessed():
    d = holoborodko_first(np.arange(100.0), 1.0, 51)
    assert np.isnan(d[:25]).all() and np.isnan(d[-25:]).all() and np.isfinite(d[25:-25]).all()


def test_even_or_short_lengths_are_rejected():
    for n in (4, 3, 50):
        with pytest.raises(ValueError, match="odd"):
            holoborodko_first_coefficients(n)


def test_coefficients_are_the_callers_own():
    """Computed once per length (a capture differentiates a hundred segments with the same
    N), but a caller that writes into its copy does not change the next caller's."""
    for coefficients in (holoborodko_first_coefficients, holoborodko_second_coefficients):
        first = coefficients(51)
        kept = first.copy()
        first[:] = 0.0
        np.testing.assert_array_equal(coefficients(51), kept)


def test_segments_split_at_gaps():
    idx = np.array([0, 1, 2, 5, 6, 9])
    assert contiguous_segments(idx) == [slice(0, 3), slice(3, 5), slice(5, 6)]


def test_block_mean_decimation_adds_no_delay():
    t = np.arange(10_000) * 1e-4
    x = (2.0 * t)[:, None].repeat(2, axis=1)
    td, xd = decimate_mean(t, x, 10)
    np.testing.assert_allclose(xd[:, 0], 2.0 * td, atol=1e-12)


def test_holoborodko_vanishes_near_nyquist_where_savitzky_golay_ripples():
    """The property the seed chose it for: no response to the highest frequencies.

    (Measured too: at equal N, Savitzky-Golay of order 3 has the lower white-noise gain and
    bias; Holoborodko's advantage is only this high-frequency suppression.)"""
    from hilrig.identify import savitzky_golay_first

    k = np.arange(4000)
    sl = slice(60, -60)
    for omega in (0.85 * np.pi, 0.95 * np.pi):  # rad/sample, near Nyquist
        x = np.sin(omega * k)
        holo = np.max(np.abs(holoborodko_first(x, 1.0, 51)[sl]))
        sg = np.max(np.abs(savitzky_golay_first(x, 1.0, 51, 3)[sl]))
        assert holo < 1e-6 < sg / 100
