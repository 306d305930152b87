"""The rig in base parameters: what a free decay can see of it (docs/identification.md).

The eleven rig quantities enter the motion only through seven base parameters

    P1 = j1z + m1 l1^2 + m2 L1^2 + j2z     P2 = K = m2 l2^2 + j2y - j2z
    P3 = m2 l2 L1                          P4 = j2x + m2 l2^2
    P5 = g sin(phi) (m1 l1 + m2 L1)        P6 = g cos(phi) m2 l2      P7 = g sin(phi) m2 l2

and the friction through its torques (Fn mu_d, Fn mu_s, mu_v per joint) and its
transition velocities. Scaling all of them (and the extra torques' k and c) by one factor
leaves the motion unchanged, so the simulator takes them divided by P4: the
*normalised* vector `u` (NORMALISED), in which the pendulum's inertia about its joint
is 1. Its entries are the rig's own scale-free quantities:

    P1/P4, P2/P4, P3/P4, g m2 l2 / P4 = sqrt(P6^2 + P7^2) / P4, phi,
    a = (m1 l1 + m2 L1) / (m2 l2) = P5 / P7,
    Fn0 mu_d0 / P4, Fn0 mu_s0 / P4, mu_v0 / P4, omega_t0,
    Fn1 mu_d1 / P4, Fn1 mu_s1 / P4, mu_v1 / P4, omega_t1,
    k / P4, theta0_k, c / P4.

`equivalent_rigs` turns u into the rig and friction arrays of the compiled model (a
rig with m2 = l2 = 1 and j2x = 0, which has exactly these ratios), so the same
simulators run it. Writing phi and a rather than P5 and P7 keeps the mapping smooth at
any tilt; at phi = 0 the arm feels no gravity and `a` has no effect.
"""

from __future__ import annotations

import math

import numpy as np

from ._params import FrictionParams, RigParams

__all__ = ["BASE_NAMES", "NORMALISED", "RIG_QUANTITIES", "base_parameters", "equivalent_rigs",
           "normalised", "rig_quantities"]

BASE_NAMES = ("P1", "P2", "P3", "P4", "P5", "P6", "P7")

#: the entries of the normalised vector u, in order
NORMALISED: tuple[str, ...] = (
    "P1/P4", "P2/P4", "P3/P4", "gm2l2/P4", "phi", "a",
    "tau_d0/P4", "tau_s0/P4", "mu_v0/P4", "omega_t0",
    "tau_d1/P4", "tau_s1/P4", "mu_v1/P4", "omega_t1",
    "spring0/P4", "spring_rest0", "drag1/P4",
)

#: the friction transition force the equivalent rig simulates with: tanh(4 Fn/Fn_t) = 1
_FN_T = 1e-9


#: the rig quantities a free decay identifies (with the scale), each with its unit
RIG_QUANTITIES: dict[str, str] = {
    "tilt_deg": "deg",  # phi
    "reduced_length": "m",  # P4 / (m2 l2): the pendulum's equivalent simple length
    "L1": "m",  # P3 / (m2 l2)
    "m2_l2": "kg m",  # the pendulum's static moment
    "pendulum_inertia_at_joint": "kg m^2",  # P4
    "arm_inertia": "kg m^2",  # P1
    "arm_moment": "kg m",  # m1 l1 + m2 L1 = P5 / (g sin phi)
    "K": "kg m^2",  # P2
}


def rig_quantities(rig: RigParams) -> dict[str, float]:
    """RIG_QUANTITIES of a rig."""
    m2l2 = rig.m2 * rig.l2
    p4 = rig.j2x + rig.m2 * rig.l2 ** 2
    return {
        "tilt_deg": rig.tilt_deg, "reduced_length": p4 / m2l2, "L1": rig.L1, "m2_l2": m2l2,
        "pendulum_inertia_at_joint": p4,
        "arm_inertia": rig.j1z + rig.m1 * rig.l1 ** 2 + rig.m2 * rig.L1 ** 2 + rig.j2z,
        "arm_moment": rig.m1 * rig.l1 + rig.m2 * rig.L1,
        "K": rig.m2 * rig.l2 ** 2 + rig.j2y - rig.j2z,
    }


