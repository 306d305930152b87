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
from ._threads import run_jobs

__all__ = ["acceleration_derivatives", "coefficient_jacobian", "sensitivity_jobs_into",
           "simulate_jobs_sensitivity", "simulate_sensitivity"]


@njit(cache=True)
def _friction_parts(c: np.ndarray, k: int, v: float, dr: np.ndarray, at: int
                    ) -> tuple[float, float]:
    """A joint's friction F(v) (constants c[k:k+4]) and dF/dv; -dF/dc[k:k+4] into
    dr[at:at+4] (the joint's right-hand side loses F)."""
    r = v * c[k + 2]
    t = math.tanh(4.0 * r)
    d = 0.25 * r * r + 0.75
    bump = r / (d * d)
    dbump_dr = (d - r * r) / (d * d * d)
    sech2 = 1.0 - t * t
    dr_part = c[k] * 4.0 * sech2 + c[k + 1] * dbump_dr  # dF/dr, c fixed
    dr[at], dr[at + 1], dr[at + 2], dr[at + 3] = -t, -bump, -dr_part * v, -v
    return c[k] * t + c[k + 1] * bump + c[k + 3] * v, dr_part * c[k + 2] + c[k + 3]


@njit(cache=True)
def acceleration_derivatives(c: np.ndarray, th0: float, th1: float, v0: float, v1: float,
                             da: np.ndarray, work: np.ndarray) -> tuple[float, float]:
    """q'' (as acceleration_of) and its derivatives: da[:, 0:4] by (theta0, theta1,
    theta0', theta1'), da[:, 4:4 + N_COEFF] by the coefficients (da: (2, 4 + N_COEFF);
    work: scratch of shape (5, 4 + N_COEFF), so the hot loop allocates nothing).

    With H q'' = r: dq'' = H^-1 (dr - dH q''), each direction's dr and dH by hand from
    acceleration_of's formulas.
    """
    h11, h12, h22, bg0, bg1 = mass_and_bias(c, th0, th1, v0, v1)
    # the trigonometry again for the derivatives (cheap beside the rest)
    s, co = math.sin(th1), math.cos(th1)
    s0, c0 = math.sin(th0), math.cos(th0)
    sc = c[3] * s * co
    work[:, :] = 0.0
    dr0, dr1, dh11, dh12, dh22 = work[0], work[1], work[2], work[3], work[4]
    f0, df0 = _friction_parts(c, 7, v0, dr0, 11)
    f1, df1 = _friction_parts(c, 11, v1, dr1, 15)
    r0 = -f0 - bg0 - c[15] * (th0 - c[16])
    r1 = -f1 - bg1 - c[17] * abs(v1) * v1
    det = h11 * h22 - h12 * h12
    a0 = (h22 * r0 - h12 * r1) / det
    a1 = (h11 * r1 - h12 * r0) / det
    i11, i12, i22 = h22 / det, -h12 / det, h11 / det
    n = 4 + N_COEFF
    # states
    dr0[0] = -(c[4] * c0 + c[5] * s * s0) - c[15]
    dr1[0] = c[5] * c0 * co
    dsc = c[3] * (co * co - s * s)
    dh11[1] = 2.0 * c[3] * s * co
    dh12[1] = c[1] * s
    dr0[1] = -(2.0 * dsc * v0 * v1 + c[1] * co * v1 * v1 - c[5] * co * c0)
    dr1[1] = -(-dsc * v0 * v0 + c[6] * co + c[5] * s0 * s)
    dr0[2] = -df0 - 2.0 * sc * v1
    dr1[2] = 2.0 * sc * v0
    dr0[3] = -(2.0 * sc * v0 + 2.0 * c[1] * s * v1)
    dr1[3] = -df1 - 2.0 * c[17] * abs(v1)
    # coefficients (offset 4)
    dh11[4] = 1.0
    dh12[5] = -co
    dr0[5] = -s * v1 * v1
    dh22[6] = 1.0
    dh11[7] = s * s
    dr0[7] = -2.0 * s * co * v0 * v1
    dr1[7] = s * co * v0 * v0
    dr0[8] = -s0
    dr0[9] = s * c0
    dr1[9] = s0 * co
    dr1[10] = -s
    dr0[19] = -(th0 - c[16])
    dr0[20] = c[15]
    dr1[21] = -abs(v1) * v1
    for i in range(n):
        e0 = dr0[i] - dh11[i] * a0 - dh12[i] * a1
        e1 = dr1[i] - dh12[i] * a0 - dh22[i] * a1
        da[0, i] = i11 * e0 + i12 * e1
        da[1, i] = i12 * e0 + i22 * e1
    return a0, a1


