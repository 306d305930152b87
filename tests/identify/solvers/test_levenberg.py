"""Levenberg-Marquardt on the normal equations (identify.solvers.levenberg_marquardt)."""

import warnings

import numpy as np

from hilrig.identify.solvers import REMAINING_CHI2, levenberg_marquardt


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


#: rows of unit noise beside Rosenbrock's valley: the residuals' variance s^2 near 1
_NOISE = np.random.default_rng(0).standard_normal(200)


def _rosenbrock(x):  # a steep, curved valley
    return np.concatenate([[100.0 * (x[1] - x[0] ** 2), 3.0 * (1.0 - x[0])], _NOISE])


def _rosenbrock_jac(x, r):
    j = np.zeros((r.size, 2))
    j[:2] = [[-200.0 * x[0], 100.0], [-3.0, 0.0]]
    return j


def test_a_damped_step_in_a_curved_valley_does_not_stop_the_fit():
    # residuals in standard deviations: a step that takes off less than 0.1 of chi^2 is
    # no sign of convergence while the linear model still promises more
    wide = (np.full(2, -5.0), np.full(2, 5.0))
    kw = dict(sigma_tol=0.1, chi2_tol=0.1, max_iter=500)
    floor = float(_NOISE @ _NOISE)  # the chi^2 at the minimum, (1, 1)
    res = levenberg_marquardt(_rosenbrock, _rosenbrock_jac, np.array([-1.2, 1.0]), wide,
                              remaining_chi2=REMAINING_CHI2, **kw)
    assert res.success
    # within the chi^2 the stop leaves: REMAINING_CHI2 s^2, about one standard error
    assert 2 * res.cost - floor < 1.5 * REMAINING_CHI2
    # without the guard a damped step stops it 7.7 above the minimum
    unguarded = levenberg_marquardt(_rosenbrock, _rosenbrock_jac, np.array([-1.2, 1.0]),
                                    wide, **kw)
    assert 2 * unguarded.cost - floor > 4


def test_a_step_where_the_derivatives_overflow_is_refused_without_a_warning():
    def fun(x):
        return np.array([x[0] - 3.0])

    def jac(x, r):  # a model too stiff to differentiate beyond 2.5
        return np.array([[1.0 if x[0] <= 2.5 else np.inf]])

    box = (np.array([-10.0]), np.array([10.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = levenberg_marquardt(fun, jac, np.array([0.0]), box, max_iter=60)
        stuck = levenberg_marquardt(fun, jac, np.array([2.8]), box)
    assert 2.0 < res.x[0] <= 2.5 and np.isfinite(res.cost)
    assert res.jac_finite and np.all(np.isfinite(res.jac))
    assert not stuck.jac_finite and not stuck.success and stuck.x[0] == 2.8


def test_a_step_the_bounds_turn_uphill_is_refused_without_evaluating_it():
    # the minimum (x = -5) lies beyond the lower bound the fit starts on: every step is
    # clipped to no move, which the linear model says cannot help; the residuals of such
    # a step (a whole simulation, in a shooting fit) are never computed
    calls = []

    def fun(x):
        calls.append(x.copy())
        return np.array([x[0] + 5.0])

    def jac(x, r):
        return np.eye(1)

    res = levenberg_marquardt(fun, jac, np.array([0.0]), (np.zeros(1), np.full(1, 10.0)))
    assert res.x[0] == 0.0 and res.message == "no step reduces the cost"
    assert len(calls) == res.nfev == 1  # the start's only


def test_the_result_says_whether_the_fit_stopped_on_its_steps():
    """small_steps: the last step was below sigma_tol standard errors. A fit stopped on
    its chi^2 drop (chi2_tol) or its iterations has not shown that its steps ended."""
    t = np.linspace(0, 4, 200)
    y = 2.0 * np.exp(-1.3 * t) + 0.01 * np.random.default_rng(1).standard_normal(t.size)

    def fun(x):
        return (x[0] * np.exp(-x[1] * t) - y) / 0.01

    def jac(x, r):
        e = np.exp(-x[1] * t)
        return np.column_stack([e, -x[0] * t * e]) / 0.01

    box = (np.zeros(2), np.full(2, 10.0))
    on_steps = levenberg_marquardt(fun, jac, np.array([0.5, 0.2]), box, sigma_tol=0.1)
    assert on_steps.small_steps and on_steps.message.startswith("steps below")
    on_drop = levenberg_marquardt(fun, jac, np.array([1.9, 1.25]), box, sigma_tol=1e-9,
                                  chi2_tol=1e6)
    assert on_drop.success and not on_drop.small_steps
    assert on_drop.message.startswith("chi^2 drop")
    cut_short = levenberg_marquardt(fun, jac, np.array([0.5, 0.2]), box, max_iter=1)
    assert not cut_short.success and not cut_short.small_steps
