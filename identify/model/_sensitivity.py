"""Forward sensitivities: the simulated angles and their derivatives in one pass.

A finite-difference Jacobian simulates the capture once per parameter (14 of them, and
4 per segment's state). Integrating the variational equations beside the state does it
in one simulation whose step costs a few plain ones:

    x' = f(x; c),   S' = df/dx S + [df/dc_P | 0],   S(0) = [0 | I]

with x = (theta0, theta1, theta0', theta1'), c the equations' coefficients
(identify.model._equations.coefficients), c_P the ones the caller asks for (the chain
rule to its own parameters, dc/dp, is a small product afterwards) and the last 4 columns
of S the derivatives by the initial state. Applying the same RK4
to the augmented system gives exactly the derivative of the discrete RK4 map ("internal
differentiation": Hairer, Norsett and Wanner, Solving ODEs I, sec. I.14 and II.6), so the
Jacobian matches the simulation to rounding, with none of a finite difference's error.
The intervals a schedule gives the implicit step (identify.model._implicit) carry S by
the implicit function theorem at each stage instead (_implicit_sensitivity_step).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._base import equivalent_rigs
from ._derivatives import acceleration_derivatives
from ._equations import N_COEFF, coefficients
from ._implicit import GAMMA, STAGE_A, implicit_step
from ._threads import run_jobs, segment_steps

__all__ = ["acceleration_derivatives", "coefficient_jacobian", "sensitivity_jobs_into",
           "simulate_jobs_sensitivity", "simulate_sensitivity"]


@njit(cache=True)
def simulate_sensitivity(c: np.ndarray, cols: np.ndarray, x0: np.ndarray, h: float,
                         substeps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Angles (n, 2) at k h from x0 (substeps[k] RK4 steps in interval k, as
    simulate_scheduled) and their derivatives (n, 2, P + 4): by the P coefficients
    c[cols], then by the 4 entries of x0."""
    n_out = substeps.shape[0]
    out = np.empty((n_out, 2))
    d_out = np.empty((n_out, 2, cols.shape[0] + 4))
    _sensitivity_into(c, cols, x0, h, substeps, out, d_out)
    return out, d_out


@njit(cache=True)
def _sensitivity_into(c: np.ndarray, cols: np.ndarray, x0: np.ndarray, h: float,
                      substeps: np.ndarray, out: np.ndarray, d_out: np.ndarray) -> None:
    """simulate_sensitivity, written into out and d_out (views of a stacked result).

    The state's four RK4 stages do not depend on S, so each step evaluates them (and
    df/dx, df/dc_P there) first, then carries S one column at a time through the same
    four stages, the column's entries held in registers: the same arithmetic in the same
    order as the augmented system's stages, to the bit. With the derivatives written out,
    a step with 18 columns took 0.67 us against 1.50 when whole rows of S went through
    scratch arrays between stages (one thread, LLVM -O1 as compiled ahead).
    """
    n_out = substeps.shape[0]
    n_p = cols.shape[0]
    m = n_p + 4
    x = x0.copy()
    sens = np.zeros((4, m))
    for i in range(4):
        sens[i, n_p + i] = 1.0
    da = np.empty((2, 4 + N_COEFF))
    kx = np.empty((4, 4))
    xs = np.empty(4)
    dx = np.empty((4, 2, 4))  # per stage, dq''_j / dx_i
    dp = np.zeros((4, 2, m))  # per stage, dq''_j / dc_P (zero for the state columns)
    ds = np.empty((2, 4))  # the implicit stages' Newton scratch (by the states alone)
    stage_jac = np.empty((3, 2, 4))  # per implicit stage: dq''/dtheta, then M^-1
    stage_x = np.empty((3, 4))  # per implicit stage: its state
    for k in range(n_out):
        out[k, 0], out[k, 1] = x[0], x[1]
        # element by element: a slice assignment from an array compiles numba's shape
        # mismatch message (string formatting), 1.6 of this kernel's 5 s of compiling
        for col in range(m):
            d_out[k, 0, col] = sens[0, col]
            d_out[k, 1, col] = sens[1, col]
        if k + 1 == n_out:
            break
        ns = substeps[k]
        if ns < 0:  # where friction holds a joint: the implicit step (identify.model._implicit)
            dt = h / -ns
            for _ in range(-ns):
                _implicit_sensitivity_step(c, cols, x, sens, dt, da, ds, stage_jac, dp, kx,
                                           stage_x)
            continue
        dt = h / ns
        for _ in range(ns):
            for stage in range(4):
                if stage == 0:
                    for i in range(4):
                        xs[i] = x[i]
                else:
                    w = dt if stage == 3 else 0.5 * dt
                    for i in range(4):
                        xs[i] = x[i] + w * kx[stage - 1, i]
                a0, a1 = acceleration_derivatives(c, xs[0], xs[1], xs[2], xs[3], da)
                kx[stage, 0], kx[stage, 1], kx[stage, 2], kx[stage, 3] = xs[2], xs[3], a0, a1
                for j in range(2):
                    for i in range(4):
                        dx[stage, j, i] = da[j, i]
                    for col in range(n_p):
                        dp[stage, j, col] = da[j, 4 + cols[col]]
            for i in range(4):
                x[i] += dt / 6.0 * (kx[0, i] + 2.0 * kx[1, i] + 2.0 * kx[2, i] + kx[3, i])
            h6 = dt / 6.0
            for col in range(m):
                _carry_column(sens, col, dx, dp, dt, h6)


