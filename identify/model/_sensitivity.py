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
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._base import equivalent_rigs
from ._equations import N_COEFF, coefficients, mass_and_bias
from ._threads import run_jobs, segment_steps

__all__ = ["acceleration_derivatives", "coefficient_jacobian", "sensitivity_jobs_into",
           "simulate_jobs_sensitivity", "simulate_sensitivity"]


@njit(cache=True, inline='always')
def _friction_parts(c: np.ndarray, k: int, v: float) -> tuple[float, float, float, float]:
    """A joint's friction F (constants c[k:k+4], r = v c[k+2]): F, dF/dr, tanh(4 r) and
    r / d^2. dF/dv = dF/dr c[k+2] + c[k+3]; by the constants: tanh(4 r), r / d^2,
    dF/dr v and v."""
    r = v * c[k + 2]
    t = math.tanh(4.0 * r)
    d = 0.25 * r * r + 0.75
    bump = r / (d * d)
    dr_part = c[k] * 4.0 * (1.0 - t * t) + c[k + 1] * ((d - r * r) / (d * d * d))  # dF/dr
    return c[k] * t + c[k + 1] * bump + c[k + 3] * v, dr_part, t, bump


@njit(cache=True)
def acceleration_derivatives(c: np.ndarray, th0: float, th1: float, v0: float, v1: float,
                             da: np.ndarray) -> tuple[float, float]:
    """q'' (as acceleration_of) and its derivatives: da[:, 0:4] by (theta0, theta1,
    theta0', theta1'), da[:, 4:4 + N_COEFF] by the coefficients (da: (2, 4 + N_COEFF)).

    With H q'' = r: dq'' = H^-1 (dr - dH q''), each direction's dr and dH by hand from
    acceleration_of's formulas. Each column is written out with only its nonzero terms:
    a loop over all of them through zeroed scratch rows cost more than the arithmetic.
    """
    h11, h12, h22, bg0, bg1 = mass_and_bias(c, th0, th1, v0, v1)
    s, co = math.sin(th1), math.cos(th1)
    s0, c0 = math.sin(th0), math.cos(th0)
    sc = c[3] * s * co
    f0, drp0, t0, bump0 = _friction_parts(c, 7, v0)
    f1, drp1, t1, bump1 = _friction_parts(c, 11, v1)
    r0 = -f0 - bg0 - c[15] * (th0 - c[16])
    r1 = -f1 - bg1 - c[17] * abs(v1) * v1
    det = h11 * h22 - h12 * h12
    a0 = (h22 * r0 - h12 * r1) / det
    a1 = (h11 * r1 - h12 * r0) / det
    i11, i12, i22 = h22 / det, -h12 / det, h11 / det
    dsc = c[3] * (co * co - s * s)
    # the states; e = dr - dH q''
    e0 = -(c[4] * c0 + c[5] * s * s0) - c[15]
    e1 = c[5] * c0 * co
    da[0, 0], da[1, 0] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    e0 = (-(2.0 * dsc * v0 * v1 + c[1] * co * v1 * v1 - c[5] * co * c0)
          - 2.0 * c[3] * s * co * a0 - c[1] * s * a1)
    e1 = -(-dsc * v0 * v0 + c[6] * co + c[5] * s0 * s) - c[1] * s * a0
    da[0, 1], da[1, 1] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    e0 = -(drp0 * c[9] + c[10]) - 2.0 * sc * v1
    e1 = 2.0 * sc * v0
    da[0, 2], da[1, 2] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    e0 = -(2.0 * sc * v0 + 2.0 * c[1] * s * v1)
    e1 = -(drp1 * c[13] + c[14]) - 2.0 * c[17] * abs(v1)
    da[0, 3], da[1, 3] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    # the coefficients (offset 4): c0 H11, c1 H12 and B0, c2 H22, c3 H11 and B, c4-c6 G
    da[0, 4], da[1, 4] = -i11 * a0, -i12 * a0
    e0 = -s * v1 * v1 + co * a1
    e1 = co * a0
    da[0, 5], da[1, 5] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    da[0, 6], da[1, 6] = -i12 * a1, -i22 * a1
    e0 = -2.0 * s * co * v0 * v1 - s * s * a0
    e1 = s * co * v0 * v0
    da[0, 7], da[1, 7] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    da[0, 8], da[1, 8] = i11 * -s0, i12 * -s0
    e0 = s * c0
    e1 = s0 * co
    da[0, 9], da[1, 9] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    da[0, 10], da[1, 10] = i12 * -s, i22 * -s
    # each joint's friction (its right-hand side loses F): c7-c10 arm, c11-c14 pendulum
    e0, e1, e2, e3 = -t0, -bump0, -drp0 * v0, -v0
    da[0, 11], da[1, 11] = i11 * e0, i12 * e0
    da[0, 12], da[1, 12] = i11 * e1, i12 * e1
    da[0, 13], da[1, 13] = i11 * e2, i12 * e2
    da[0, 14], da[1, 14] = i11 * e3, i12 * e3
    e0, e1, e2, e3 = -t1, -bump1, -drp1 * v1, -v1
    da[0, 15], da[1, 15] = i12 * e0, i22 * e0
    da[0, 16], da[1, 16] = i12 * e1, i22 * e1
    da[0, 17], da[1, 17] = i12 * e2, i22 * e2
    da[0, 18], da[1, 18] = i12 * e3, i22 * e3
    # the extra terms: c15, c16 the arm's cable, c17 the pendulum's drag
    e0, e1 = -(th0 - c[16]), c[15]
    da[0, 19], da[1, 19] = i11 * e0, i12 * e0
    da[0, 20], da[1, 20] = i11 * e1, i12 * e1
    e1 = -abs(v1) * v1
    da[0, 21], da[1, 21] = i12 * e1, i22 * e1
    return a0, a1


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
    out = np.zeros((N_COEFF, u.size))
    for i in range(u.size):
        step = 1e-6 * max(abs(u[i]), 1e-3)
        up, um = u.copy(), u.copy()
        up[i] += step
        um[i] -= step
        out[:, i] = (_coefficients_of(up) - _coefficients_of(um)) / (2.0 * step)
    return out


def _coefficients_of(u: np.ndarray) -> np.ndarray:
    rig, fr = equivalent_rigs(u)
    return np.asarray(coefficients(rig[0], fr[0]))
