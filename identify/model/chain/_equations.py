"""A planar chain of n links on a fixed base: seed 002's n-link pendulum, with joint friction.

One model serves every rig kind but the Furuta pendulum: a `single` rig (one free joint:
a plain pendulum, a Furuta rig with a joint clamped) is the chain with n = 1 in a plane
tilted from the vertical, and `nlink:N` is seed 002's n-link pendulum with its cart fixed.

Link i (1..n) swings at the absolute angle q_i from the upward vertical (0 upright, pi
hanging). With the inertial parameters of seed 002 eqs. 5-7,

    nu_i    = m_i a_i + l_i sum_{k>i} m_k           (a_i: joint i to centre of mass i, m)
    kappa_i = J_i + m_i a_i^2 + l_i^2 sum_{k>i} m_k (J_i about the centre of mass)
    mu_ij   = l_i nu_j                              (i < j)

the equations of motion are (Euler-Lagrange of T, V and the joint friction, seed 002 eq. 9
with the cart fixed; identify.seeds derives and tests them by energy conservation)

    kappa_i q_i'' + sum_{j != i} mu_ij [cos(q_i - q_j) q_j'' + sin(q_i - q_j) q_j'^2]
        = g_e nu_i sin q_i - f_i(w_i) + f_{i+1}(w_{i+1}),    w_i = q_i' - q_{i-1}', q_0' = 0

g_e is gravity in the plane of motion: g cos(tilt) for a plane tilted from the vertical.
Joint friction acts on the joint's relative velocity w_i (seed 002's dissipation function
D = 1/2 sum b_k w_k^2 has the viscous case) and is Brown-McPhee's law, as model.md's with
the normal force folded into the torques:

    f(w) = Fc tanh(4 r) + (Fs - Fc) r / (r^2/4 + 3/4)^2 + b w + c_d |w| w,   r = w / v_t

Fc the Coulomb torque, Fs the static (breakaway) torque reached at w = v_t, b viscous,
c_d a quadratic (air) drag on the link, the term a real swing shows at large amplitude.
Fc = Fs = c_d = 0 is seed 002's viscous friction; Fs = Fc is Coulomb plus viscous.

Every term is linear in theta~ = [mu_ij (i<j), kappa_i, nu_i] and the friction torques, so
a free swing fixes them only up to one common factor (no torque is known). The standard
parameters divide by one of them: mu_{n-1,n} for n >= 2, nu_1 for n = 1 (seed 002 eq. 14,
Table I).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._threads import run_jobs, segment_steps
from ._layout import (
    link_pairs,
)


@njit(cache=True)
def joint_friction(fr: np.ndarray, i: int, w: float) -> float:
    """Friction torque of joint i at relative velocity w (fr: (n, 5) Fc, Fs, vt, b, cd)."""
    fc, fs, vt, b = fr[i, 0], fr[i, 1], fr[i, 2], fr[i, 3]
    out = b * w + fr[i, 4] * abs(w) * w
    if (fc != 0.0 or fs != 0.0) and vt > 0.0:
        r = w / vt
        d = 0.25 * r * r + 0.75
        out += fc * math.tanh(4.0 * r) + (fs - fc) * r / (d * d)
    return out


@njit(cache=True)
def chain_acceleration_into(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, g: float,
                            fr: np.ndarray, x: np.ndarray, out: np.ndarray, mm: np.ndarray,
                            tau: np.ndarray) -> None:
    """q'' of the state x = (q, q') into `out`, with work arrays mm (n, n) and tau (n,)
    (Cholesky: M is symmetric positive definite)."""
    n = kappa.shape[0]
    for i in range(n):
        acc = g * nu[i] * math.sin(x[i])
        for j in range(n):
            if j == i:
                mm[i, i] = kappa[i]
            else:
                d = x[i] - x[j]
                mm[i, j] = mu[i, j] * math.cos(d)
                acc -= mu[i, j] * math.sin(d) * x[n + j] * x[n + j]
        acc -= joint_friction(fr, i, x[n + i] - (x[n + i - 1] if i > 0 else 0.0))
        if i + 1 < n:
            acc += joint_friction(fr, i + 1, x[n + i + 1] - x[n + i])
        tau[i] = acc
    for j in range(n):  # Cholesky M = L L^T in the lower triangle of mm
        s = mm[j, j]
        for k in range(j):
            s -= mm[j, k] * mm[j, k]
        mm[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            s = mm[i, j]
            for k in range(j):
                s -= mm[i, k] * mm[j, k]
            mm[i, j] = s / mm[j, j]
    for i in range(n):  # L z = tau
        s = tau[i]
        for k in range(i):
            s -= mm[i, k] * out[k]
        out[i] = s / mm[i, i]
    for i in range(n - 1, -1, -1):  # L^T x = z
        s = out[i]
        for k in range(i + 1, n):
            s -= mm[k, i] * out[k]
        out[i] = s / mm[i, i]


@njit(cache=True)
def chain_acceleration(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, g: float,
                       fr: np.ndarray, q: np.ndarray, qd: np.ndarray, out: np.ndarray) -> None:
    """q'' = M(q)^-1 tau(q, q') into `out`."""
    n = q.shape[0]
    x = np.empty(2 * n)
    for i in range(n):  # element by element (chain_segments_into says why)
        x[i], x[n + i] = q[i], qd[i]
    chain_acceleration_into(kappa, mu, nu, g, fr, x, out, np.empty((n, n)), np.empty(n))


@njit(cache=True)
def _rk4_step(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, g: float, fr: np.ndarray,
              x: np.ndarray, dt: float, k: np.ndarray, xs: np.ndarray, acc: np.ndarray,
              mm: np.ndarray, tau: np.ndarray) -> None:
    """x += one classic RK4 step; k (4, 2n), xs (2n,), acc (n,) are work arrays."""
    n = kappa.shape[0]
    w = (0.0, 0.5, 0.5, 1.0)
    for stage in range(4):
        for i in range(2 * n):
            xs[i] = x[i] + w[stage] * dt * k[stage - 1, i] if stage else x[i]
        chain_acceleration_into(kappa, mu, nu, g, fr, xs, acc, mm, tau)
        for i in range(n):
            k[stage, i] = xs[n + i]
            k[stage, n + i] = acc[i]
    for i in range(2 * n):
        x[i] += dt / 6.0 * (k[0, i] + 2.0 * k[1, i] + 2.0 * k[2, i] + k[3, i])


def chain_segments(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, g: float,
                   fr: np.ndarray, x0: np.ndarray, lengths: np.ndarray, dt: float,
                   substeps: np.ndarray) -> np.ndarray:
    """Angles (sum(lengths), n) of segments simulated from their states x0 (S, 2n).

    Segment s gives lengths[s] samples dt apart, the first its own x0[s]; the step from
    output row r to the next takes substeps[r] RK4 steps (more where a joint reverses,
    whose friction transition a sample step would straddle). A segment that diverges
    (non-finite state) is left at NaN from there on. Segments run on every core.
    """
    first = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    total = int(lengths.sum())
    out = np.full((total, kappa.shape[0]), np.nan)

    def work(jobs: np.ndarray) -> None:
        chain_segments_into(kappa, mu, nu, g, fr, x0, lengths, first, dt, substeps, jobs, out)

    run_jobs(segment_steps(substeps, first, lengths), work)
    return out


@njit(cache=True, nogil=True)
def chain_segments_into(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, g: float,
                        fr: np.ndarray, x0: np.ndarray, lengths: np.ndarray,
                        first_row: np.ndarray, dt: float, substeps: np.ndarray,
                        jobs: np.ndarray, out: np.ndarray) -> None:
    """Segments `jobs` of chain_segments into out from row first_row[s] (out starts
    NaN). Releases the GIL: segments run in threads."""
    n = kappa.shape[0]
    k = np.empty((4, 2 * n))
    xs = np.empty(2 * n)
    acc = np.empty(n)
    mm = np.empty((n, n))
    tau = np.empty(n)
    x = np.empty(2 * n)
    for s in jobs:
        row = first_row[s]
        # element by element: a slice assignment from an array compiles numba's shape
        # mismatch message (string formatting), 1.6-2 s of the first run after an install
        for i in range(2 * n):
            x[i] = x0[s, i]
        for j in range(lengths[s]):
            finite = True
            for i in range(2 * n):
                if not math.isfinite(x[i]):
                    finite = False
            if not finite:
                break
            for i in range(n):
                out[row + j, i] = x[i]
            if j + 1 == lengths[s]:
                break
            m = substeps[row + j]
            for _ in range(m):
                _rk4_step(kappa, mu, nu, g, fr, x, dt / m, k, xs, acc, mm, tau)


@njit(cache=True, nogil=True)
def chain_run(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, g: float, fr: np.ndarray,
              x: np.ndarray, n_out: int, dt: float, substeps: int) -> np.ndarray:
    """Angles (n_out, n) from the state x, row 0 at x, rows dt * substeps apart; x is
    left at the state of the last row (a simulated device goes on from there)."""
    n = kappa.shape[0]
    out = np.empty((n_out, n))
    k = np.empty((4, 2 * n))
    xs = np.empty(2 * n)
    acc = np.empty(n)
    mm = np.empty((n, n))
    tau = np.empty(n)
    for j in range(n_out):
        if j:
            for _ in range(substeps):
                _rk4_step(kappa, mu, nu, g, fr, x, dt, k, xs, acc, mm, tau)
        for i in range(n):
            out[j, i] = x[i]
    return out


@njit(cache=True)
def chain_energy(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, g: float, q: np.ndarray,
                 qd: np.ndarray) -> float:
    """T + V of the chain (friction dissipates it)."""
    n = q.shape[0]
    e = 0.0
    for i in range(n):
        e += 0.5 * kappa[i] * qd[i] * qd[i] + g * nu[i] * math.cos(q[i])
        for j in range(i + 1, n):
            e += mu[i, j] * qd[i] * qd[j] * math.cos(q[i] - q[j])
    return e


def chain_regressor(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, g: float) -> np.ndarray:
    """Seed 002's Phi~ (eq. 13, u = 0) with the cart fixed, per sample: (k, n, r) with
    columns [mu_ij, kappa_i, nu_i, b_i], r = n(n-1)/2 + 3n, and Phi~ theta~ = 0."""
    q, qd, qdd = (np.asarray(x, dtype=np.float64) for x in (q, qd, qdd))
    k, n = q.shape
    pairs = link_pairs(n)
    npair = len(pairs)
    phi = np.zeros((k, n, npair + 3 * n))
    for c, (i, j) in enumerate(pairs):
        d = q[:, i] - q[:, j]
        phi[:, i, c] = np.cos(d) * qdd[:, j] + np.sin(d) * qd[:, j] ** 2  # f_ij
        phi[:, j, c] = np.cos(d) * qdd[:, i] - np.sin(d) * qd[:, i] ** 2  # f_ji
    for i in range(n):
        phi[:, i, npair + i] = qdd[:, i]
        phi[:, i, npair + n + i] = -g * np.sin(q[:, i])
        w = qd[:, i] - (qd[:, i - 1] if i > 0 else 0.0)
        phi[:, i, npair + 2 * n + i] = w
        if i > 0:
            phi[:, i - 1, npair + 2 * n + i] = -w
    return phi


__all__ = [
    "chain_acceleration", "chain_acceleration_into", "chain_energy", "chain_regressor",
    "chain_run", "chain_segments", "chain_segments_into", "joint_friction",
]