@njit(cache=True)
def _implicit_sensitivity_step(c: np.ndarray, cols: np.ndarray, x: np.ndarray,
                               sens: np.ndarray, dt: float, da: np.ndarray, ds: np.ndarray,
                               stage_jac: np.ndarray, dp: np.ndarray, kx: np.ndarray,
                               stage_x: np.ndarray) -> None:
    """One implicit step (identify.model._implicit) of x and of every column of S, in
    place. A stage X = b + dt g f(X) moves by the implicit function theorem,

        (I - dt g J) dX = db + dt g df/dc_P dc_P,   J = [[0, I], [dq''/dtheta, dq''/dtheta']]

    at the stage. With theta' = theta'' linear that is one 2x2 solve,
    M dX_v = db_v + dt g (dq''/dc_P dc_P + dq''/dtheta db_theta), with
    M = I - dt g dq''/dtheta' - (dt g)^2 dq''/dtheta, then dX_theta = db_theta + dt g dX_v:
    the derivative of the step itself, as RK4's columns are of RK4's (to the Newton
    iteration's tolerance, identify.model._implicit STEP_TOL). da: the derivatives of q''
    by state and coefficients at each converged stage; ds: the Newton iterations' own;
    kx, stage_x: (3, 4) scratch for the stages' slopes and states. The state takes the
    very step the plain simulation does (implicit_step), so the angles agree to the bit.
    The stages are a loop, not written out: the kernel compiles in half the time, the
    first identification after an install waiting for it."""
    n_p = cols.shape[0]
    hg = dt * GAMMA
    implicit_step(c, x, dt, ds, kx, stage_x)
    for st in range(3):
        acceleration_derivatives(c, stage_x[st, 0], stage_x[st, 1], stage_x[st, 2],
                                 stage_x[st, 3], da)
        _keep_stage(da, cols, hg, st, stage_jac, dp, n_p)
    for col in range(n_p + 4):
        y0, y1, y2, y3 = sens[0, col], sens[1, col], sens[2, col], sens[3, col]
        e0, e1, e2, e3 = y0, y1, y2, y3
        for st in range(3):
            c0, c1, c2, c3 = y0, y1, y2, y3
            for j in range(st):  # kx's rows now hold the column's stage slopes
                w = dt * STAGE_A[st, j]
                c0 += w * kx[j, 0]
                c1 += w * kx[j, 1]
                c2 += w * kx[j, 2]
                c3 += w * kx[j, 3]
            e0, e1, e2, e3 = _implicit_column(stage_jac, dp, st, col, hg, c0, c1, c2, c3)
            kx[st, 0], kx[st, 1], kx[st, 2], kx[st, 3] = e2, e3, (e2 - c2) / hg, (e3 - c3) / hg
        sens[0, col], sens[1, col], sens[2, col], sens[3, col] = e0, e1, e2, e3


