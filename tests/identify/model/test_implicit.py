"""The implicit step: where friction holds a joint, stable with a fraction of RK4's steps.

A joint stuck behind a sharp friction transition (omega_t 2e-4 rad/s) is a stiff damper.
RK4 at the substeps the motion needs for accuracy goes unstable there; RK4 kept stable
takes five times as many. The fit's fine-floor schedule hands those intervals to the
implicit step instead: it must follow fine RK4 as closely as the fit can tell, and its
forward sensitivities must be the derivatives of what it simulates.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hilrig.identify import TABLE_III_TRUTH, RigParams
from hilrig.identify.methods._oe_problem import (
    IMPLICIT_FEWER,
    signed_schedule,
    simulated_schedule,
    split_schedule,
)
from hilrig.identify.model import (
    N_COEFF,
    coefficients,
    friction_rate,
    simulate_scheduled,
    simulate_sensitivity,
)
from hilrig.identify.model._threads import segment_steps

H = 0.002
N = 5000
#: an encoder quantum's noise (40,000 counts/rev), rad
NOISE = 2 * math.pi / 40_000 / math.sqrt(12)
FLOOR = np.array([1e-4, 1e-4])  # the fine floor's transition scale, both joints


@pytest.fixture(scope="module")
def stuck():
    """A tilted rig whose arm friction holds the arm for two thirds of a 10 s swing."""
    t = TABLE_III_TRUTH
    rig = RigParams(tilt_deg=12.0).as_array()
    fr = t.model_copy(update={"omega_t0": 2e-4, "omega_t1": 2e-4, "mu_d0": 4 * t.mu_d0,
                              "mu_s0": 4 * t.mu_s0}).as_array()
    x0 = np.array([0.0, 1.5, 0.0, 0.0])
    fine = simulate_scheduled(rig, fr, x0, 0.0, 0.0, H, np.full(N, 512, np.int64))
    rows = [np.arange(N)]
    rate = [friction_rate(coefficients(rig, fr), fine[:, 1], FLOOR)]
    accurate = simulated_schedule(rows, [fine], H, N, FLOOR, 256, None, 1.0, 1)
    stable = simulated_schedule(rows, [fine], H, N, FLOOR, 256, rate, 1.0, 1)
    split = split_schedule(rows, [fine], H, N, FLOOR, 256, rate, 1.0, 1)
    return rig, fr, x0, fine, accurate, stable, split


def test_the_arm_is_held_for_most_of_the_swing(stuck):
    _, _, _, fine, _, _, _ = stuck
    still = np.abs(np.gradient(fine[:, 0], H)) < 1e-3
    assert still.mean() > 0.5


def test_where_rk4_needs_five_times_the_substeps_the_implicit_step_takes_far_fewer(stuck):
    rig, fr, x0, fine, accurate, stable, (sub, implicit) = stuck
    assert stable.mean() > 5 * accurate.mean()
    assert implicit.mean() > 0.5
    assert np.all(sub >= accurate)
    assert np.all(sub[implicit] * IMPLICIT_FEWER >= stable[implicit])
    assert sub.mean() < stable.mean() / 3
    with np.errstate(all="ignore"):
        rk4 = simulate_scheduled(rig, fr, x0, 0.0, 0.0, H, accurate)
    mixed = simulate_scheduled(rig, fr, x0, 0.0, 0.0, H, signed_schedule(sub, implicit))
    assert not np.abs(rk4 - fine).max() < 10 * NOISE  # RK4 unstable where the arm sticks
    assert np.abs(mixed - fine).max() < 0.02 * NOISE


def test_an_implicit_interval_weighs_more_than_one_rk4_step_as_a_job():
    sched = np.array([1, 1, -1, -1, 4])
    steps = segment_steps(sched, np.array([0, 2]), np.array([2, 3]))
    assert steps[0] == 2.0 and steps[1] > 2.0 + 4.0


def test_the_angles_are_the_plain_simulations_to_the_last_bit(stuck):
    rig, fr, x0, _, _, _, split = stuck
    sched = signed_schedule(*split)
    q, _ = simulate_sensitivity(coefficients(rig, fr), np.arange(N_COEFF), x0, H, sched)
    assert np.array_equal(q, simulate_scheduled(rig, fr, x0, 0.0, 0.0, H, sched))


def test_the_derivatives_through_the_stuck_stretches_match_central_differences(stuck):
    rig, fr, x0, _, _, _, split = stuck
    sched = signed_schedule(*split)[:1500]  # 3 s: the arm sticks and slips
    c = coefficients(rig, fr)
    cols = np.arange(11, dtype=np.int64)  # the rig's coefficients and the arm's friction
    _, dq = simulate_sensitivity(c, cols, x0, H, sched)

    def sim(cc: np.ndarray, x: np.ndarray) -> np.ndarray:
        return simulate_sensitivity(cc, np.zeros(0, np.int64), x, H, sched)[0]

    for i in range(4):
        e = np.zeros(4)
        e[i] = 1e-7
        fd = (sim(c, x0 + e) - sim(c, x0 - e)) / 2e-7
        assert np.abs(dq[:, :, cols.size + i] - fd).max() <= 1e-4 * np.abs(fd).max(), i
    def central(col: int, step: float) -> np.ndarray:
        cp, cm = c.copy(), c.copy()
        cp[col] += step
        cm[col] -= step
        return (sim(cp, x0) - sim(cm, x0)) / (2 * step)

    for col in cols:
        step = 1e-5 * abs(c[col])  # Richardson-extrapolated central differences
        fd = (4 * central(col, step / 2) - central(col, step)) / 3
        # the pendulum's inertia and gravity (c2, c6) move it through its own sharp
        # transitions: there differences and sensitivities part by 1e-4, on RK4 as here
        assert np.abs(dq[:, :, col] - fd).max() <= 3e-4 * np.abs(fd).max(), col
