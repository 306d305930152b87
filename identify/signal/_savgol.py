"""Savitzky-Golay smoothing and derivatives: a local polynomial least-squares fit per sample.

Savitzky & Golay (1964), "Smoothing and differentiation of data by simplified least
squares procedures", Anal. Chem. 36(8): the value (or a derivative) at the centre of a
window of N = 2m + 1 samples, of the degree-p polynomial fitted to them by least
squares, is a fixed linear combination of the samples,

    y_i^(d) = d! / delta^d  sum_{k=-m..m} c_k^(d) x_{i+k},   c^(d) = row d of pinv(V),

V the Vandermonde matrix of the positions -m..m. At the ends, where no window is
centred, the polynomial fitted to the first (last) N samples is evaluated at each of
them (scipy.signal.savgol_filter's mode="interp", which this reproduces to rounding).

Here rather than scipy.signal because importing scipy.signal (and scipy.stats behind
it) took 0.3-0.6 s of every command that identifies, for these few lines.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

__all__ = ["savgol_coefficients", "savgol_filter"]


def savgol_coefficients(window: int, order: int, deriv: int = 0, delta: float = 1.0
                        ) -> np.ndarray:
    """c with y_i = sum_k c[k] x[i - m + k]: the degree-`order` polynomial fitted to
    `window` samples `delta` apart, its `deriv`-th derivative at the centre."""
    return _coefficients(window, order, deriv, delta).copy()


# Cached: the same few filters run on every segment of a capture (a hundred with lost
# frames), each a pseudo-inverse.
@lru_cache(maxsize=64)
def _coefficients(window: int, order: int, deriv: int, delta: float) -> np.ndarray:
    _check(window, order, deriv)
    m = window // 2
    if deriv > order:  # the polynomial's derivative of that order is zero
        zero = np.zeros(window)
        zero.setflags(write=False)
        return zero
    pos = np.arange(-m, m + 1, dtype=np.float64)
    vander = pos[:, None] ** np.arange(order + 1)[None, :]
    out = np.asarray(np.linalg.pinv(vander)[deriv] * math.factorial(deriv) / delta ** deriv)
    out.setflags(write=False)
    return out


def savgol_filter(x: np.ndarray, window: int, order: int, deriv: int = 0,
                  delta: float = 1.0, axis: int = 0) -> np.ndarray:
    """x smoothed (deriv 0) or differentiated by a Savitzky-Golay filter along `axis`, the
    ends from the polynomial fitted to the first and last `window` samples (module)."""
    _check(window, order, deriv)
    x = np.asarray(x, dtype=np.float64)
    a = np.moveaxis(x, axis, 0)
    n = a.shape[0]
    if n < window:
        raise ValueError(f"savgol_filter: {n} samples along the axis, fewer than the "
                         f"window of {window}")
    m = window // 2
    out = np.empty_like(a)
    c = _coefficients(window, order, deriv, delta)
    windows = np.lib.stride_tricks.sliding_window_view(a, window, axis=0)  # (n-2m, ..., N)
    out[m:n - m] = windows @ c
    out[:m] = _edge(a[:window], 0, m, order, deriv, delta)
    out[n - m:] = _edge(a[n - window:], window - m, m, order, deriv, delta)
    return np.moveaxis(out, 0, axis)


def _edge(block: np.ndarray, first: int, count: int, order: int, deriv: int, delta: float
          ) -> np.ndarray:
    """The deriv-th derivative, at sample positions first .. first + count - 1, of the
    polynomial fitted to the whole block (axis 0)."""
    vander, basis = _edge_matrices(block.shape[0], first, count, order, deriv)
    flat = block.reshape(block.shape[0], -1)
    coef, *_ = np.linalg.lstsq(vander, flat, rcond=None)  # (order + 1, columns)
    return np.asarray((basis @ coef).reshape((count, *block.shape[1:])) / delta ** deriv)


# Cached: a capture with lost frames filters a hundred pieces, each with two ends of the
# same few shapes. The fit itself stays one least-squares solve per end, as scipy's:
# through a cached pseudo-inverse instead, the values moved by 1e-11, and so did every
# fit after them (docs/estimator-log.md).
@lru_cache(maxsize=64)
def _edge_matrices(n: int, first: int, count: int, order: int, deriv: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The Vandermonde matrix of positions 0 .. n - 1, and the rows that take a
    polynomial's coefficients to its deriv-th derivative at positions first ..
    first + count - 1."""
    t = np.arange(n, dtype=np.float64)
    vander = t[:, None] ** np.arange(order + 1)[None, :]
    at = np.arange(first, first + count)
    powers = np.arange(order + 1)
    # d^deriv/dt^deriv of t^p = p!/(p - deriv)! t^(p - deriv)
    scale = np.array([math.perm(int(p), deriv) for p in powers], dtype=np.float64)
    shifted = np.clip(powers - deriv, 0, None)
    basis = np.where(powers >= deriv, scale * at[:, None].astype(np.float64) ** shifted, 0.0)
    vander.setflags(write=False)
    basis.setflags(write=False)
    return vander, basis


def _check(window: int, order: int, deriv: int) -> None:
    if window < 1 or window % 2 == 0:
        raise ValueError(f"savgol_filter: the window must be a positive odd number of "
                         f"samples, got {window}")
    if not 0 <= order < window:
        raise ValueError(f"savgol_filter: the polynomial order must be 0 to {window - 1}, "
                         f"got {order}")
    if deriv < 0:
        raise ValueError(f"savgol_filter: the derivative order must be >= 0, got {deriv}")
