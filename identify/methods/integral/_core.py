"""Integral reconstruction (seed 004) on sampled arrays: the model, its pieces, the solve.

Second order, non-delay (seed 004 eqs. 1-4), piecewise constant over segments i:
    theta'' + c_i theta' + k_i theta = b u(t),            T_{i-1} < t < T_i
Applying I^(2) (eq. 8, I^(k)_{T,t} F = k-fold integral from T to t) gives the integral
reconstructor (eqs. 9, 11, 13), linear in every parameter:
    theta(t) = theta_{i-1} + alpha_{i-1} (t - T_{i-1}) - c_i I^(1) theta - k_i I^(2) theta
               + b I^(2) u,        alpha_{i-1} = dtheta_{i-1} + c_i theta_{i-1}
(eq. 12 prints a minus: integrating c theta' from T gives c (theta - theta_{i-1}), so
the sign is +). Delay model, third order (eqs. 27-30):
    theta''' + a1_i theta'' + a2_i theta' + a3_i theta = b u(t)
    theta(t) = theta_{i-1} + beta1 s + beta2 s^2 - a1 I^(1) theta - a2 I^(2) theta
               - a3 I^(3) theta + b I^(3) u,      s = t - T_{i-1},
    beta1 = dtheta + a1 theta_{i-1},  beta2 = ddtheta/2 + a1 dtheta/2 + a2 theta_{i-1}/2
(eq. 32 prints a2 theta without the 1/2). The integrals are cumulative trapezoids of the
measured theta (eqs. 16, 36): nothing is differentiated.

All segments are solved at once rather than section by section (eqs. 15-23, 35-43): the
C0 continuity of eq. 19/39 (the reconstruction at the end of section i equals the
initial value theta_i of section i+1) is an equality constraint, c_i, k_i > 0 (eqs. 18,
23), a_j > 0 and b > 0 (38, 43a) and the Lipschitz bounds |a_{j,i} - a_{j,i-1}| <=
gamma_j |t_i - t_{i-1}| (43b-d) are linear inequalities. The problem is a convex QP,
solved exactly by identify.solvers.lsei (least squares with equality and inequality
constraints; scipy's lsq_linear takes bounds only, and SLSQP/trust-constr would iterate
with tolerances on a problem that needs none). `constant=True` imposes c_1 = ... = c_n,
k_1 = ... = k_n (the linear models, eqs. 64-70) by sharing the parameters.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.integrate import cumulative_trapezoid

from ...solvers import lsei
from ._fit import MODELS, IntegralFit
from ._noise import noise_level, propagated_cov


def _runs(t: np.ndarray, gap_factor: float) -> list[tuple[int, int]]:
    """Gap-free runs [first, last] (inclusive): a step above gap_factor x median step is a gap."""
    dt = np.diff(t)
    if np.any(dt <= 0):
        raise ValueError("t must increase strictly")
    brk = np.flatnonzero(dt > gap_factor * np.median(dt))
    starts = np.concatenate([[0], brk + 1])
    ends = np.concatenate([brk, [t.size - 1]])
    return list(zip(starts.tolist(), ends.tolist()))


def _snap(t: np.ndarray, segments: int | np.ndarray) -> np.ndarray:
    if np.ndim(segments) == 0:
        n = int(segments)
        if n < 1:
            raise ValueError(f"segments must be >= 1, got {n}")
        bounds = np.linspace(t[0], t[-1], n + 1)
    else:
        bounds = np.asarray(segments, dtype=np.float64)
        if bounds.ndim != 1 or bounds.size < 2 or np.any(np.diff(bounds) <= 0):
            raise ValueError("segments must be a count or increasing boundary times T_0..T_n")
    j = np.clip(np.searchsorted(t, bounds), 1, t.size - 1)
    j = np.where(np.abs(t[j - 1] - bounds) <= np.abs(t[j] - bounds), j - 1, j)
    if np.any(np.diff(j) <= 0):
        raise ValueError("two segment boundaries fall on the same sample")
    return j


def _iterated(y: np.ndarray, s: np.ndarray, times: int) -> list[np.ndarray]:
    """[I^(1) y, ..., I^(times) y] from s[0] by cumulative trapezoids (eq. 8)."""
    out, cur = [], y
    for _ in range(times):
        cur = cumulative_trapezoid(cur, s, initial=0.0)
        out.append(cur)
    return out


def integral_identify(t, theta, u=None, segments: int | np.ndarray = 1,
                      model: str = "second_order", constant: bool = False,
                      b_known: float | None = None, offset: bool = False,
                      constrained: bool = True, floor: float = 1e-9,
                      lipschitz: Sequence[float | None] | None = None,
                      gap_factor: float = 1.5,
                      min_samples: int | None = None) -> IntegralFit:
    """Identify piecewise-constant c(t), k(t) (or a1..a3) by integral reconstruction.

    Parameters
    ----------
    t, theta : (N,) sample times (s, increasing; a step over gap_factor x the median is a
        gap: integrals restart after it and no continuity is imposed across it) and angles.
    u : (N,) input, or None for a free response.
    segments : count of equal segments over [t[0], t[-1]], or boundaries T_0 < ... < T_n
        (eqs. 2-3, 5-6); each boundary snaps to its nearest sample, shared by both sides;
        samples outside [T_0, T_n] are not used.
    model : "second_order" (eq. 4; coefficients c, k) or "delay" (eq. 27; a1, a2, a3).
    constant : one set of coefficients for all segments (eqs. 64-70).
    b_known : fix b instead of identifying it (it is shared by all segments, as in the seed).
    offset : add e_i I^(order) 1 per segment: a constant forcing, i.e. an equilibrium
        theta_eq,i = e_i / k_i (second order) or e_i / a3_i (delay) other than zero.
    constrained : impose c, k > 0 (eqs. 18, 23) or a1..a3 > 0, b > 0 (38, 43a) as >= floor.
    lipschitz : gamma per coefficient (or None entries), bounding |coef_i - coef_{i-1}| by
        gamma |t_i - t_{i-1}| between segment centres (eqs. 43b-d; any model).
    min_samples : pieces shorter than this are left out (default: 2 x their parameters).

    Returns an IntegralFit: coefficients per segment with standard deviations (white
    measurement noise propagated through the integrals and the join constraints; NaN on
    an active bound), b, offsets, each piece's initial condition, the reconstruction, the
    residuals and the active inequality constraints.
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}, got {model!r}")
    names = MODELS[model]
    order, q = (2, 2) if model == "second_order" else (3, 3)
    t = np.asarray(t, dtype=np.float64)
    theta = np.asarray(theta, dtype=np.float64)
    if t.ndim != 1 or theta.shape != t.shape or t.size < 4:
        raise ValueError("t and theta must be 1-D of equal length (at least 4 samples)")
    if u is not None:
        u = np.asarray(u, dtype=np.float64)
        if u.shape != t.shape:
            raise ValueError("u must have the shape of t")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(theta))):
        raise ValueError("t and theta must be finite")
    jb = _snap(t, segments)
    n = jb.size - 1
    min_rows = min_samples or 2 * (order + q + 2)

    pieces = []  # (segment, first, last)
    for a, z in _runs(t, gap_factor):
        for i in range(n):
            lo, hi = max(a, int(jb[i])), min(z, int(jb[i + 1]))
            if hi - lo + 1 >= min_rows:
                pieces.append((i, lo, hi))
    have = {p[0] for p in pieces}
    if len(have) < n:
        missing = sorted(set(range(n)) - have)
        raise ValueError(f"segments {missing} hold no gap-free run of {min_rows} samples")

    # parameter layout
    pn: list[str] = []
    ncs = 1 if constant else n
    coef_ix = np.arange(ncs * q).reshape(ncs, q)
    pn += [f"{nm}_{i}" for i in range(ncs) for nm in names]
    b_free = u is not None and b_known is None
    b_ix = len(pn) if b_free else -1
    if b_free:
        pn.append("b")
    off_ix = np.arange(len(pn), len(pn) + ncs) if offset else None
    if offset:
        pn += [f"e_{i}" for i in range(ncs)]
    slope_names = ("alpha",) if order == 2 else ("beta1", "beta2")
    piece_ix = []
    for p, _ in enumerate(pieces):
        piece_ix.append(np.arange(len(pn), len(pn) + order))
        pn += [f"theta0_{p}"] + [f"{nm}_{p}" for nm in slope_names]
    npar = len(pn)

    joined = [p > 0 and pieces[p - 1][2] == pieces[p][1] for p in range(len(pieces))]
    rows_total = sum(hi - lo + 1 - int(joined[p]) for p, (_, lo, hi) in enumerate(pieces))
    e = np.zeros((rows_total, npar))
    f = np.empty(rows_total)
    row_of = np.empty(rows_total, dtype=np.int64)
    known_end = np.zeros(len(pieces))
    c_rows, d_vals, join_list = [], [], []
    last_row = np.zeros(npar)
    stored = []  # per piece: used columns, design rows (0 where not fitted), local time
    r0 = 0
    for p, (i, lo, hi) in enumerate(pieces):
        s = t[lo:hi + 1] - t[lo]
        blk = np.zeros((s.size, npar))
        ints = _iterated(theta[lo:hi + 1], s, order)
        ci = 0 if constant else i
        for j in range(q):
            blk[:, coef_ix[ci, j]] = -ints[j]
        known = np.zeros(s.size)
        if u is not None:
            iu = _iterated(u[lo:hi + 1], s, order)[-1]
            if b_free:
                blk[:, b_ix] = iu
            else:
                known = b_known * iu
        if offset:
            blk[:, off_ix[ci]] = _iterated(np.ones_like(s), s, order)[-1]
        blk[:, piece_ix[p][0]] = 1.0
        blk[:, piece_ix[p][1]] = s
        if order == 3:
            blk[:, piece_ix[p][2]] = s * s
        known_end[p] = known[-1]
        cols = np.flatnonzero(np.any(blk != 0.0, axis=0))
        stored.append((cols, blk[:, cols] if not joined[p] else
                       np.vstack([np.zeros((1, cols.size)), blk[1:, cols]]), s))
        if joined[p]:
            crow = last_row.copy()  # the previous piece's reconstruction at this row
            crow[piece_ix[p][0]] -= 1.0
            c_rows.append(crow)
            d_vals.append(-known_end[p - 1])
            join_list.append((lo, p - 1, p))
        k0 = 1 if joined[p] else 0
        m = s.size - k0
        e[r0:r0 + m] = blk[k0:]
        f[r0:r0 + m] = theta[lo + k0:hi + 1] - known[k0:]
        row_of[r0:r0 + m] = np.arange(lo + k0, hi + 1)
        r0 += m
        last_row = blk[-1].copy()

    g_rows, h_vals, g_names = [], [], []

    def bound(ix: int, label: str) -> None:
        row = np.zeros(npar)
        row[ix] = 1.0
        g_rows.append(row)
        h_vals.append(floor)
        g_names.append(f"{label} >= {floor:g}")

    if constrained:
        for ci in range(ncs):
            for j in range(q):
                bound(int(coef_ix[ci, j]), pn[coef_ix[ci, j]])
        if model == "delay" and b_free:
            bound(b_ix, "b")
    if lipschitz is not None and not constant:
        gam = list(lipschitz)
        if len(gam) != q:
            raise ValueError(f"lipschitz needs {q} entries (one per coefficient)")
        centres = 0.5 * (t[jb[:-1]] + t[jb[1:]])
        for i in range(1, n):
            dt_c = centres[i] - centres[i - 1]
            for j in range(q):
                if gam[j] is None:
                    continue
                for sign in (1.0, -1.0):
                    row = np.zeros(npar)
                    row[coef_ix[i, j]] = sign
                    row[coef_ix[i - 1, j]] = -sign
                    g_rows.append(-row)  # -(sign (a_i - a_{i-1})) >= -gamma dt
                    h_vals.append(-float(gam[j]) * dt_c)
                    g_names.append(f"|{names[j]}_{i} - {names[j]}_{i - 1}| <= {gam[j]:g} dt")

    sol = lsei(e, f,
               np.array(c_rows) if c_rows else None, np.array(d_vals) if d_vals else None,
               np.array(g_rows) if g_rows else None, np.array(h_vals) if h_vals else None)
    x = sol.x.copy()
    active = tuple(nm for nm, a in zip(g_names, sol.active) if a)
    pinned = np.zeros(npar, dtype=bool)
    for row, h, a in zip(g_rows, h_vals, sol.active):
        if a and np.count_nonzero(row) == 1:  # a bound: land exactly on it, std undefined
            ix = int(np.flatnonzero(row)[0])
            x[ix] = max(x[ix], h)
            pinned[ix] = True
    fitted = np.einsum("ij,j->i", e, x)  # no BLAS call: see identify.solvers._lsei._compress
    coef_rep = coef_ix if not constant else np.repeat(coef_ix, n, axis=0)
    coef = x[coef_rep]
    noise = noise_level(f - fitted, [hi - lo + 1 - int(joined[p])
                                      for p, (_, lo, hi) in enumerate(pieces)])
    cov = propagated_cov(sol.cov_unit, sol.dx_dd, stored, [coef[p[0]] for p in pieces],
                          joined) * noise ** 2
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    std[pinned] = np.nan

    reconstructed = np.full(t.size, np.nan)
    reconstructed[row_of] = fitted + (theta[row_of] - f)
    theta0 = np.array([x[ix[0]] for ix in piece_ix])
    slopes = np.array([x[ix[1:]] for ix in piece_ix])
    init = np.empty((len(pieces), order))
    piece_end = np.empty(len(pieces))
    for p, (i, lo, hi) in enumerate(pieces):
        cf = coef[i]
        init[p, 0] = theta0[p]
        init[p, 1] = slopes[p, 0] - cf[0] * theta0[p]
        if order == 3:
            init[p, 2] = 2.0 * slopes[p, 1] - cf[0] * init[p, 1] - cf[1] * theta0[p]
        piece_end[p] = reconstructed[hi]
    off = x[off_ix][np.arange(n) * (0 if constant else 1)] if offset else None
    off_std = std[off_ix][np.arange(n) * (0 if constant else 1)] if offset else None
    return IntegralFit(
        model=model, constant=constant, boundaries=t[jb], coef_names=names,
        coef=coef, coef_std=std[coef_rep],
        b=(float(x[b_ix]) if b_free else (None if u is None else float(b_known))),
        b_std=float(std[b_ix]) if b_free else None,
        offset=off, offset_std=off_std,
        piece_segment=np.array([p[0] for p in pieces]),
        piece_first=np.array([p[1] for p in pieces]),
        piece_last=np.array([p[2] for p in pieces]),
        piece_theta0=theta0, piece_slopes=slopes, piece_end=piece_end, initial_state=init,
        joins=np.array(join_list, dtype=np.int64).reshape(-1, 3),
        t=t, theta=theta, reconstructed=reconstructed, residuals=theta - reconstructed,
        x=x, std=std, cov=cov, param_names=tuple(pn), rss=sol.rss, dof=sol.dof,
        noise_std=noise, active=active,
    )
