"""How white measurement noise on theta propagates into integral-reconstruction estimates.

Both the regressors (I^(k) theta) and the target (theta) carry the noise, and so do the
C0 join constraints; the propagation below accounts for all three to first order. It
reports the measurement-noise part of the uncertainty only: model error (a joint that is
not a second-order system) shows in the residuals and the fit, not here.
"""

from __future__ import annotations

import numpy as np


def trap_adjoint(w: np.ndarray, s: np.ndarray) -> np.ndarray:
    """T^T w for the cumulative-trapezoid operator T of eq. 8 (axis 0, sample times s)."""
    h = 0.5 * np.diff(s)[:, None]
    tail = np.cumsum(w[::-1], axis=0)[::-1][1:]  # sum_{i > j} w_i
    out = np.zeros_like(w)
    out[:-1] += h * tail
    out[1:] += h * tail
    return out


def noise_level(resid: np.ndarray, sizes: list[int]) -> float:
    """White measurement noise from the first differences of the residual, within pieces.

    The residual is eps + c I1 eps + k I2 eps (+ smooth model error): its differences are
    dominated by eps_{i+1} - eps_i, of variance 2 sigma^2.
    """
    parts = np.split(resid, np.cumsum(sizes)[:-1])
    d = np.concatenate([np.diff(r) for r in parts])
    return float(np.sqrt(np.mean(d * d) / 2.0)) if d.size else float("nan")


def propagated_cov(p_unit: np.ndarray, dx_dd: np.ndarray, stored: list, coefs: list,
                   joined: list) -> np.ndarray:
    """Covariance of the estimate per unit noise variance, to first order in the noise.

    With theta = theta_true + eps, the true parameters leave the residual r = L eps on the
    rows of a piece, L = I + sum_j coef_j T^(j+1) (T the cumulative trapezoid), and the
    join constraint (built from the same noisy integrals) off by eta = ((L - I) eps) at the
    piece's last sample. The estimate moves by P A^T r + K eta (P: lsei's constrained
    (A^T A)^-1, K = dx/dd), so per sample eps_s enters through u_s = [(L^T A)_s, h_s] with
    h_s = ((L^T - I) e_last)_s; cov = [P K] (sum_s u_s u_s^T) [P K]^T.
    """
    npar, me = dx_dd.shape
    m = np.zeros((npar + me, npar + me))
    nxt = [j for j in range(1, len(joined)) if joined[j]]  # piece p ends in join nxt.index
    prev = None
    for p, ((cols, a, s), cf) in enumerate(zip(stored, coefs)):
        g, w = a, a.copy()
        e_last = np.zeros((s.size, 1))
        e_last[-1] = 1.0
        gh, hv = e_last, np.zeros_like(e_last)
        for cj in cf:
            g, gh = trap_adjoint(g, s), trap_adjoint(gh, s)
            w += cj * g
            hv += cj * gh
        idx = cols
        if p + 1 in nxt:
            idx = np.append(cols, npar + nxt.index(p + 1))
            w = np.column_stack([w, hv])
        m[np.ix_(idx, idx)] += np.einsum("ij,ik->jk", w, w)
        first = np.zeros(npar + me)
        first[idx] = w[0]
        if joined[p] and prev is not None:  # the shared sample: cross term of both pieces
            m += np.outer(prev, first) + np.outer(first, prev)
        prev = np.zeros(npar + me)
        prev[idx] = w[-1]
    pk = np.hstack([p_unit, dx_dd])
    return pk @ m @ pk.T
