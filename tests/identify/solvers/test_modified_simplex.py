"""The modified simplex of seed 003's Appendix (identify.solvers.modified_simplex)."""

import numpy as np
import pytest
from scipy.optimize import Bounds, minimize, rosen

from hilrig.identify.solvers import initial_points, modified_simplex


class Spy:
    """Records every point a function is evaluated at."""

    def __init__(self, f):
        self.f = f
        self.points: list[np.ndarray] = []

    def __call__(self, x):
        self.points.append(np.array(x, dtype=float))
        return self.f(x)


def test_rosenbrock_2d_converges():
    res = modified_simplex(rosen, [-1.2, 1.0], scale=0.5, xatol=1e-8, fatol=1e-14)
    assert res.success, res.message
    np.testing.assert_allclose(res.x, [1.0, 1.0], atol=1e-6)
    assert res.fun < 1e-12
    assert res.ops["restart"] > 0  # the seed's restart on a successful extension happened


def test_rosenbrock_4d_converges():
    res = modified_simplex(rosen, [-1.2, 1.0, -1.2, 1.0], scale=0.5, xatol=1e-8,
                           fatol=1e-14, maxfev=20_000)
    assert res.success, res.message
    np.testing.assert_allclose(res.x, np.ones(4), atol=1e-6)
    assert res.final_simplex[0].shape == (8, 4)  # 2n points (Lesuisse)


def test_quadratic_with_known_minimum_to_1e8():
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    a = q @ np.diag([1.0, 3.0, 10.0, 30.0, 100.0]) @ q.T  # rotated, condition 100
    c = np.array([0.3, -1.7, 2.2, 0.05, -0.4])

    def f(x):
        d = x - c
        return float(d @ a @ d)

    res = modified_simplex(f, np.zeros(5), scale=1.0, xatol=1e-10, fatol=1e-22,
                           maxfev=50_000)
    assert res.success, res.message
    assert np.max(np.abs(res.x - c)) < 1e-8
    assert res.fun < 1e-15


def test_bounds_are_respected_by_every_evaluation():
    spy = Spy(lambda x: float((x[0] - 2.0) ** 2 + (x[1] + 3.0) ** 2 + x[2] ** 2))
    bounds = [(-1.0, 1.0), (-1.0, 1.0), (None, None)]
    res = modified_simplex(spy, [0.9, 0.5, 3.0], scale=0.5, bounds=bounds, xatol=1e-9,
                           fatol=1e-14)
    pts = np.array(spy.points)
    assert np.all(pts[:, :2] >= -1.0) and np.all(pts[:, :2] <= 1.0)
    np.testing.assert_allclose(res.x, [1.0, -1.0, 0.0], atol=1e-7)
    # scipy's Bounds object works too, and a start outside the box is projected into it
    res2 = modified_simplex(lambda x: float(np.sum((x - 5.0) ** 2)), [7.0, -7.0],
                            bounds=Bounds([0.0, 0.0], [4.0, 4.0]), scale=0.5)
    np.testing.assert_allclose(res2.x, [4.0, 4.0], atol=1e-4)


def test_initial_simplex_has_2n_points_around_the_start():
    z = np.array([1.0, 2.0, 3.0])
    s = np.array([0.1, 0.2, 0.3])
    pts = initial_points(z, s, 6)
    expect = [z, z + [0.1, 0, 0], z + [0, 0.2, 0], z + [0, 0, 0.3],
              z - [0.1, 0, 0], z - [0, 0.2, 0]]
    np.testing.assert_allclose(pts, expect)
    # oriented along a direction, the backward point along `drop` left out
    pts = initial_points(z, s, 6, direction=np.array([-1.0, 1.0, 1.0]), drop=1)
    expect = [z, z - [0.1, 0, 0], z + [0, 0.2, 0], z + [0, 0, 0.3],
              z + [0.1, 0, 0], z - [0, 0, 0.3]]
    np.testing.assert_allclose(pts, expect)
    assert initial_points(z, s, 4).shape == (4, 3)  # n + 1: the classical simplex
    with pytest.raises(ValueError):
        initial_points(z, s, 3)


def test_first_iteration_follows_eqs_11_12_15_and_restarts_around_the_extension():
    # a tilted plane: the reflection beats the best point and the extension beats the
    # reflection, so the seed's modification must start a new simplex around z_e
    spy = Spy(lambda x: float(x[0] + 2.0 * x[1]))
    s = np.array([1.0, 1.0])
    modified_simplex(spy, [0.0, 0.0], scale=s, maxiter=1, restarts_at_optimum=0)
    p = spy.points
    z = np.array(p[:4])
    fz = np.array([spy.f(x) for x in z])
    np.testing.assert_allclose(z, initial_points(np.zeros(2), s, 4))
    h = int(np.argmax(fz))
    zcr = (z.sum(axis=0) - z[h]) / 3                                   # (12), m - 1 = 3
    zr = 2.0 * zcr - z[h]                                              # (11), alpha = 1
    np.testing.assert_allclose(p[4], zr)
    assert spy.f(zr) < fz.min()
    ze = -1.0 * zcr + 2.0 * zr                                         # (15), gamma = 2
    np.testing.assert_allclose(p[5], ze)
    assert spy.f(ze) < spy.f(zr)
    move = ze - zcr
    new = initial_points(ze, s, 4, direction=np.sign(move), drop=int(np.argmax(np.abs(move))))
    np.testing.assert_allclose(np.array(p[6:9]), new[1:])              # z_e itself is kept
    assert len(p) == 9


