"""q'' of the compiled equations and its derivatives by the state and the coefficients.

The forward sensitivities (identify.model._sensitivity) carry them through each step; the
implicit step (identify.model._implicit) solves its stages with them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._equations import mass_and_bias

__all__ = ["acceleration_derivatives"]


@njit(cache=True, inline='always')
def _friction_parts(c: np.ndarray, k: int, v: float) -> tuple[float, float, float, float]:
    """A joint's friction F (constants c[k:k+4], r = v c[k+2]): F, dF/dr, tanh(4 r) and
    r / d^2. dF/dv = dF/dr c[k+2] + c[k+3]; by the constants: tanh(4 r), r / d^2,
    dF/dr v and v."""
    r = v * c[k + 2]
    t = math.tanh(4.0 * r)
    d = 0.25 * r * r + 0.75
    bump = r / (d * d)
    dr_part = c[k] * 4.0 * (1.0 - t * t) + c[k + 1] * ((d - r * r) / (d * d * d))  # dF/dr
    return c[k] * t + c[k + 1] * bump + c[k + 3] * v, dr_part, t, bump


@njit(cache=True)
def acceleration_derivatives(c: np.ndarray, th0: float, th1: float, v0: float, v1: float,
                             da: np.ndarray) -> tuple[float, float]:
    """q'' (as acceleration_of) and its derivatives: da[:, 0:4] by (theta0, theta1,
    theta0', theta1'), da[:, 4:4 + N_COEFF] by the coefficients (da: (2, 4 + N_COEFF));
    by the states alone where da is (2, 4) (an implicit step's Newton iterations: a third
    of the work; told by the shape, one compiled function serves both).

    With H q'' = r: dq'' = H^-1 (dr - dH q''), each direction's dr and dH by hand from
    acceleration_of's formulas. Each column is written out with only its nonzero terms:
    a loop over all of them through zeroed scratch rows cost more than the arithmetic.
    """
    h11, h12, h22, bg0, bg1 = mass_and_bias(c, th0, th1, v0, v1)
    s, co = math.sin(th1), math.cos(th1)
    s0, c0 = math.sin(th0), math.cos(th0)
    sc = c[3] * s * co
    f0, drp0, t0, bump0 = _friction_parts(c, 7, v0)
    f1, drp1, t1, bump1 = _friction_parts(c, 11, v1)
    r0 = -f0 - bg0 - c[15] * (th0 - c[16])
    r1 = -f1 - bg1 - c[17] * abs(v1) * v1
    det = h11 * h22 - h12 * h12
    a0 = (h22 * r0 - h12 * r1) / det
    a1 = (h11 * r1 - h12 * r0) / det
    i11, i12, i22 = h22 / det, -h12 / det, h11 / det
    dsc = c[3] * (co * co - s * s)
    # the states; e = dr - dH q''
    e0 = -(c[4] * c0 + c[5] * s * s0) - c[15]
    e1 = c[5] * c0 * co
    da[0, 0], da[1, 0] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    e0 = (-(2.0 * dsc * v0 * v1 + c[1] * co * v1 * v1 - c[5] * co * c0)
          - 2.0 * c[3] * s * co * a0 - c[1] * s * a1)
    e1 = -(-dsc * v0 * v0 + c[6] * co + c[5] * s0 * s) - c[1] * s * a0
    da[0, 1], da[1, 1] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    e0 = -(drp0 * c[9] + c[10]) - 2.0 * sc * v1
    e1 = 2.0 * sc * v0
    da[0, 2], da[1, 2] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    e0 = -(2.0 * sc * v0 + 2.0 * c[1] * s * v1)
    e1 = -(drp1 * c[13] + c[14]) - 2.0 * c[17] * abs(v1)
    da[0, 3], da[1, 3] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    if da.shape[1] == 4:
        return a0, a1
    # the coefficients (offset 4): c0 H11, c1 H12 and B0, c2 H22, c3 H11 and B, c4-c6 G
    da[0, 4], da[1, 4] = -i11 * a0, -i12 * a0
    e0 = -s * v1 * v1 + co * a1
    e1 = co * a0
    da[0, 5], da[1, 5] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    da[0, 6], da[1, 6] = -i12 * a1, -i22 * a1
    e0 = -2.0 * s * co * v0 * v1 - s * s * a0
    e1 = s * co * v0 * v0
    da[0, 7], da[1, 7] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    da[0, 8], da[1, 8] = i11 * -s0, i12 * -s0
    e0 = s * c0
    e1 = s0 * co
    da[0, 9], da[1, 9] = i11 * e0 + i12 * e1, i12 * e0 + i22 * e1
    da[0, 10], da[1, 10] = i12 * -s, i22 * -s
    # each joint's friction (its right-hand side loses F): c7-c10 arm, c11-c14 pendulum
    e0, e1, e2, e3 = -t0, -bump0, -drp0 * v0, -v0
    da[0, 11], da[1, 11] = i11 * e0, i12 * e0
    da[0, 12], da[1, 12] = i11 * e1, i12 * e1
    da[0, 13], da[1, 13] = i11 * e2, i12 * e2
    da[0, 14], da[1, 14] = i11 * e3, i12 * e3
    e0, e1, e2, e3 = -t1, -bump1, -drp1 * v1, -v1
    da[0, 15], da[1, 15] = i12 * e0, i22 * e0
    da[0, 16], da[1, 16] = i12 * e1, i22 * e1
    da[0, 17], da[1, 17] = i12 * e2, i22 * e2
    da[0, 18], da[1, 18] = i12 * e3, i22 * e3
    # the extra terms: c15, c16 the arm's cable, c17 the pendulum's drag
    e0, e1 = -(th0 - c[16]), c[15]
    da[0, 19], da[1, 19] = i11 * e0, i12 * e0
    da[0, 20], da[1, 20] = i11 * e1, i12 * e1
    e1 = -abs(v1) * v1
    da[0, 21], da[1, 21] = i12 * e1, i22 * e1
    return a0, a1
