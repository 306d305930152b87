"""Levenberg-Marquardt on the normal equations (identify.solvers.levenberg_marquardt)."""

import numpy as np

from identify.solvers import levenberg_marquardt


def test_levenberg_marquardt_fits_an_exponential_within_bounds():
    t = np.linspace(0, 4, 200)
    y = 2.0 * np.exp(-1.3 * t)

    def fun(x):
        return x[0] * np.exp(-x[1] * t) - y

    def jac(x, r):
        e = np.exp(-x[1] * t)
        return np.column_stack([e, -x[0] * t * e])

    res = levenberg_marquardt(fun, jac, np.array([0.5, 0.2]), (np.zeros(2), np.full(2, 10.0)))
    np.testing.assert_allclose(res.x, [2.0, 1.3], rtol=1e-6)
    bounded = levenberg_marquardt(fun, jac, np.array([0.5, 0.2]),
                                  (np.zeros(2), np.array([10.0, 1.0])))
    assert bounded.x[1] <= 1.0
