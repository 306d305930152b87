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
from numpy.typing import ArrayLike

from ...solvers import LseiSolution, lsei
from ._design import (
    Design,
    Inequalities,
    Layout,
    Piece,
    design,
    inequalities,
    layout,
    pieces_of,
    snap,
)
from ._fit import MODELS, IntegralFit
from ._noise import noise_level, propagated_cov


def integral_identify(t: ArrayLike, theta: ArrayLike, u: ArrayLike | None = None,
                      segments: int | np.ndarray = 1,
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
    names, order, tv, th, uv = _checked(t, theta, u, model)
    return _identify(tv, th, uv, names, order, segments=segments, model=model,
                     constant=constant, b_known=b_known, offset=offset, constrained=constrained,
                     floor=floor, lipschitz=lipschitz, gap_factor=gap_factor,
                     min_samples=min_samples)


def _identify(t: np.ndarray, theta: np.ndarray, u: np.ndarray | None, names: tuple[str, ...],
              order: int, *, segments: int | np.ndarray, model: str, constant: bool,
              b_known: float | None, offset: bool, constrained: bool, floor: float,
              lipschitz: Sequence[float | None] | None, gap_factor: float,
              min_samples: int | None) -> IntegralFit:
    """integral_identify on checked arrays: pieces, system, solve, uncertainty, result."""
    jb = snap(t, segments)
    n = jb.size - 1
    pieces = pieces_of(t, jb, gap_factor, min_samples or 2 * (order + len(names) + 2))
    lay = layout(names, order, n, len(pieces), constant=constant,
                 b_free=u is not None and b_known is None, offset=offset)
    des = design(t, theta, u, b_known, pieces, lay)
    ineq = inequalities(lay, t, jb, constrained=constrained, floor=floor,
                        lipschitz=lipschitz, model=model)
    sol, x, pinned = _solve(des, ineq, lay.npar)
    fitted = np.einsum("ij,j->i", des.e, x)  # no BLAS call: see identify.solvers._lsei._compress
    coef_rep = lay.coef_ix if not constant else np.repeat(lay.coef_ix, n, axis=0)
    coef = x[coef_rep]
    noise, cov, std = _uncertainty(des, sol, pieces, coef, fitted, pinned)
    reconstructed = np.full(t.size, np.nan)
    reconstructed[des.row_of] = fitted + (theta[des.row_of] - des.f)
    theta0, slopes, init, piece_end = _piece_states(x, coef, pieces, lay, reconstructed)
    every = np.arange(n) * (0 if constant else 1)  # segment -> its coefficient set
    return IntegralFit(
        model=model, constant=constant, boundaries=t[jb], coef_names=names,
        coef=coef, coef_std=std[coef_rep],
        b=(float(x[lay.b_ix]) if lay.b_free else
           (None if u is None or b_known is None else float(b_known))),
        b_std=float(std[lay.b_ix]) if lay.b_free else None,
        offset=x[lay.off_ix][every] if lay.off_ix is not None else None,
        offset_std=std[lay.off_ix][every] if lay.off_ix is not None else None,
        piece_segment=np.array([p[0] for p in pieces]),
        piece_first=np.array([p[1] for p in pieces]),
        piece_last=np.array([p[2] for p in pieces]),
        piece_theta0=theta0, piece_slopes=slopes, piece_end=piece_end, initial_state=init,
        joins=np.array(des.joins, dtype=np.int64).reshape(-1, 3),
        t=t, theta=theta, reconstructed=reconstructed, residuals=theta - reconstructed,
        x=x, std=std, cov=cov, param_names=lay.param_names, rss=sol.rss, dof=sol.dof,
        noise_std=noise, active=tuple(nm for nm, a in zip(ineq.names, sol.active) if a),
    )


def _checked(t_in: ArrayLike, theta_in: ArrayLike, u_in: ArrayLike | None, model: str
             ) -> tuple[tuple[str, ...], int, np.ndarray, np.ndarray, np.ndarray | None]:
    """The model's coefficient names and order, and t, theta, u as checked float arrays."""
    if model not in MODELS:
        raise ValueError(f"model must be one of {sorted(MODELS)}, got {model!r}")
    order = 2 if model == "second_order" else 3
    t = np.asarray(t_in, dtype=np.float64)
    theta = np.asarray(theta_in, dtype=np.float64)
    if t.ndim != 1 or theta.shape != t.shape or t.size < 4:
        raise ValueError("t and theta must be 1-D of equal length (at least 4 samples)")
    u = None
    if u_in is not None:
        u = np.asarray(u_in, dtype=np.float64)
        if u.shape != t.shape:
            raise ValueError("u must have the shape of t")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(theta))):
        raise ValueError("t and theta must be finite")
    return MODELS[model], order, t, theta, u