def base_parameters(rig: RigParams) -> np.ndarray:
    """P1..P7 of a rig (SI)."""
    s, c = math.sin(rig.tilt_rad), math.cos(rig.tilt_rad)
    return np.array([
        rig.j1z + rig.m1 * rig.l1 ** 2 + rig.m2 * rig.L1 ** 2 + rig.j2z,
        rig.m2 * rig.l2 ** 2 + rig.j2y - rig.j2z,
        rig.m2 * rig.l2 * rig.L1,
        rig.j2x + rig.m2 * rig.l2 ** 2,
        rig.g * s * (rig.m1 * rig.l1 + rig.m2 * rig.L1),
        rig.g * c * rig.m2 * rig.l2,
        rig.g * s * rig.m2 * rig.l2,
    ])


def normalised(rig: RigParams, friction: FrictionParams) -> np.ndarray:
    """The normalised vector u (NORMALISED) of a rig and its friction."""
    p = base_parameters(rig)
    p4 = p[3]
    m2l2 = rig.m2 * rig.l2
    f = friction
    fn0, fn1 = rig.fn0, rig.fn1
    # the viscous term as simulated: mu_v tanh(4 Fn/Fn_t)
    tv0 = math.tanh(4.0 * fn0 / f.Fn_t0)
    tv1 = math.tanh(4.0 * fn1 / f.Fn_t1)
    return np.array([
        p[0] / p4, p[1] / p4, p[2] / p4, rig.g * m2l2 / p4, rig.tilt_rad,
        (rig.m1 * rig.l1 + rig.m2 * rig.L1) / m2l2,
        fn0 * f.mu_d0 / p4, fn0 * f.mu_s0 / p4, f.mu_v0 * tv0 / p4, f.omega_t0,
        fn1 * f.mu_d1 / p4, fn1 * f.mu_s1 / p4, f.mu_v1 * tv1 / p4, f.omega_t1,
        rig.spring0 / p4, math.radians(rig.spring_rest0_deg), rig.drag1 / p4,
    ])


def equivalent_rigs(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rig arrays (m, 16) and friction arrays (m, 10) of the compiled model for rows of u.

    The equivalent rig has m2 = l2 = 1, j2x = j2z = 0 and l1 = 1 (so H22 = 1), L1 = P3/P4,
    g = g m2 l2 / P4, the tilt phi, m1 = a - L1, j1z = P1/P4 - m1 - L1^2, j2y = P2/P4 - 1
    and Fn0 = Fn1 = 1 (friction given as torques, tanh(4 Fn/Fn_t) = 1).
    """
    u = np.atleast_2d(np.asarray(u, dtype=np.float64))
    m = u.shape[0]
    L1 = u[:, 2]
    m1 = u[:, 5] - L1
    rig = np.zeros((m, 16))
    rig[:, 0] = m1
    rig[:, 1] = 1.0
    rig[:, 2] = u[:, 0] - m1 - L1 * L1
    rig[:, 3] = 0.0
    rig[:, 4] = u[:, 1] - 1.0
    rig[:, 5] = 0.0
    rig[:, 6] = 1.0
    rig[:, 7] = 1.0
    rig[:, 8] = L1
    rig[:, 9] = u[:, 3]
    rig[:, 10] = u[:, 4]
    rig[:, 11] = 1.0
    rig[:, 12] = 1.0
    rig[:, 13] = u[:, 16]
    rig[:, 14] = u[:, 14]
    rig[:, 15] = u[:, 15]
    fr = np.zeros((m, 10))
    for j, col in ((0, 6), (1, 10)):
        fr[:, 5 * j] = u[:, col]  # Fn mu_d, with Fn = 1
        fr[:, 5 * j + 1] = u[:, col + 1]
        fr[:, 5 * j + 2] = u[:, col + 2]
        fr[:, 5 * j + 3] = u[:, col + 3]
        fr[:, 5 * j + 4] = _FN_T
    return rig, fr
