"""The score test before an extra term: how much it could take off the sum of squares,
and the value first order gives it, where the richer model's fit starts."""

from __future__ import annotations

import numpy as np
import pytest

from hilrig.identify.methods.estimator._score import (
    not_fitted_note,
    one_sided,
    score,
    score_and_step,
)
from hilrig.identify.solvers import BlockJacobian


def _linear(seed: int, c_true: float):
    """y = X b + c t + noise; the fit without t, as residuals model - data."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, 400)
    x = np.column_stack([np.ones_like(t), np.sin(3 * t)])
    y = x @ np.array([0.5, -1.2]) + c_true * t ** 2 + 0.01 * rng.standard_normal(t.size)
    b = np.linalg.lstsq(x, y, rcond=None)[0]
    return x, t ** 2, x @ b - y, y


@pytest.mark.parametrize("c_true", [0.3, 0.0, -0.05])
def test_on_a_linear_model_the_score_is_the_drop_and_the_step_the_richer_fit(c_true):
    x, col, r, y = _linear(1, c_true)
    s, step = score_and_step(BlockJacobian(x, []), r, col[:, None])
    full = np.linalg.lstsq(np.column_stack([x, col]), y, rcond=None)[0]
    rss_full = float(np.sum((np.column_stack([x, col]) @ full - y) ** 2))
    assert step[0] == pytest.approx(full[2], rel=1e-8, abs=1e-10)
    assert s == pytest.approx(float(r @ r) - rss_full, rel=1e-8)
    assert score(BlockJacobian(x, []), r, col[:, None]) == s


def test_a_term_that_cannot_go_below_zero_has_no_score_where_first_order_asks_for_less():
    """One-sided: the richer fit, held at zero or above, is then the fit without the term."""
    x, col, r, _ = _linear(1, -0.05)
    s, step = score_and_step(BlockJacobian(x, []), r, col[:, None])
    assert step[0] < 0 and s > 0
    assert one_sided(s, float(step[0])) == 0.0
    assert one_sided(s, -float(step[0])) == s
    assert one_sided(s, float("nan")) == 0.0
    assert "below zero" in not_fitted_note(s, 1, r.size, float(step[0]))
    assert "half of the BIC's price" in not_fitted_note(0.1, 1, r.size, 1.0)