@njit(cache=True)
def _derivative(c: np.ndarray, cols: np.ndarray, x: np.ndarray, sens: np.ndarray,
                dx: np.ndarray, dsens: np.ndarray, da: np.ndarray, work: np.ndarray) -> None:
    """(x', S') of the augmented system at (x, S) into dx, dsens."""
    a0, a1 = acceleration_derivatives(c, x[0], x[1], x[2], x[3], da, work)
    dx[0], dx[1], dx[2], dx[3] = x[2], x[3], a0, a1
    n_p = cols.shape[0]
    m = sens.shape[1]
    # loops over the columns innermost: contiguous, so they vectorise
    for col in range(m):
        dsens[0, col] = sens[2, col]
        dsens[1, col] = sens[3, col]
    for j in range(2):
        d0, d1, d2, d3 = da[j, 0], da[j, 1], da[j, 2], da[j, 3]
        for col in range(m):
            dsens[2 + j, col] = (d0 * sens[0, col] + d1 * sens[1, col] + d2 * sens[2, col]
                                 + d3 * sens[3, col])
        for col in range(n_p):
            dsens[2 + j, col] += da[j, 4 + cols[col]]


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
    """simulate_sensitivity, written into out and d_out (views of a stacked result)."""
    n_out = substeps.shape[0]
    n_p = cols.shape[0]
    m = n_p + 4
    x = x0.copy()
    sens = np.zeros((4, m))
    for i in range(4):
        sens[i, n_p + i] = 1.0
    da = np.empty((2, 4 + N_COEFF))
    work = np.empty((5, 4 + N_COEFF))
    kx = np.empty((4, 4))
    ks = np.empty((4, 4, m))
    xs = np.empty(4)
    ss = np.empty((4, m))
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
            _derivative(c, cols, x, sens, kx[0], ks[0], da, work)
            for stage in range(1, 4):
                w = dt if stage == 3 else 0.5 * dt
                for i in range(4):
                    xs[i] = x[i] + w * kx[stage - 1, i]
                    for col in range(m):
                        ss[i, col] = sens[i, col] + w * ks[stage - 1, i, col]
                _derivative(c, cols, xs, ss, kx[stage], ks[stage], da, work)
            for i in range(4):
                x[i] += dt / 6.0 * (kx[0, i] + 2.0 * kx[1, i] + 2.0 * kx[2, i] + kx[3, i])
                for col in range(m):
                    sens[i, col] += dt / 6.0 * (ks[0, i, col] + 2.0 * ks[1, i, col]
                                                + 2.0 * ks[2, i, col] + ks[3, i, col])


def simulate_jobs_sensitivity(rig: np.ndarray, fr: np.ndarray, cols: np.ndarray,
                              x0s: np.ndarray, seg_first: np.ndarray, seg_len: np.ndarray,
                              h: float, substeps: np.ndarray, out_offset: np.ndarray,
                              total: int) -> tuple[np.ndarray, np.ndarray]:
    """simulate_sensitivity of every segment s from x0s[s] (one rig, one friction), on
    every core, stacked: rows out_offset[s] .. + seg_len[s] (as simulate_jobs)."""
    c = coefficients(rig, fr)
    out = np.empty((total, 2))
    d_out = np.empty((total, 2, cols.shape[0] + 4))

    def work(lo: int, hi: int) -> None:
        sensitivity_jobs_into(c, cols, x0s, seg_first, seg_len, h, substeps, out_offset,
                              lo, hi, out, d_out)

    run_jobs(seg_len, work)
    return out, d_out


@njit(cache=True, nogil=True)
def sensitivity_jobs_into(c: np.ndarray, cols: np.ndarray, x0s: np.ndarray,
                          seg_first: np.ndarray, seg_len: np.ndarray, h: float,
                          substeps: np.ndarray, out_offset: np.ndarray, lo: int, hi: int,
                          out: np.ndarray, d_out: np.ndarray) -> None:
    """simulate_jobs_sensitivity of the segments lo .. hi - 1 (the coefficients c),
    written into their rows of out and d_out."""
    for s in range(lo, hi):
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
