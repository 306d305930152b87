"""Forward sensitivities: the simulated angles and their exact derivatives in one pass.

The multiple-shooting estimator takes its Jacobian from these instead of from one
simulation per parameter, so they must be the derivatives of the very simulation the
residuals come from: by every coefficient of the equations and by the initial state,
through the friction's reversals, with substeps, and with the extra terms switched on.
"""

from __future__ import annotations

import numpy as np
import pytest

from hilrig.identify import TABLE_III_TRUTH, RigParams
from hilrig.identify.model import (
    N_COEFF,
    acceleration_derivatives,
    acceleration_of,
    coefficient_jacobian,
    coefficients,
    equivalent_rigs,
    friction_rate,
    normalised,
    simulate_scheduled,
    simulate_sensitivity,
)

H = 0.002


def _sim(rig: np.ndarray, fr: np.ndarray, x0: np.ndarray, sched: np.ndarray) -> np.ndarray:
    return simulate_scheduled(rig, fr, x0, 0.0, 0.0, H, sched)


@pytest.fixture(scope="module")
def case():
    # an arm spring and air drag switched on, so every coefficient moves the motion
    rig = RigParams(tilt_deg=12.0, spring0=2e-3, spring_rest0_deg=5.0, drag1=4e-6)
    sched = np.ones(1500, np.int64)
    sched[::25] = 8  # substeps, as near a reversal
    x0 = np.array([0.2, 2.0, 0.5, -1.0])
    return rig.as_array(), TABLE_III_TRUTH.as_array(), x0, sched


def test_the_angles_are_the_plain_simulations_to_the_last_bit(case):
    rig, fr, x0, sched = case
    q, _ = simulate_sensitivity(coefficients(rig, fr), np.arange(N_COEFF), x0, H, sched)
    assert np.array_equal(q, _sim(rig, fr, x0, sched))


def test_the_derivatives_by_the_initial_state_match_central_differences(case):
    rig, fr, x0, sched = case
    _, dq = simulate_sensitivity(coefficients(rig, fr), np.zeros(0, np.int64), x0, H, sched)
    assert dq.shape == (sched.size, 2, 4)
    for i in range(4):
        e = np.zeros(4)
        e[i] = 1e-6
        fd = (_sim(rig, fr, x0 + e, sched) - _sim(rig, fr, x0 - e, sched)) / 2e-6
        assert np.abs(dq[:, :, i] - fd).max() <= 1e-5 * np.abs(fd).max()


def test_the_derivatives_by_the_rig_and_friction_match_central_differences(case):
    """Through the normalised vector u: d q/d u = d q/d c . d c/d u."""
    rig_arr, fr_arr, x0, sched = case
    rig = RigParams(tilt_deg=12.0, spring0=2e-3, spring_rest0_deg=5.0, drag1=4e-6)
    u = normalised(rig, TABLE_III_TRUTH)
    rigs, frs = equivalent_rigs(u)
    dc_du = coefficient_jacobian(u)
    cols = np.flatnonzero(np.any(dc_du != 0, axis=1))
    q, dq = simulate_sensitivity(coefficients(rigs[0], frs[0]), cols, x0, H, sched)
    dq_du = np.einsum("nkc,cu->nku", dq[:, :, :cols.size], dc_du[cols])
    assert np.abs(q - _sim(rig_arr, fr_arr, x0, sched)).max() < 1e-9  # the same motion
    for i in range(u.size):
        step = 1e-5 * max(abs(u[i]), 1e-3)  # central: truncation ~step^2, rounding ~1/step
        up, um = u.copy(), u.copy()
        up[i] += step
        um[i] -= step
        (rp, fp), (rm, fm) = equivalent_rigs(up), equivalent_rigs(um)
        fd = (_sim(rp[0], fp[0], x0, sched) - _sim(rm[0], fm[0], x0, sched)) / (2 * step)
        scale = max(np.abs(fd).max(), 1e-12)
        assert np.abs(dq_du[:, :, i] - fd).max() <= 1e-4 * scale, f"u[{i}]"