def _bumpy(x):
    # f(0) = 0, f(1) = 1, f(-1) = 2, f(0.5) = 3: reflection and contraction both fail
    x = float(x[0])
    return x * x + (1.0 if x < 0 else 0.0) + 2.75 * np.exp(-(((x - 0.5) / 0.01) ** 2))


def test_hanus_contraction_moves_the_worst_point_halfway_and_keeps_its_old_cost():
    spy = Spy(_bumpy)
    res = modified_simplex(spy, [0.0], scale=1.0, maxiter=1, restarts_at_optimum=0)
    # initial 0, 1; reflection -1 (eq. 11); contraction 0.5 (eq. 13); z_n = (z_l+z_h)/2 (16)
    np.testing.assert_allclose(np.ravel(spy.points), [0.0, 1.0, -1.0, 0.5, 0.5])
    z, f = res.final_simplex
    np.testing.assert_allclose(np.ravel(z), [0.0, 0.5])
    # "If not, it also takes the place of the worst point but with the associated cost
    # given by f(z_h)": stored 1 = f(1), although f(0.5) = 3
    np.testing.assert_allclose(f, [0.0, 1.0])
    assert res.ops["hanus_failed"] == 1
    assert res.fun == 0.0 and res.x[0] == 0.0


def test_general_contraction_of_eq_14_when_hanus_is_off():
    spy = Spy(_bumpy)
    res = modified_simplex(spy, [0.0], scale=1.0, maxiter=1, restarts_at_optimum=0,
                           hanus=False)
    z, f = res.final_simplex
    np.testing.assert_allclose(np.ravel(z), [0.0, 0.5])   # (1 - beta) z_i + beta z_l
    np.testing.assert_allclose(f, [0.0, 3.0])             # re-evaluated
    assert res.ops["general_contraction"] == 1


def test_result_is_a_scipy_optimize_result_with_history_and_callback():
    seen = []
    res = modified_simplex(rosen, [-1.2, 1.0], scale=0.5, callback=seen.append)
    for key in ("x", "fun", "nfev", "nit", "success", "message", "status", "history"):
        assert key in res
    assert len(seen) == res.nit == len(res.history["fun"])
    assert np.all(np.diff(res.history["fun"]) <= 0)  # best-so-far never worsens
    assert res.history["nfev"][-1] <= res.nfev

    def stop(intermediate_result):
        if intermediate_result.fun < 1.0:
            raise StopIteration

    res = modified_simplex(rosen, [-1.2, 1.0], scale=0.5, callback=stop)
    assert res.status == 3 and not res.success and res.fun < 1.0
    res = modified_simplex(rosen, [-1.2, 1.0], scale=0.5, maxfev=30)
    assert res.status == 1 and res.nfev == 30 and not res.success


def test_nan_counts_as_worst_and_bad_arguments_are_refused():
    res = modified_simplex(lambda x: np.nan if x[0] > 0.5 else float((x[0] - 0.2) ** 2),
                           [0.0], scale=1.0, xatol=1e-9, fatol=1e-16)
    assert abs(res.x[0] - 0.2) < 1e-6
    with pytest.raises(ValueError):
        modified_simplex(rosen, [0.0, 0.0], npoints=2)
    with pytest.raises(ValueError):
        modified_simplex(rosen, [0.0, 0.0], beta=1.5)
    with pytest.raises(ValueError):
        modified_simplex(rosen, [0.0, 0.0], scale=0.0)


def test_function_evaluations_against_scipy_nelder_mead(capsys):
    """Prints nfev of both methods on the same problems from the same starting size."""
    rng = np.random.default_rng(3)
    q, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    a = q @ np.diag([1.0, 3.0, 10.0, 30.0, 100.0]) @ q.T
    c = np.array([0.3, -1.7, 2.2, 0.05, -0.4])
    problems = [
        ("rosenbrock 2-D", rosen, np.array([-1.2, 1.0]), 0.5),
        ("rosenbrock 4-D", rosen, np.array([-1.2, 1.0, -1.2, 1.0]), 0.5),
        ("quadratic 5-D", lambda x: float((x - c) @ a @ (x - c)), np.zeros(5), 1.0),
    ]
    variants = {
        "modified (2n, Hanus, restarts)": {},
        "classical n+1 (all off)": dict(npoints=None, hanus=False,
                                        restart_on_extension=False, restarts_at_optimum=0),
    }
    lines = []
    for name, f, x0, s in problems:
        n = x0.size
        row = [f"{name:15s}"]
        for label, kw in variants.items():
            kw = dict(kw)
            if "npoints" in kw:
                kw["npoints"] = n + 1
            r = modified_simplex(f, x0, scale=s, xatol=1e-8, fatol=1e-14, maxfev=40_000,
                                 maxiter=40_000, **kw)
            assert r.fun < 1e-10, (name, label)
            row.append(f"{label}: {r.nfev:6d}")
        sim = initial_points(x0, np.full(n, s), n + 1)
        r = minimize(f, x0, method="Nelder-Mead",
                     options=dict(xatol=1e-8, fatol=1e-14, maxfev=40_000, maxiter=40_000,
                                  initial_simplex=sim))
        assert r.fun < 1e-10, name
        row.append(f"scipy Nelder-Mead: {r.nfev:6d}")
        lines.append("  ".join(row))
    with capsys.disabled():
        print("\nfunction evaluations to xatol = 1e-8:")
        for line in lines:
            print("  " + line)
