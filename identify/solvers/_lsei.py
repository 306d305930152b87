"""Least squares with linear equality and inequality constraints, solved exactly.

    minimise ||E x - f||^2   subject to   C x = d,   G x >= h

Lawson & Hanson, "Solving Least Squares Problems" (SIAM 1995), ch. 20-23:
0. compress [E f] to its triangular factor (chunked QR: E may have many rows);
1. scale the columns of E to unit norm (x = D z);
2. eliminate the equalities by the null-space method: C D = [L 0] Q^T from a QR of
   (C D)^T, z = z_p + Q2 w with z_p the minimum-norm solution of C D z = d;
3. reduce the least-squares part to its triangular factor: E D Q2 = Q R, g = Q^T f';
4. LSI -> LDP: with y = R w - g the problem is min ||y|| s.t. (G D Q2 R^-1) y >= h'';
5. LDP -> NNLS (L&H algorithm LDP, ch. 23): u = argmin_{u >= 0} ||[G^T; h^T] u - e||,
   r = [G^T; h^T] u - e, y = -r[:-1] / r[-1]; r = 0 means the constraints are infeasible.

This is the subproblem solver inside SLSQP, applied once: the integral reconstruction
makes the problem exactly quadratic, so no outer iteration (and no quasi-Newton Hessian
or stopping tolerance) is needed, and the active set is found exactly by NNLS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr, solve_triangular

from ._qr import qr_r

#: relative size of the ridge added to the triangular factor: keeps a rank-deficient
#: problem (e.g. a segment without motion) solvable, changes a well-posed one by ~1e-12
_RIDGE = 1e-12


@dataclass(frozen=True)
class LseiSolution:
    x: np.ndarray  # (p,) solution
    cov_unit: np.ndarray  # (p, p) (E^T E)^-1 restricted to the equalities and active constraints
    dx_dd: np.ndarray  # (p, me) sensitivity of x to the right-hand side d of the equalities
    active: np.ndarray  # (mi,) bool, inequality rows that hold with equality
    rss: float  # ||E x - f||^2
    dof: int  # rows - free directions (equalities and active constraints removed)


def _compress(e: np.ndarray, f: np.ndarray, chunk: int = 512
              ) -> tuple[np.ndarray, np.ndarray, float]:
    """R (p, p), g, rss0 with ||e x - f||^2 = ||R x - g||^2 + rss0 for every x.

    QR of [e f] chunk by chunk on the columns each chunk uses (the integral design is
    block-sparse: every piece touches a handful of columns), then of the stacked factors.
    Orthogonal throughout, so no squaring of the condition number as with e^T e. Chunks
    of a few hundred rows also stay below OpenBLAS's threading threshold: on a busy
    machine a threaded QR of a thin matrix can stall for tens of milliseconds.
    """
    m, p = e.shape
    blocks = []
    for a in range(0, m, chunk):
        blk = np.column_stack([e[a:a + chunk], f[a:a + chunk]])
        cols = np.append(np.flatnonzero(np.any(blk[:, :p] != 0.0, axis=0)), p)
        r = qr_r(blk[:, cols])
        full = np.zeros((r.shape[0], p + 1))
        full[:, cols] = r
        blocks.append(full)
    r = qr_r(np.vstack(blocks))
    if r.shape[0] < p + 1:
        r = np.vstack([r, np.zeros((p + 1 - r.shape[0], p + 1))])
    return r[:p, :p], r[:p, p], float(r[p, p] ** 2)


def _null_space_split(c: np.ndarray, d: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Particular solution z_p and orthonormal null-space basis Z of c z = d (c full row rank)."""
    if c.shape[0] == 0:
        return np.zeros(p), np.eye(p)
    q, r = qr(c.T, mode="full")
    me = c.shape[0]
    r1 = r[:me, :me]
    if np.any(np.abs(np.diag(r1)) < 1e-12 * max(1.0, float(np.abs(r1).max()))):
        raise ValueError("equality constraints are linearly dependent")
    zp = q[:, :me] @ solve_triangular(r1, d, trans="T")
    return zp, q[:, me:]


