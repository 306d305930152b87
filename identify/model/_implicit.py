"""An L-stable implicit step for where friction holds a joint still.

Near zero velocity a sharp friction transition is a stiff damper: the joint's velocity
relaxes at a rate |dF/dv| / inertia (identify.model friction_rate), 1e4-1e5 1/s for an
omega_t of 1e-4..1e-3 rad/s. Classic RK4 is stable on it only for steps below 2.8 over
that rate, so a joint stuck for seconds cost RK4 4-20 substeps per 2 ms sample interval
though it barely moves. This step is stable at any rate and damps the stiff mode
completely, so there a fraction of those substeps suffices (the schedule keeps enough to
resolve the joint breaking away: identify.methods._oe_problem IMPLICIT_FEWER).

It is Alexander's three-stage, third-order, stiffly accurate SDIRK (Alexander, SIAM J.
Numer. Anal. 14 (1977) 1006; Hairer and Wanner, Solving ODEs II, sec. IV.6, table 6.5):

    X_i = x_n + dt sum_{j<i} a_ij K_j + dt g K_i,   K_i = f(X_i),   x_{n+1} = X_3

with g = 0.4358665215 (the root of g^3 - 3 g^2 + 3 g / 2 - 1/6 in (1/6, 1/2)),
a_21 = (1 - g) / 2, a_31 = -(6 g^2 - 16 g + 1) / 4, a_32 = (6 g^2 - 20 g + 5) / 4. Since
theta' = theta'' is linear, each stage is a Newton solve for its two velocities alone.
A schedule asks for it with a negative entry: -n, n steps of it in that interval
(identify.methods._oe_problem split_schedule).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._derivatives import acceleration_derivatives

__all__ = ["GAMMA", "IMPLICIT_COST", "STAGE_A", "implicit_stage", "implicit_step"]

GAMMA = 0.4358665215084590
A21 = 0.5 * (1.0 - GAMMA)
A31 = -(6.0 * GAMMA * GAMMA - 16.0 * GAMMA + 1.0) / 4.0
A32 = (6.0 * GAMMA * GAMMA - 20.0 * GAMMA + 5.0) / 4.0
#: the stages' explicit coefficients a_ij (j < i)
STAGE_A = np.array([[0.0, 0.0], [A21, 0.0], [A31, A32]])
#: Newton iterations a stage may take (from the last stage's velocities it takes 2-3),
#: and the halvings of one step (implicit_stage)
NEWTON_MAX = 20
HALVINGS = 8
#: a Newton step below this (relative to 1 + |v|, rad/s) ends the iteration
STEP_TOL = 1e-8
#: a step of this method against one RK4 step, as work: 1.9 with the sensitivities,
#: 2.7 without (each stage's Newton iterations evaluate q'' and its derivatives by the
#: state); the weight of a job with such steps
IMPLICIT_COST = 2.0


@njit(cache=True)
def implicit_stage(c: np.ndarray, da: np.ndarray, b0: float, b1: float, b2: float,
                   b3: float, hg: float, v0: float, v1: float) -> tuple[float, float]:
    """The stage velocities V solving G(V) = V - b_v - hg q''(b_theta + hg V, V) = 0, by
    Newton from (v0, v1); b = (b0..b3) the stage's explicit part. da, of shape (2, 4), is
    left holding the derivatives of q'' by the state at the V returned.

    Past the Stribeck hump friction falls with speed, so with a long step G may have more
    than one root; a full Newton step can jump between them and never settle (a capture's
    breakaway, where the derivatives then came out 0.6 % off). Each step is halved until
    it lowers |G|, so the iteration stays by the root next to its start."""
    a0, a1 = acceleration_derivatives(c, b0 + hg * v0, b1 + hg * v1, v0, v1, da)
    g0 = v0 - b2 - hg * a0
    g1 = v1 - b3 - hg * a1
    for _ in range(NEWTON_MAX):
        m00 = 1.0 - hg * (da[0, 2] + hg * da[0, 0])
        m01 = -hg * (da[0, 3] + hg * da[0, 1])
        m10 = -hg * (da[1, 2] + hg * da[1, 0])
        m11 = 1.0 - hg * (da[1, 3] + hg * da[1, 1])
        det = m00 * m11 - m01 * m10
        d0 = (m11 * g0 - m01 * g1) / det
        d1 = (m00 * g1 - m10 * g0) / det
        norm = g0 * g0 + g1 * g1
        lam = 1.0
        for _ in range(HALVINGS):
            t0, t1 = v0 - lam * d0, v1 - lam * d1
            a0, a1 = acceleration_derivatives(c, b0 + hg * t0, b1 + hg * t1, t0, t1, da)
            h0 = t0 - b2 - hg * a0
            h1 = t1 - b3 - hg * a1
            if h0 * h0 + h1 * h1 <= (1.0 - 1e-4 * lam) * norm:
                break
            lam *= 0.5
        v0, v1, g0, g1 = t0, t1, h0, h1
        # converging quadratically: a step this small leaves an error of its square
        if abs(lam * d0) <= STEP_TOL * (1.0 + abs(v0)) and \
                abs(lam * d1) <= STEP_TOL * (1.0 + abs(v1)):
            break
    return v0, v1


@njit(cache=True)
def implicit_step(c: np.ndarray, x: np.ndarray, dt: float, da: np.ndarray, kx: np.ndarray,
                  stages: np.ndarray) -> None:
    """One step of the method (see module) of x = (theta0, theta1, theta0', theta1') in
    place; c the equations' coefficients, da scratch of shape (2, 4), kx (3, 4) scratch for
    the stages' slopes. stages (3, 4) is left holding each stage's state X_i: the
    sensitivities take their derivatives there (identify.model._sensitivity)."""
    hg = dt * GAMMA
    v0, v1 = x[2], x[3]
    b0, b1, b2, b3 = x[0], x[1], x[2], x[3]
    for st in range(3):
        b0, b1, b2, b3 = x[0], x[1], x[2], x[3]
        for j in range(st):
            w = dt * STAGE_A[st, j]
            b0 += w * kx[j, 0]
            b1 += w * kx[j, 1]
            b2 += w * kx[j, 2]
            b3 += w * kx[j, 3]
        v0, v1 = implicit_stage(c, da, b0, b1, b2, b3, hg, v0, v1)
        stages[st, 0], stages[st, 1], stages[st, 2], stages[st, 3] = \
            b0 + hg * v0, b1 + hg * v1, v0, v1
        kx[st, 0], kx[st, 1], kx[st, 2], kx[st, 3] = v0, v1, (v0 - b2) / hg, (v1 - b3) / hg
    x[0], x[1], x[2], x[3] = stages[2, 0], stages[2, 1], v0, v1  # stiffly accurate: X_3
