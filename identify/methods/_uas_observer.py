"""The UAS (universal adaptive stabiliser) observer of seed 000, eqs. 16-23, compiled.

Observer (seed 000 eqs. 16-23, with the corrected H, B, G and the squared Stribeck
denominator of shared/reference/model.md):

    H(q^) q^'' + B(q^, q^') + G(q^) = Q^(q^'; z^) + u                         (16-18)
    e  = q' - q^'                       (measured minus observed velocity)    (19)
    k' = ||e||^2,  k(t0) = k0 > 0                                             (20)
    N(k) = E_3(-lambda k^3)             (Mittag-Leffler Nussbaum gain)        (21)
    u  = H(q^) N(k) e                                                         (22)
    z^_n' = (gamma + lambda_un (z_un - z^_n) + lambda_ln (z_ln - z^_n)) ||e|| (23)

H(q^)^-1 u = N(k) e exactly, so q^'' = acceleration(q^, q^'; z^) + N(k) e: the
compiled model of identify.model with the estimated friction, plus the UAS term.
The state (q^, q^', k, z^, and S = integral of ||e||) is integrated by classic RK4
at the capture's own step (0.1 ms at 10 kHz) in one compiled loop. The measured
velocity enters at t, t + h/2 (mean of the neighbouring samples) and t + h.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..model import acceleration
from ..solvers import ML3_T_MAX, ml3_scalar

NX = 16  # q^0, q^1, q^0', q^1', k, z^1..z^10, S
#: the loop's status codes
STATUS = {0: "ok", 1: "diverged"}


@njit(cache=True)
def _nussbaum_or_nan(k: float, cbrt_lam: float) -> float:
    t = cbrt_lam * k
    if not (t <= ML3_T_MAX):  # also NaN: the state has already diverged
        return math.nan
    return ml3_scalar(t)


@njit(cache=True)
def _deriv(rig: np.ndarray, x: np.ndarray, vm0: float, vm1: float, gamma: float,
           zu: np.ndarray, zl: np.ndarray, lu: np.ndarray, ll: np.ndarray, cbrt_lam: float,
           out: np.ndarray) -> None:
    """The observer's state derivative (eqs. 16-23) into `out`, given the measured
    velocity (vm0, vm1): q^', q^'' = acceleration + N(k) e, k' = ||e||^2, z^', S' = ||e||."""
    e0 = vm0 - x[2]
    e1 = vm1 - x[3]
    en = math.sqrt(e0 * e0 + e1 * e1)
    a0, a1 = acceleration(rig, x[5:15], x[0], x[1], x[2], x[3])
    nk = _nussbaum_or_nan(x[4], cbrt_lam)
    out[0] = x[2]
    out[1] = x[3]
    out[2] = a0 + nk * e0  # H(q^)^-1 u = N(k) e   (eq. 22)
    out[3] = a1 + nk * e1
    out[4] = en * en  # eq. 20
    for j in range(10):  # eq. 23
        out[5 + j] = (gamma + lu[j] * (zu[j] - x[5 + j]) + ll[j] * (zl[j] - x[5 + j])) * en
    out[15] = en


@njit(cache=True)
def uas_loop(rig: np.ndarray, q: np.ndarray, v: np.ndarray, adjacent: np.ndarray, start: int,
             h: float, k0: float, z0: np.ndarray, zu: np.ndarray, zl: np.ndarray,
             lu: np.ndarray, ll: np.ndarray, gamma: float, cbrt_lam: float, record_every: int
             ) -> tuple[np.ndarray, np.ndarray, int, int, int, np.ndarray]:
    """Run the observer over rows start..n-1.

    q, v: (n, 2) measured angles and velocity (NaN where undefined); adjacent[i]: rows
    i and i+1 are consecutive samples. Returns full-rate ||e||, recorded state and N(k)
    (every record_every rows, from row 0; NaN before the start), the number of
    (re)starts, a status (0 ok, 1 diverged), the last row the observer reached and its
    state there.
    """
    n = q.shape[0]
    en_full = np.full(n, np.nan)
    n_rec = (n + record_every - 1) // record_every
    rec = np.full((n_rec, NX + 1), np.nan)  # state + N(k)
    x = np.empty(NX)
    x[4] = k0
    x[5:15] = z0
    x[15] = 0.0
    y = np.empty(NX)
    d1 = np.empty(NX)
    d2 = np.empty(NX)
    d3 = np.empty(NX)
    d4 = np.empty(NX)
    active = False
    starts = 0
    status = 0
    last = start
    for i in range(start, n):
        vi0 = v[i, 0]
        vi1 = v[i, 1]
        valid = math.isfinite(vi0) and math.isfinite(vi1)
        if not active and valid:
            # (re)start from the measured state; k, z^ and S carry over
            x[0] = q[i, 0]
            x[1] = q[i, 1]
            x[2] = vi0
            x[3] = vi1
            active = True
            starts += 1
        if active:
            e0 = vi0 - x[2]
            e1 = vi1 - x[3]
            en_full[i] = math.sqrt(e0 * e0 + e1 * e1)
            last = i
        if starts > 0 and i % record_every == 0:
            j = i // record_every
            rec[j, :NX] = x
            rec[j, NX] = _nussbaum_or_nan(x[4], cbrt_lam)
        if not active:
            continue
        if i + 1 >= n or not adjacent[i] or not (math.isfinite(v[i + 1, 0])
                                                 and math.isfinite(v[i + 1, 1])):
            active = False  # a gap or the end of the defined velocity: hold k, z^, S
            continue
        vn0 = v[i + 1, 0]
        vn1 = v[i + 1, 1]
        vh0 = 0.5 * (vi0 + vn0)
        vh1 = 0.5 * (vi1 + vn1)
        _deriv(rig, x, vi0, vi1, gamma, zu, zl, lu, ll, cbrt_lam, d1)
        for m in range(NX):
            y[m] = x[m] + 0.5 * h * d1[m]
        _deriv(rig, y, vh0, vh1, gamma, zu, zl, lu, ll, cbrt_lam, d2)
        for m in range(NX):
            y[m] = x[m] + 0.5 * h * d2[m]
        _deriv(rig, y, vh0, vh1, gamma, zu, zl, lu, ll, cbrt_lam, d3)
        for m in range(NX):
            y[m] = x[m] + h * d3[m]
        _deriv(rig, y, vn0, vn1, gamma, zu, zl, lu, ll, cbrt_lam, d4)
        ok = True
        for m in range(NX):
            y[m] = x[m] + h / 6.0 * (d1[m] + 2.0 * d2[m] + 2.0 * d3[m] + d4[m])
            if not math.isfinite(y[m]):
                ok = False
        if not ok:
            status = 1
            break
        x[:] = y
    return en_full, rec, starts, status, last, x