@njit(cache=True)
def _keep_stage(da: np.ndarray, cols: np.ndarray, hg: float, st: int, stage_jac: np.ndarray,
                dp: np.ndarray, n_p: int) -> None:
    """Stage st's dq''/dtheta and M^-1 (stage_jac[st, :, 0:2] and [st, :, 2:4]) and its
    dq''/dc_P (dp[st]), from da, the derivatives of q'' there."""
    m00 = 1.0 - hg * (da[0, 2] + hg * da[0, 0])
    m01 = -hg * (da[0, 3] + hg * da[0, 1])
    m10 = -hg * (da[1, 2] + hg * da[1, 0])
    m11 = 1.0 - hg * (da[1, 3] + hg * da[1, 1])
    det = m00 * m11 - m01 * m10
    stage_jac[st, 0, 0], stage_jac[st, 0, 1] = da[0, 0], da[0, 1]
    stage_jac[st, 1, 0], stage_jac[st, 1, 1] = da[1, 0], da[1, 1]
    stage_jac[st, 0, 2], stage_jac[st, 0, 3] = m11 / det, -m01 / det
    stage_jac[st, 1, 2], stage_jac[st, 1, 3] = -m10 / det, m00 / det
    for col in range(n_p):
        dp[st, 0, col] = da[0, 4 + cols[col]]
        dp[st, 1, col] = da[1, 4 + cols[col]]


@njit(cache=True)
def _implicit_column(stage_jac: np.ndarray, dp: np.ndarray, st: int, col: int, hg: float,
                     b0: float, b1: float, b2: float, b3: float
                     ) -> tuple[float, float, float, float]:
    """dX of stage st in column col, from its db = (b0..b3) (_implicit_sensitivity_step)."""
    j = stage_jac
    r0 = b2 + hg * (dp[st, 0, col] + j[st, 0, 0] * b0 + j[st, 0, 1] * b1)
    r1 = b3 + hg * (dp[st, 1, col] + j[st, 1, 0] * b0 + j[st, 1, 1] * b1)
    v0 = j[st, 0, 2] * r0 + j[st, 0, 3] * r1
    v1 = j[st, 1, 2] * r0 + j[st, 1, 3] * r1
    return b0 + hg * v0, b1 + hg * v1, v0, v1


@njit(cache=True, inline='always')
def _stage(dx: np.ndarray, dp: np.ndarray, st: int, col: int, y0: float, y1: float,
           y2: float, y3: float) -> tuple[float, float]:
    """The accelerations' rows of S' in column col at stage st, S's column being y."""
    return (dx[st, 0, 0] * y0 + dx[st, 0, 1] * y1 + dx[st, 0, 2] * y2 + dx[st, 0, 3] * y3
            + dp[st, 0, col],
            dx[st, 1, 0] * y0 + dx[st, 1, 1] * y1 + dx[st, 1, 2] * y2 + dx[st, 1, 3] * y3
            + dp[st, 1, col])