def _solve(des: Design, ineq: Inequalities, npar: int
           ) -> tuple[LseiSolution, np.ndarray, np.ndarray]:
    """The constrained least-squares solution (identify.solvers.lsei), with every active
    bound landed on exactly; returns it, x and which parameters sit on a bound."""
    sol = lsei(des.e, des.f,
               np.array(des.c_rows) if des.c_rows else None,
               np.array(des.d_vals) if des.d_vals else None,
               np.array(ineq.g_rows) if ineq.g_rows else None,
               np.array(ineq.h_vals) if ineq.h_vals else None)
    x = sol.x.copy()
    pinned = np.zeros(npar, dtype=bool)
    for row, h, a in zip(ineq.g_rows, ineq.h_vals, sol.active):
        if a and np.count_nonzero(row) == 1:  # a bound: land exactly on it, std undefined
            ix = int(np.flatnonzero(row)[0])
            x[ix] = max(x[ix], h)
            pinned[ix] = True
    return sol, x, pinned


def _uncertainty(des: Design, sol: LseiSolution, pieces: list[Piece], coef: np.ndarray,
                 fitted: np.ndarray, pinned: np.ndarray
                 ) -> tuple[float, np.ndarray, np.ndarray]:
    """(noise std, covariance, standard deviations) from white measurement noise.

    The noise comes from the residual's first differences within pieces, its propagation
    through the integrals and the joins from identify.methods.integral._noise; a
    parameter on an active bound has no standard deviation (NaN).
    """
    noise = noise_level(des.f - fitted, [hi - lo + 1 - int(des.joined[p])
                                          for p, (_, lo, hi) in enumerate(pieces)])
    cov = propagated_cov(sol.cov_unit, sol.dx_dd, des.stored, [coef[p[0]] for p in pieces],
                          des.joined) * noise ** 2
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    std[pinned] = np.nan
    return noise, cov, std


def _piece_states(x: np.ndarray, coef: np.ndarray, pieces: list[Piece], lay: Layout,
                  reconstructed: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each piece's theta0, slopes, initial state and the reconstruction at its end.

    The initial state follows from the slope parameters (eqs. 12, 32 solved for the
    derivatives): theta' = alpha - c theta0 (second order); with the delay model
    theta' = beta1 - a1 theta0 and theta'' = 2 beta2 - a1 theta' - a2 theta0.
    """
    theta0 = np.array([x[ix[0]] for ix in lay.piece_ix])
    slopes = np.array([x[ix[1:]] for ix in lay.piece_ix])
    init = np.empty((len(pieces), lay.order))
    piece_end = np.empty(len(pieces))
    for p, (i, _lo, hi) in enumerate(pieces):
        cf = coef[i]
        init[p, 0] = theta0[p]
        init[p, 1] = slopes[p, 0] - cf[0] * theta0[p]
        if lay.order == 3:
            init[p, 2] = 2.0 * slopes[p, 1] - cf[0] * init[p, 1] - cf[1] * theta0[p]
        piece_end[p] = reconstructed[hi]
    return theta0, slopes, init, piece_end
