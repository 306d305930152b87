"""The Mittag-Leffler function E_3 and the Nussbaum gain of seed 000 eq. 21 (identify.solvers)."""

import math

import numpy as np
import pytest

from hilrig.identify.solvers import (
    ML3_T_MAX,
    mittag_leffler_3,
    ml3_scalar,
    nussbaum_gain,
    nussbaum_scalar,
)

E3_MINUS_1 = 0.834719468577211  # shared/reference/test-vectors.md


def e3_series(x: float, terms: int = 80) -> float:
    """E_{3,1}(x) = sum x^j / (3j)! (seed 000 eq. 12, alpha = 3, beta = 1)."""
    s = term = 1.0
    for j in range(1, terms):
        term *= x / ((3 * j) * (3 * j - 1) * (3 * j - 2))
        s += term
    return s


# ----------------------------------------------------------------- Mittag-Leffler


def test_e3_at_minus_one_matches_the_published_value():
    assert mittag_leffler_3(1.0) == pytest.approx(E3_MINUS_1, abs=1e-14)
    assert ml3_scalar(1.0) == pytest.approx(E3_MINUS_1, abs=1e-14)


@pytest.mark.parametrize("t", [0.0, 0.05, 0.3, 1.0, 1.7, 2.5, 3.3, 4.2, 4.99, -1.5])
def test_closed_form_agrees_with_the_power_series_for_small_t(t):
    assert mittag_leffler_3(t) == pytest.approx(e3_series(-t ** 3), rel=1e-12, abs=1e-13)


def test_vectorised_and_compiled_versions_agree():
    # numpy's (SIMD, CPU-dependent) exp and cos and the compiled libm ones may differ by
    # an ulp; the bound is a few ulp of the terms' magnitudes, which also covers the zeros.
    t = np.linspace(-20.0, 60.0, 801)
    ref = mittag_leffler_3(t)
    scale = np.exp(-t) / 3.0 + 2.0 / 3.0 * np.exp(0.5 * t)
    assert np.all(np.abs(ref - np.array([ml3_scalar(x) for x in t])) <= 8e-16 * scale)


def test_nussbaum_gain_is_e3_at_minus_lambda_k_cubed():
    # -lambda k^3 = -1 with lambda = 8, k = 1/2: the closed form at t = lambda^(1/3) k = 1
    assert nussbaum_gain(0.5, lam=8.0) == pytest.approx(E3_MINUS_1, abs=1e-14)
    assert nussbaum_scalar(0.5, 2.0) == pytest.approx(E3_MINUS_1, abs=1e-14)
    assert nussbaum_gain(1.3, lam=0.7) == pytest.approx(e3_series(-0.7 * 1.3 ** 3), rel=1e-12)
    with pytest.raises(ValueError):
        nussbaum_gain(1.0, lam=0.0)


def test_it_is_a_nussbaum_function_its_running_mean_swings_both_ways():
    k = np.linspace(0.0, 40.0, 400_001)
    n = nussbaum_gain(k)
    integral = np.concatenate([[0.0], np.cumsum(0.5 * (n[1:] + n[:-1]) * np.diff(k))])
    mean = integral[1:] / k[1:]
    assert mean.max() > 1e6 and mean.min() < -1e6
    # and the swings grow: beyond any bound in both directions as k grows
    late = mean[k[1:] > 30]
    assert late.max() > 100 * mean[k[1:] < 20].max()
    assert np.count_nonzero(np.diff(np.sign(n)) != 0) >= 10


def test_overflow_beyond_t_1419_raises_instead_of_returning_inf():
    assert math.isfinite(mittag_leffler_3(ML3_T_MAX))
    assert math.isfinite(ml3_scalar(1419.0))
    with pytest.raises(OverflowError):
        mittag_leffler_3(1420.0)
    with pytest.raises(OverflowError):
        mittag_leffler_3(np.array([1.0, 2000.0]))
    with pytest.raises(OverflowError):
        ml3_scalar(1420.0)
    with pytest.raises(OverflowError):
        mittag_leffler_3(-710.0)
