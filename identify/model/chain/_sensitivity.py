"""A chain's forward sensitivities: simulated angles and their derivatives in one pass.

The chain (identify.model.chain) is M(q) q'' = tau(q, q'; p), so along any direction y
(a state component or a parameter)

    dq''/dy = M^-1 (dtau/dy - dM/dy q''),

each dtau/dy and dM/dy by hand from chain_acceleration_into's formulas, and the same
Cholesky factor of M solves them all. The raw parameters p are theta~'s inertial part
[mu_ij (i<j), kappa_i, nu_i] followed by the friction array row by row (Fc, Fs, vt, b,
cd per joint). A caller fits its own unknowns z; it names them by triplets
(raw index, column, weight), dq/dz_c = sum weight * dq/dp_raw, which covers a fixed
ratio (Fs tied to Fc: two triplets into one column) and a logarithm (v_t fitted as
log v_t: weight v_t) without a column more.

Applying the same RK4 to the augmented system x' = f, S' = f_x S + f_z gives exactly
the derivative of the discrete RK4 map (internal differentiation: Hairer, Norsett and
Wanner, Solving ODEs I, sec. I.14 and II.6), so the Jacobian matches the simulation to
rounding, with none of a finite difference's error, as identify.model._sensitivity does
for the Furuta rig. The last 2n columns are the derivatives by the segment's initial
state (S(0) = [0 | I]).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._threads import run_jobs, segment_steps
from ._equations import chain_acceleration_into
from ._layout import unpack_inertial

__all__ = ["chain_sensitivity", "chain_sensitivity_jobs_into"]


@njit(cache=True, error_model="numpy")
def _friction_slope(fr: np.ndarray, m: int, w: float, dp: np.ndarray) -> float:
    """df_m/dw of joint m at w, and df_m/d(Fc, Fs, vt, b, cd) into dp[0:5]."""
    fc, fs, vt, b, cd = fr[m, 0], fr[m, 1], fr[m, 2], fr[m, 3], fr[m, 4]
    slope = b + 2.0 * cd * abs(w)
    dp[0] = dp[1] = dp[2] = 0.0
    dp[3] = w
    dp[4] = abs(w) * w
    if vt > 0.0:
        r = w / vt
        t = math.tanh(4.0 * r)
        d = 0.25 * r * r + 0.75
        bump = r / (d * d)
        dbump = (d - r * r) / (d * d * d)
        dr = 4.0 * fc * (1.0 - t * t) + (fs - fc) * dbump  # df/dr, the constants fixed
        if fc != 0.0 or fs != 0.0:
            slope += dr / vt
            dp[2] = -dr * r / vt
        dp[0] = t - bump
        dp[1] = bump
    return slope


@njit(cache=True, error_model="numpy")
def _solve(mm: np.ndarray, v: np.ndarray) -> None:
    """v <- M^-1 v with M's Cholesky factor in mm's lower triangle."""
    n = v.shape[0]
    for i in range(n):
        s = v[i]
        for k in range(i):
            s -= mm[i, k] * v[k]
        v[i] = s / mm[i, i]
    for i in range(n - 1, -1, -1):
        s = v[i]
        for k in range(i + 1, n):
            s -= mm[k, i] * v[k]
        v[i] = s / mm[i, i]


@njit(cache=True, error_model="numpy")
def _acceleration_derivatives(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, g: float,
                              fr: np.ndarray, x: np.ndarray, raw: np.ndarray,
                              col: np.ndarray, weight: np.ndarray, acc: np.ndarray,
                              ax: np.ndarray, az: np.ndarray, mm: np.ndarray,
                              tau: np.ndarray, v: np.ndarray, work: np.ndarray) -> None:
    """q'' into acc, dq''/dx (n, 2n) into ax, dq''/dz (n, Z) into az (the triplets'
    columns); mm, tau, v (n,) and work (4n + 2, max(n, 6)) are work arrays."""
    n = kappa.shape[0]
    chain_acceleration_into(kappa, mu, nu, g, fr, x, acc, mm, tau)  # mm: the factor
    npair = n * (n - 1) // 2
    base = npair + 2 * n  # the friction's first raw index
    sn, cs = work[:n, :n], work[n:2 * n, :n]  # sin and cos of q_i - q_j
    dfr = work[2 * n:3 * n, :6]  # per joint: df/d(Fc, Fs, vt, b, cd), then df/dw
    pair = work[3 * n:3 * n + 2, :]  # row 0: i, row 1: j of each mu pair (as floats)
    minv = work[3 * n + 2:4 * n + 2, :n]
    at = 0
    for i in range(n):
        sn[i, i], cs[i, i] = 0.0, 1.0
        for j in range(i + 1, n):
            d = x[i] - x[j]
            sn[i, j], cs[i, j] = math.sin(d), math.cos(d)
            sn[j, i], cs[j, i] = -sn[i, j], cs[i, j]
            if at < pair.shape[1]:
                pair[0, at], pair[1, at] = i, j
            at += 1
        w = x[n + i] - (x[n + i - 1] if i > 0 else 0.0)
        dfr[i, 5] = _friction_slope(fr, i, w, dfr[i])
    # by the angles q_k: dtau/dq_k - dM/dq_k q''
    for k in range(n):
        for i in range(n):
            if i == k:
                s = g * nu[k] * math.cos(x[k])
                for j in range(n):
                    if j != k:
                        s -= mu[k, j] * (cs[k, j] * x[n + j] * x[n + j] - sn[k, j] * acc[j])
            else:
                s = mu[i, k] * (cs[i, k] * x[n + k] * x[n + k] - sn[i, k] * acc[k])
            ax[i, k] = s
    # by the velocities q'_k: Coriolis and the friction of the joints at either end
    for k in range(n):
        for i in range(n):
            ax[i, n + k] = 0.0 if i == k else -2.0 * mu[i, k] * sn[i, k] * x[n + k]
        for m in (k, k + 1):  # joint m's w_m = q'_m - q'_{m-1} holds q'_k
            if m >= n:
                continue
            fp = dfr[m, 5] if m == k else -dfr[m, 5]
            ax[m, n + k] -= fp
            if m > 0:
                ax[m - 1, n + k] += fp
    # by the fitted unknowns, through their raw parameters
    az[:, :] = 0.0
    for e in range(raw.shape[0]):
        p, c, wgt = raw[e], col[e], weight[e]
        if p < npair:  # mu_ij: M_ij = M_ji = mu_ij cos(q_i - q_j) and two Coriolis terms
            i, j = int(pair[0, p]), int(pair[1, p])
            az[i, c] += wgt * (-sn[i, j] * x[n + j] * x[n + j] - cs[i, j] * acc[j])
            az[j, c] += wgt * (sn[i, j] * x[n + i] * x[n + i] - cs[i, j] * acc[i])
        elif p < npair + n:  # kappa_i
            az[p - npair, c] -= wgt * acc[p - npair]
        elif p < base:  # nu_i
            i = p - npair - n
            az[i, c] += wgt * g * math.sin(x[i])
        else:  # a friction term of joint m: -f_m on row m, +f_m on row m - 1
            m = (p - base) // 5
            df = wgt * dfr[m, (p - base) % 5]
            az[m, c] -= df
            if m > 0:
                az[m - 1, c] += df
    # every column's M^-1: the inverse once (n solves), then products, no division more
    for j in range(n):
        for i in range(n):
            v[i] = 1.0 if i == j else 0.0
        _solve(mm, v)
        for i in range(n):
            minv[i, j] = v[i]
    _times(minv, ax, v)
    _times(minv, az, v)


@njit(cache=True, error_model="numpy")
def _times(minv: np.ndarray, a: np.ndarray, v: np.ndarray) -> None:
    """a <- minv @ a, column by column (v: (n,) work)."""
    n = minv.shape[0]
    for c in range(a.shape[1]):
        for i in range(n):
            s = 0.0
            for j in range(n):
                s += minv[i, j] * a[j, c]
            v[i] = s
        for i in range(n):
            a[i, c] = v[i]


@njit(cache=True, nogil=True, error_model="numpy")
def chain_sensitivity_jobs_into(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, g: float,
                                fr: np.ndarray, x0: np.ndarray, lengths: np.ndarray,
                                first_row: np.ndarray, dt: float, substeps: np.ndarray,
                                raw: np.ndarray, col: np.ndarray, weight: np.ndarray,
                                n_z: int, row_scale: np.ndarray, jobs: np.ndarray,
                                out: np.ndarray, d_z: np.ndarray, d_x0: np.ndarray) -> None:
    """Segments `jobs` (as chain_segments) into out (N, n) and their sensitivities,
    joint i's rows times row_scale[i], into d_z (N * n, n_z: the triplets' unknowns) and
    d_x0 (N * n, 2n: the segment's initial state), sample-major. A segment that diverges
    stops there (out NaN, derivatives 0 from there on). Releases the GIL: segments run
    in threads."""
    n = kappa.shape[0]
    nx = 2 * n
    ncol = n_z + nx
    x = np.empty(nx)
    xs = np.empty(nx)
    s_mat = np.empty((nx, ncol))
    ss = np.empty((nx, ncol))
    k = np.empty((4, nx))
    kk = np.empty((4, nx, ncol))
    acc = np.empty(n)
    ax = np.empty((n, nx))
    az = np.empty((n, max(n_z, 1)))
    mm = np.empty((n, n))
    tau = np.empty(n)
    v = np.empty(n)
    work = np.empty((4 * n + 2, max(n * (n - 1) // 2, n, 6)))
    wst = (0.0, 0.5, 0.5, 1.0)
    for seg in jobs:
        row = first_row[seg]
        # element by element: a slice assignment from an array compiles numba's shape
        # mismatch message (string formatting), 1.6-2 s of the first run after an install
        for i in range(x.shape[0]):
            x[i] = x0[seg, i]
        s_mat[:, :] = 0.0
        for i in range(nx):
            s_mat[i, n_z + i] = 1.0
        for r in range(lengths[seg]):
            finite = True
            for i in range(nx):
                if not math.isfinite(x[i]):
                    finite = False
            if not finite:  # the rest of the segment: NaN angles, no derivative
                for rr in range(r, lengths[seg]):
                    for i in range(n):
                        out[row + rr, i] = math.nan
                        d_z[(row + rr) * n + i, :] = 0.0
                        d_x0[(row + rr) * n + i, :] = 0.0
                break
            for i in range(n):
                out[row + r, i] = x[i]
                at, scale = (row + r) * n + i, row_scale[i]
                for c in range(n_z):
                    d_z[at, c] = s_mat[i, c] * scale
                for c in range(nx):
                    d_x0[at, c] = s_mat[i, n_z + c] * scale
            if r + 1 == lengths[seg]:
                break
            m = substeps[row + r]
            h = dt / m
            for _ in range(m):
                for stage in range(4):
                    a = wst[stage] * h
                    for i in range(nx):
                        if stage:
                            xs[i] = x[i] + a * k[stage - 1, i]
                            for c in range(ncol):
                                ss[i, c] = s_mat[i, c] + a * kk[stage - 1, i, c]
                        else:
                            xs[i] = x[i]
                            for c in range(ncol):
                                ss[i, c] = s_mat[i, c]
                    _acceleration_derivatives(kappa, mu, nu, g, fr, xs, raw, col, weight,
                                              acc, ax, az, mm, tau, v, work)
                    for i in range(n):
                        k[stage, i] = xs[n + i]
                        k[stage, n + i] = acc[i]
                        ki, kv = kk[stage, i], kk[stage, n + i]  # rows: contiguous loops
                        for c in range(ncol):
                            ki[c] = ss[n + i, c]
                        for c in range(n_z):
                            kv[c] = az[i, c]
                        for c in range(n_z, ncol):
                            kv[c] = 0.0
                        for j in range(nx):
                            a = ax[i, j]
                            for c in range(ncol):
                                kv[c] += a * ss[j, c]
                for i in range(nx):
                    x[i] += h / 6.0 * (k[0, i] + 2.0 * k[1, i] + 2.0 * k[2, i] + k[3, i])
                    for c in range(ncol):
                        s_mat[i, c] += h / 6.0 * (kk[0, i, c] + 2.0 * kk[1, i, c]
                                                  + 2.0 * kk[2, i, c] + kk[3, i, c])


def chain_sensitivity(inertial: np.ndarray, friction: np.ndarray, g: float, x0: np.ndarray,
                      lengths: np.ndarray, dt: float, substeps: int | np.ndarray,
                      raw: np.ndarray, col: np.ndarray, weight: np.ndarray, n_z: int,
                      row_scale: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Angles (N, n) of segments from their states x0 (S, 2n), as ChainParams.simulate;
    their derivatives (N, n, n_z) by the unknowns the triplets (raw, col, weight) define
    and (N, n, 2n) by each segment's initial state, joint i's times row_scale[i] (a fit's
    1 / sigma_i: its Jacobian with no pass more). Segments run on every core."""
    n = friction.shape[0]
    kappa, mu, nu = unpack_inertial(inertial, n)
    lengths = np.ascontiguousarray(lengths, dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    total = int(lengths.sum())
    sub = np.array(np.broadcast_to(np.asarray(substeps, dtype=np.int64), (total,)))
    out = np.empty((total, n))
    d_z = np.empty((total * n, n_z))  # every row is written
    d_x0 = np.empty((total * n, 2 * n))
    scale = np.ones(n) if row_scale is None else np.ascontiguousarray(row_scale, np.float64)
    fr = np.ascontiguousarray(friction, dtype=np.float64)
    x0 = np.ascontiguousarray(x0, dtype=np.float64)
    raw, col = (np.ascontiguousarray(a, dtype=np.int64) for a in (raw, col))
    weight = np.ascontiguousarray(weight, dtype=np.float64)

    def work(jobs: np.ndarray) -> None:
        chain_sensitivity_jobs_into(kappa, mu, nu, g, fr, x0, lengths, first, dt, sub, raw,
                                    col, weight, n_z, scale, jobs, out, d_z, d_x0)

    run_jobs(segment_steps(sub, first, lengths), work)
    return out, d_z.reshape(total, n, n_z), d_x0.reshape(total, n, 2 * n)
