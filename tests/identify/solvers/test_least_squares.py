"""Linear least squares with seed 002's report (identify.solvers, eqs. 20-24)."""

import json
import math

import numpy as np
import pytest

from hilrig.identify.solvers import (
    group_weighted_least_squares,
    hac_covariance,
    integrated_autocorrelation,
    linear_least_squares,
)

# --- linear_least_squares ----------------------------------------------------------------

def _problem(m=2000, seed=0):
    rng = np.random.default_rng(seed)
    W = np.column_stack([np.ones(m), rng.normal(size=m), np.sin(np.arange(m) / 30.0)])
    theta = np.array([2.0, -0.5, 0.01])
    return W, theta, rng


def test_ols_matches_the_normal_equations_and_eq_23_24():
    W, theta, rng = _problem()
    y = W @ theta + rng.normal(0, 0.1, W.shape[0])
    fit = linear_least_squares(W, y, names=["a", "b", "c"])
    ref, *_ = np.linalg.lstsq(W, y, rcond=None)
    assert np.allclose(fit.theta, ref, rtol=1e-12, atol=1e-14)
    r = y - W @ ref
    s2 = r @ r / (W.shape[0] - 3)  # eq. 23
    cov = s2 * np.linalg.inv(W.T @ W)  # eq. 24
    assert fit.sigma2 == pytest.approx(s2, rel=1e-10)
    assert np.allclose(fit.covariance, cov, rtol=1e-9)
    assert np.allclose(fit.std, np.sqrt(np.diag(cov)), rtol=1e-9)
    assert np.allclose(fit.relative_std_percent, 100 * fit.std / np.abs(fit.theta))
    assert fit.condition == pytest.approx(np.linalg.cond(W), rel=1e-9)
    assert fit.rank == 3 and fit.dof == W.shape[0] - 3 and not fit.weighted
    assert np.allclose(fit.residuals, r)
    assert "Cond(W)" in fit.table()
    json.dumps(fit.as_dict())


def test_wls_is_ols_of_the_scaled_system():
    W, theta, rng = _problem()
    sd = np.where(np.arange(W.shape[0]) % 2 == 0, 0.05, 0.5)
    y = W @ theta + rng.normal(size=W.shape[0]) * sd
    w = 1.0 / sd**2
    fit = linear_least_squares(W, y, weights=w)
    sw = np.sqrt(w)
    ref = linear_least_squares(W * sw[:, None], y * sw)
    assert np.allclose(fit.theta, ref.theta, rtol=1e-12)
    assert np.allclose(fit.covariance, ref.covariance, rtol=1e-9)
    assert fit.weighted and fit.sigma2 == pytest.approx(1.0, abs=0.1)
    assert np.allclose(fit.residuals, y - W @ fit.theta)


def test_group_weights_are_inverse_per_group_variances():
    W, theta, rng = _problem(4000)
    groups = np.repeat([0, 1], 2000)
    y = W @ theta + rng.normal(size=4000) * np.where(groups == 0, 0.01, 1.0)
    ols, wls = group_weighted_least_squares(W, y, groups)
    assert wls.weights[0] == pytest.approx(1e4, rel=0.1)
    assert wls.weights[-1] == pytest.approx(1.0, rel=0.1)
    # weighting the precise rows more makes every estimate more precise
    assert np.all(wls.std < ols.std)


def test_ten_times_rule_flags_the_poorly_identified_parameter():
    W, theta, rng = _problem()
    y = W @ theta + rng.normal(0, 0.1, W.shape[0])
    fit = linear_least_squares(W, y, names=["a", "b", "c"])
    rel = fit.relative_std_percent
    assert rel[2] > 10 * rel.min()  # c = 0.01 is tiny against the noise
    assert fit.poorly_identified_names == ("c",)


def test_rank_deficiency_is_reported_not_hidden():
    W, theta, rng = _problem()
    W = np.column_stack([W, 2 * W[:, 1]])  # a column that duplicates another
    y = W[:, :3] @ theta + rng.normal(0, 0.1, W.shape[0])
    fit = linear_least_squares(W, y)
    assert fit.rank == 3
    assert math.isinf(fit.condition) or fit.condition > 1e12
    assert np.isinf(fit.std[1]) and np.isinf(fit.std[3])
    assert np.isfinite(fit.std[0]) and np.isfinite(fit.std[2])
    assert {"theta2", "theta4"} <= set(fit.poorly_identified_names)


def test_bad_input_is_refused():
    W, theta, _ = _problem(50)
    with pytest.raises(ValueError):
        linear_least_squares(W, W @ theta, weights=-np.ones(50))
    with pytest.raises(ValueError):
        linear_least_squares(W[:2], (W @ theta)[:2])
    y = W @ theta
    y[3] = np.nan
    with pytest.raises(ValueError):
        linear_least_squares(W, y)


def test_autocorrelation_time_of_white_and_ar1_noise():
    rng = np.random.default_rng(1)
    e = rng.normal(size=200_000)
    tau, _ = integrated_autocorrelation(e)
    assert tau == pytest.approx(1.0, abs=0.05)
    phi = 0.8
    x = np.empty_like(e)
    x[0] = e[0]
    for k in range(1, x.size):
        x[k] = phi * x[k - 1] + e[k]
    tau, _ = integrated_autocorrelation(x, max_lag=500)
    assert tau == pytest.approx((1 + phi) / (1 - phi), rel=0.1)
    x[::7] = np.nan  # gaps: pairs with a missing sample are skipped
    tau_gap, _ = integrated_autocorrelation(x, max_lag=500)
    assert tau_gap == pytest.approx(tau, rel=0.05)


def test_hac_covariance_is_the_newey_west_sandwich():
    W, theta, rng = _problem(3000)
    e = np.convolve(rng.normal(size=3020), np.ones(21) / 21, mode="valid")
    fit = linear_least_squares(W, W @ theta + e)
    lags = 40
    s = W * fit.residuals[:, None]
    omega = s.T @ s
    for k in range(1, lags + 1):
        g = s[:-k].T @ s[k:]
        omega += (1 - k / (lags + 1)) * (g + g.T)
    a = np.linalg.inv(W.T @ W)
    ref = W.shape[0] / (W.shape[0] - 3) * a @ omega @ a
    assert np.allclose(hac_covariance(fit, W, lags), ref, rtol=1e-8, atol=1e-14)
    # moving-average errors: eq. 24 underestimates the variance of the coefficients of
    # slowly varying regressors (columns 0, 2) but not of a white one (column 1)
    ratio = np.diag(ref) / np.diag(fit.covariance)
    assert ratio[0] > 5 and ratio[2] > 5
    assert ratio[1] == pytest.approx(1.0, abs=0.3)