def _ldp(g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """min ||y|| subject to g y >= h (Lawson & Hanson algorithm LDP)."""
    n = g.shape[1]
    e = np.vstack([g.T, h[None, :]])
    f = np.zeros(n + 1)
    f[-1] = 1.0
    from scipy.optimize import nnls  # on use: scipy.optimize is slow to import

    u, _ = nnls(e, f, maxiter=50 * max(1, g.shape[0]))
    r = e @ u - f
    if abs(r[-1]) < 1e-14:
        raise ValueError("the inequality constraints are infeasible")
    return -r[:-1] / r[-1]


def lsei(e: np.ndarray, f: np.ndarray, c: np.ndarray | None = None, d: np.ndarray | None = None,
         g: np.ndarray | None = None, h: np.ndarray | None = None,
         active_tol: float = 1e-9) -> LseiSolution:
    """Solve min ||e x - f|| s.t. c x = d, g x >= h; see the module docstring."""
    e = np.asarray(e, dtype=np.float64)
    f = np.asarray(f, dtype=np.float64)
    m, p = e.shape
    c = np.zeros((0, p)) if c is None else np.asarray(c, dtype=np.float64)
    d = np.zeros(0) if d is None else np.asarray(d, dtype=np.float64)
    g = np.zeros((0, p)) if g is None else np.asarray(g, dtype=np.float64)
    h = np.zeros(0) if h is None else np.asarray(h, dtype=np.float64)
    rt, gt, rss0 = _compress(e, f)
    norms = np.linalg.norm(rt, axis=0)  # = the column norms of e
    scale = 1.0 / np.where(norms > 0, norms, 1.0)
    es, cs, gs = rt * scale, c * scale, g * scale
    rown = np.linalg.norm(gs, axis=1)
    if np.any(rown == 0):
        raise ValueError("an inequality constraint row is all zeros")
    gs, h = gs / rown[:, None], h / rown

    zp, zb = _null_space_split(cs, d, p)
    ew = es @ zb
    fw = gt - es @ zp
    qf, rf = np.linalg.qr(ew, mode="reduced")
    if _deficient(rf):
        rf = _ridged(rf)
        # the ridge rows carry zero targets: g follows from the normal equations
        gv = solve_triangular(rf, ew.T @ fw, trans="T")
    else:
        gv = qf.T @ fw
    gw = gs @ zb
    hw = h - gs @ zp
    if g.shape[0]:
        gh = solve_triangular(rf, gw.T, trans="T").T  # G R^-1
        y = _ldp(gh, hw - gh @ gv)
        w = solve_triangular(rf, y + gv)
    else:
        w = solve_triangular(rf, gv)
    z = zp + zb @ w
    x = z * scale

    slack = gs @ z - h
    tol = active_tol * (1.0 + np.abs(h) + np.linalg.norm(z))
    active = slack <= tol
    # covariance directions: the null space of the equalities and the active constraints
    zb2 = _null_space(np.vstack([cs, gs[active]])) if active.any() else zb
    if zb2.shape[1]:
        r2 = qr_r(es @ zb2)
        if _deficient(r2):  # an unidentifiable direction: a huge, finite variance
            r2 = _ridged(r2)
        r2inv = solve_triangular(r2, np.eye(r2.shape[0]))
        cov_z = zb2 @ (r2inv @ r2inv.T) @ zb2.T
    else:
        cov_z = np.zeros((p, p))
    cov = cov_z * np.outer(scale, scale)
    # x = x_p(d) + Z w(d): dz/dd = (I - P E^T E) [C; G_active]^+ (columns of the equalities)
    me = cs.shape[0]
    if me:
        cpinv = np.linalg.pinv(np.vstack([cs, gs[active]]))[:, :me]
        dz_dd = cpinv - cov_z @ (es.T @ (es @ cpinv))
        dx_dd = dz_dd * scale[:, None]
    else:
        dx_dd = np.zeros((p, 0))
    resid = rt @ x - gt
    return LseiSolution(x=x, cov_unit=cov, dx_dd=dx_dd, active=active,
                        rss=float(resid @ resid) + rss0, dof=int(m - zb2.shape[1]))


def _deficient(r: np.ndarray) -> bool:
    diag = np.abs(np.diag(r))
    return bool(diag.size and diag.min() < 1e3 * _RIDGE * max(1.0, float(np.abs(r).max())))


def _ridged(r: np.ndarray) -> np.ndarray:
    """Triangular factor of [r; ridge I]: Tikhonov regularisation at round-off level."""
    ridge = _RIDGE * max(1.0, float(np.abs(r).max()))
    return qr_r(np.vstack([r, ridge * np.eye(r.shape[1])]))


def _null_space(a: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the null space of a (rank by SVD: tolerates a degenerate vertex)."""
    _, s, vt = np.linalg.svd(a)
    rank = int((s > 1e-10 * s[0]).sum()) if s.size else 0
    return vt[rank:].T
