"""Exact free response of the piecewise-constant second-order model (seed 004 eq. 4, u = 0)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike


def simulate_piecewise(t: ArrayLike, boundaries: ArrayLike, c: ArrayLike, k: ArrayLike,
                       x0: Sequence[float] | np.ndarray, t0: float | None = None,
                       equilibrium: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Free response of theta'' + c_i theta' + k_i (theta - theta_eq,i) = 0, exactly.

    Segment i holds on [boundaries[i], boundaries[i+1]); the first segment extends back
    to t0 and the last forward to t[-1]. The state (theta, theta') is carried across the
    joins, starting from x0 at t0 (default t[0]). Within a segment, with
    mu = sqrt(c^2/4 - k) (complex when underdamped), E1 = e^{-cs/2} cosh(mu s) and
    E2 = e^{-cs/2} sinh(mu s)/mu:
        y(s) = (E1 + c/2 E2) y0 + E2 v0,   v(s) = -k E2 y0 + (E1 - c/2 E2) v0,
    y = theta - theta_eq. Returns theta and theta' at t (NaN before t0).
    """
    t = np.asarray(t, dtype=np.float64)
    bnd = np.asarray(boundaries, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    n = c.size
    eq = np.zeros(n) if equilibrium is None else np.asarray(equilibrium, dtype=np.float64)
    t0 = float(t[0]) if t0 is None else float(t0)
    edges = np.concatenate([[t0], bnd[1:-1][bnd[1:-1] > t0], [np.inf]])
    seg_of_edge = np.searchsorted(bnd[1:-1], edges[:-1], side="right")
    cut = np.searchsorted(t, edges)
    th = np.full(t.size, np.nan)
    v = np.full(t.size, np.nan)
    y0, v0 = float(x0[0]), float(x0[1])
    for p, i in enumerate(seg_of_edge):
        i = min(int(i), n - 1)
        a, lo, hi = edges[p], cut[p], cut[p + 1]
        end = min(edges[p + 1], max(float(t[-1]), a))
        ys, vs = _free(np.append(t[lo:hi] - a, end - a), c[i], k[i], y0 - eq[i], v0)
        th[lo:hi], v[lo:hi] = ys[:-1] + eq[i], vs[:-1]
        y0, v0 = ys[-1] + eq[i], vs[-1]
    return th, v


def _free(s: np.ndarray, c: float, k: float, y0: float, v0: float
          ) -> tuple[np.ndarray, np.ndarray]:
    mu2 = c * c / 4.0 - k
    decay = np.exp(-0.5 * c * s)
    smax = float(s.max()) if s.size else 0.0
    if abs(mu2) * smax * smax < 1e-8:  # critically damped: series in mu^2
        e1 = decay * (1.0 + mu2 * s * s / 2.0)
        e2 = decay * s * (1.0 + mu2 * s * s / 6.0)
    elif mu2 < 0:  # underdamped
        wd = np.sqrt(-mu2)
        e1 = decay * np.cos(wd * s)
        e2 = decay * np.sin(wd * s) / wd
    else:  # overdamped: two real exponentials
        mu = np.sqrt(mu2)
        ep, em = np.exp((-0.5 * c + mu) * s), np.exp((-0.5 * c - mu) * s)
        e1 = 0.5 * (ep + em)
        e2 = (ep - em) / (2.0 * mu)
    y = (e1 + 0.5 * c * e2) * y0 + e2 * v0
    v = -k * e2 * y0 + (e1 - 0.5 * c * e2) * v0
    return y, v
