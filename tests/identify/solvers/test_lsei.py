"""Least squares with equality and inequality constraints (identify.solvers.lsei)."""

import numpy as np
import pytest
from scipy.optimize import LinearConstraint, minimize

from hilrig.identify.solvers import lsei


def test_lsei_is_exact_on_a_random_constrained_problem():
    rng = np.random.default_rng(5)
    e = rng.normal(size=(200, 8)) * rng.uniform(0.01, 100, 8)
    f = rng.normal(size=200)
    c, d = rng.normal(size=(2, 8)), rng.normal(size=2)
    g, h = rng.normal(size=(5, 8)), rng.normal(size=5) + 1.0
    sol = lsei(e, f, c, d, g, h)
    assert np.allclose(c @ sol.x, d, atol=1e-9)
    assert np.all(g @ sol.x - h >= -1e-8)
    # KKT: the gradient is a combination of the equality and active inequality normals,
    # with non-negative multipliers on the inequalities (SLSQP stops infeasible here)
    grad = 2 * e.T @ (e @ sol.x - f)
    normals = np.vstack([c, g[sol.active]])
    mult = np.linalg.lstsq(normals.T, grad, rcond=None)[0]
    assert np.linalg.norm(normals.T @ mult - grad) < 1e-10 * np.linalg.norm(grad)
    assert np.all(mult[2:] > 0) and sol.active.sum() >= 1
    ref = minimize(lambda x: np.sum((e @ x - f) ** 2), sol.x, method="trust-constr",
                   jac=lambda x: 2 * e.T @ (e @ x - f), hess=lambda x: 2 * e.T @ e,
                   constraints=[LinearConstraint(c, d, d), LinearConstraint(g, h, np.inf)],
                   options={"gtol": 1e-12, "xtol": 1e-14, "maxiter": 2000})
    assert sol.rss == pytest.approx(ref.fun, rel=1e-9)
    # without binding constraints it is the ordinary least-squares solution
    free = lsei(e, f, g=g, h=h - 1e6)
    assert np.allclose(free.x, np.linalg.lstsq(e, f, rcond=None)[0], rtol=1e-8)