@pytest.mark.parametrize("state", [(0.2, 0.7, 1.3, -2.1), (-1.1, 2.6, -0.004, 0.3)])
def test_each_derivative_of_the_accelerations_matches_a_central_difference(state):
    # every column written out by hand: by the four states and by each coefficient, with
    # the cable and the drag on and the arm near a reversal (inside its friction's ramp)
    rig = RigParams(tilt_deg=12.0, spring0=2e-3, spring_rest0_deg=5.0, drag1=4e-6)
    c = coefficients(rig.as_array(), TABLE_III_TRUTH.as_array())
    x = np.array(state)
    da = np.empty((2, 4 + N_COEFF))
    a = acceleration_derivatives(c, *x, da)
    assert a == pytest.approx(acceleration_of(c, *x), rel=1e-15)
    for i in range(4 + N_COEFF):
        xp, xm, cp, cm = x.copy(), x.copy(), c.copy(), c.copy()
        if i < 4:
            step = 1e-5 * max(abs(x[i]), 1e-2)  # the ramp is 1e-3 rad/s wide
            xp[i] += step
            xm[i] -= step
        else:
            step = 1e-4 * max(abs(c[i - 4]), 1e-3)  # rounding ~1e-16 |q''| / step
            cp[i - 4] += step
            cm[i - 4] -= step
        fd = (np.array(acceleration_of(cp, *xp)) - np.array(acceleration_of(cm, *xm))) / (2 * step)
        assert da[:, i] == pytest.approx(fd, rel=1e-6, abs=1e-8 * max(1.0, np.abs(fd).max())), i


@pytest.mark.parametrize("th1", [0.3, 1.6, 2.9])
def test_friction_rate_is_the_accelerations_derivative_by_the_joints_own_velocity_at_rest(th1):
    # at zero velocity the friction's slope alone moves q''_j with q'_j (no Coriolis term)
    rig = RigParams(tilt_deg=12.0).as_array()
    c = coefficients(rig, TABLE_III_TRUTH.as_array())
    da = np.empty((2, 4 + N_COEFF))
    acceleration_derivatives(c, 0.1, th1, 0.0, 0.0, da)
    rate = friction_rate(c, np.array([th1]))[0]
    assert rate == pytest.approx([-da[0, 2], -da[1, 3]], rel=1e-9)


def test_a_sharper_floor_asks_for_a_proportionally_higher_rate():
    c = coefficients(RigParams().as_array(), TABLE_III_TRUTH.as_array())
    th1 = np.array([1.0])
    wide, sharp = friction_rate(c, th1), friction_rate(c, th1, omega_t_min=1e-4)
    assert np.all(sharp > 10 * wide)


def test_each_joint_may_have_its_own_sharpest_transition():
    c = coefficients(RigParams().as_array(), TABLE_III_TRUTH.as_array())
    th1 = np.array([0.4, 1.0])
    per_joint = friction_rate(c, th1, omega_t_min=np.array([1e-4, 2e-3]))
    assert per_joint[:, 0] == pytest.approx(friction_rate(c, th1, omega_t_min=1e-4)[:, 0])
    assert per_joint[:, 1] == pytest.approx(friction_rate(c, th1, omega_t_min=2e-3)[:, 1])


def test_the_coefficient_jacobian_is_its_central_differences_one_u_at_a_time_to_the_bit():
    """It maps every shifted u through the rig at once; the arithmetic stays each u's own,
    so a fit's Jacobian, and every fit, is what it was with one u at a time."""
    rig = RigParams(tilt_deg=12.0, spring0=2e-3, spring_rest0_deg=5.0, drag1=4e-6)
    u = normalised(rig, TABLE_III_TRUTH)
    one_at_a_time = np.zeros((N_COEFF, u.size))
    for i in range(u.size):
        step = 1e-6 * max(abs(u[i]), 1e-3)
        up, um = u.copy(), u.copy()
        up[i] += step
        um[i] -= step
        (rp, fp), (rm, fm) = equivalent_rigs(up), equivalent_rigs(um)
        one_at_a_time[:, i] = (coefficients(rp[0], fp[0]) - coefficients(rm[0], fm[0])) \
            / (2.0 * step)
    assert np.array_equal(coefficient_jacobian(u), one_at_a_time)