@njit(cache=True, inline='always')
def _carry_column(sens: np.ndarray, col: int, dx: np.ndarray, dp: np.ndarray, dt: float,
                  h6: float) -> None:
    """One RK4 step of column col of S' = df/dx S + df/dc_P, the stages' df/dx and
    df/dc_P given (h6 = dt / 6). Written out stage by stage: a loop over the stages ran
    20 % slower."""
    h2 = 0.5 * dt
    s0, s1, s2, s3 = sens[0, col], sens[1, col], sens[2, col], sens[3, col]
    a2, a3 = _stage(dx, dp, 0, col, s0, s1, s2, s3)
    t0, t1, t2, t3 = s2, s3, a2, a3
    y0, y1, y2, y3 = s0 + h2 * s2, s1 + h2 * s3, s2 + h2 * a2, s3 + h2 * a3
    a2, a3 = _stage(dx, dp, 1, col, y0, y1, y2, y3)
    t0, t1, t2, t3 = t0 + 2.0 * y2, t1 + 2.0 * y3, t2 + 2.0 * a2, t3 + 2.0 * a3
    y0, y1, y2, y3 = s0 + h2 * y2, s1 + h2 * y3, s2 + h2 * a2, s3 + h2 * a3
    a2, a3 = _stage(dx, dp, 2, col, y0, y1, y2, y3)
    t0, t1, t2, t3 = t0 + 2.0 * y2, t1 + 2.0 * y3, t2 + 2.0 * a2, t3 + 2.0 * a3
    y0, y1, y2, y3 = s0 + dt * y2, s1 + dt * y3, s2 + dt * a2, s3 + dt * a3
    a2, a3 = _stage(dx, dp, 3, col, y0, y1, y2, y3)
    t0, t1, t2, t3 = t0 + y2, t1 + y3, t2 + a2, t3 + a3
    sens[0, col] = s0 + h6 * t0
    sens[1, col] = s1 + h6 * t1
    sens[2, col] = s2 + h6 * t2
    sens[3, col] = s3 + h6 * t3


def simulate_jobs_sensitivity(rig: np.ndarray, fr: np.ndarray, cols: np.ndarray,
                              x0s: np.ndarray, seg_first: np.ndarray, seg_len: np.ndarray,
                              h: float, substeps: np.ndarray, out_offset: np.ndarray,
                              total: int) -> tuple[np.ndarray, np.ndarray]:
    """simulate_sensitivity of every segment s from x0s[s] (one rig, one friction), on
    every core, stacked: rows out_offset[s] .. + seg_len[s] (as simulate_jobs)."""
    c = coefficients(rig, fr)
    out = np.empty((total, 2))
    d_out = np.empty((total, 2, cols.shape[0] + 4))

    def work(jobs: np.ndarray) -> None:
        sensitivity_jobs_into(c, cols, x0s, seg_first, seg_len, h, substeps, out_offset,
                              jobs, out, d_out)

    run_jobs(segment_steps(substeps, seg_first, seg_len), work)
    return out, d_out


@njit(cache=True, nogil=True)
def sensitivity_jobs_into(c: np.ndarray, cols: np.ndarray, x0s: np.ndarray,
                          seg_first: np.ndarray, seg_len: np.ndarray, h: float,
                          substeps: np.ndarray, out_offset: np.ndarray, jobs: np.ndarray,
                          out: np.ndarray, d_out: np.ndarray) -> None:
    """simulate_jobs_sensitivity of the segments `jobs` (the coefficients c),
    written into their rows of out and d_out."""
    for s in jobs:
        sched = substeps[seg_first[s]:seg_first[s] + seg_len[s]]
        a, b = out_offset[s], out_offset[s] + seg_len[s]
        _sensitivity_into(c, cols, x0s[s], h, sched, out[a:b], d_out[a:b])


def coefficient_jacobian(u: np.ndarray) -> np.ndarray:
    """d c / d u (N_COEFF, len(u)): the coefficients of the equivalent rig of the
    normalised vector u (identify.model.equivalent_rigs), by central differences of that
    map (products and one reciprocal: exact to ~1e-10)."""
    u = np.asarray(u, dtype=np.float64)
    steps = np.array([1e-6 * max(abs(float(v)), 1e-3) for v in u])
    # every perturbed u through the rig map at once: it works row by row, the same
    # arithmetic as one row at a time (a fit's Jacobian took 0.79 ms here that way)
    shifted = np.repeat(u[None], 2 * u.size, axis=0)
    k = np.arange(u.size)
    shifted[2 * k, k] += steps
    shifted[2 * k + 1, k] -= steps
    rigs, frs = equivalent_rigs(shifted)
    out = np.zeros((N_COEFF, u.size))
    for i, step in enumerate(steps):
        up = coefficients(rigs[2 * i], frs[2 * i])
        um = coefficients(rigs[2 * i + 1], frs[2 * i + 1])
        out[:, i] = (up - um) / (2.0 * step)
    return out
