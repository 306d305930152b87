"""The Mittag-Leffler function E_{3,1} and the Nussbaum gain of seed 000 eq. 21.

Seed 000 eq. 12 defines N1(z) = sum_{j>=0} z^j / Gamma(alpha j + beta), the
Mittag-Leffler function E_{alpha,beta}(z); with beta = 1 and alpha in (2, 3] it is a
Nussbaum function (Li & Chen, "When is a Mittag-Leffler function a Nussbaum
function?", Automatica 45(8), 2009: seed 000 ref. [28]). The seed uses alpha = 3,
lambda = 1 (eq. 21): N(k) = N1(-lambda k^3) = E_3(-lambda k^3).

For alpha = 3 the series has a closed form. With omega = exp(2 pi i / 3),
E_3(x^3) = sum_j x^(3j)/(3j)! = (e^x + e^(omega x) + e^(omega^2 x)) / 3, so at x = -t

    E_3(-t^3) = (exp(-t) + 2 exp(t/2) cos(sqrt(3) t / 2)) / 3

(shared/reference/test-vectors.md; accurate in float64 to about 4e-14 relative;
E_3(-1) = 0.834719468577211). It is valid for every real t. The naive power series
cancels catastrophically for large arguments, so it is never used here.

Overflow: exp(t/2) exceeds the largest float64 for t > 2 ln(DBL_MAX) = 1419.56...,
and exp(-t) does for t < -ln(DBL_MAX) = -709.78... Outside [ML3_T_MIN, ML3_T_MAX]
the value is not representable (|E_3| ~ (2/3) e^(t/2) > 1e308): both functions
raise OverflowError there rather than return inf or nan, which a Nussbaum gain
would silently turn into a meaningless control input. (The UAS observer never gets
near: its RK4 step loses stability once N h > 2.8, i.e. t ~ 20 at 10 kHz.)

The Nussbaum gain N(k) = E_3(-lambda k^3) is the closed form at t = lambda^(1/3) k.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: largest t with E_3(-t^3) representable: 2 ln(DBL_MAX) (exp(t/2) overflows beyond)
ML3_T_MAX = 2.0 * math.log(np.finfo(np.float64).max)
#: smallest t: -ln(DBL_MAX) (exp(-t) overflows below)
ML3_T_MIN = -math.log(np.finfo(np.float64).max)
_HALF_SQRT3 = 0.5 * math.sqrt(3.0)
_TWO_THIRDS = 2.0 / 3.0
_OVERFLOW_MSG = ("E_3(-t^3) overflows float64 outside -709.78 <= t <= 1419.56 "
                 "(exp(t/2) or exp(-t) exceeds 1.8e308)")


@njit(cache=True)
def ml3_scalar(t: float) -> float:
    """E_{3,1}(-t^3) = (exp(-t) + 2 exp(t/2) cos(sqrt(3) t/2)) / 3, compiled scalar.

    Raises OverflowError outside [ML3_T_MIN, ML3_T_MAX] (NaN is passed through).
    """
    if t > ML3_T_MAX or t < ML3_T_MIN:
        raise OverflowError(_OVERFLOW_MSG)
    # (2/3) e^(t/2) cos(.) rather than (2 e^(t/2) cos(.))/3: finite right up to ML3_T_MAX
    return math.exp(-t) / 3.0 + _TWO_THIRDS * math.exp(0.5 * t) * math.cos(_HALF_SQRT3 * t)


@njit(cache=True)
def nussbaum_scalar(k: float, cbrt_lam: float) -> float:
    """N(k) = E_3(-lambda k^3) with cbrt_lam = lambda^(1/3) precomputed, compiled scalar."""
    return ml3_scalar(cbrt_lam * k)


def mittag_leffler_3(t: float | np.ndarray) -> float | np.ndarray:
    """E_{3,1}(-t^3) for real t (scalar or array), by the closed form above.

    Source: the alpha = 3 series of seed 000 eq. 12 summed over the cube roots of
    unity; see shared/reference/test-vectors.md. Raises OverflowError for t outside
    [-709.78, 1419.56], where the value exceeds float64.
    """
    x = np.asarray(t, dtype=np.float64)
    finite = x[~np.isnan(x)]
    if finite.size and (finite.max() > ML3_T_MAX or finite.min() < ML3_T_MIN):
        raise OverflowError(_OVERFLOW_MSG)
    y = np.exp(-x) / 3.0 + _TWO_THIRDS * np.exp(0.5 * x) * np.cos(_HALF_SQRT3 * x)
    return float(y) if y.ndim == 0 else y


def nussbaum_gain(k: float | np.ndarray, lam: float = 1.0) -> float | np.ndarray:
    """Seed 000 eq. 21 with alpha = 3: N(k) = N1(-lam k^3) = E_3(-lam k^3).

    E_3 evaluated at -lam k^3 is the closed form at t = lam^(1/3) k. lam must be > 0.
    """
    if not lam > 0:
        raise ValueError(f"lambda must be positive, got {lam}")
    return mittag_leffler_3(np.cbrt(lam) * np.asarray(k, dtype=np.float64))
