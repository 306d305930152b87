"""Equations of motion of the tilted Furuta pendulum, compiled: H, B + G, friction, energy.

H(q) q'' + B(q, q') + G(q) = Q(q'), with H, B, G as corrected in
shared/reference/model.md and Q_i = -f_i the Brown-McPhee friction of seed 000
eq. 5 with the squared Stribeck denominator.

The rig is passed as a packed float64 vector (RIG_LAYOUT order, built by
RigParams.as_array) and friction as the ten values of PARAM_NAMES, so that the
numba kernels take plain arrays.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

RIG_LAYOUT = ("m1", "m2", "j1z", "j2x", "j2y", "j2z", "l1", "l2", "L1", "g", "phi", "Fn0", "Fn1",
              "drag1", "spring0", "spring_rest0")


@njit(cache=True, fastmath=False)
def friction_torque(v: float, fn: float, mu_d: float, mu_s: float, mu_v: float,
                    omega_t: float, fn_t: float) -> float:
    """f(v) = Fn mu_d tanh(4r) + Fn (mu_s - mu_d) r / (r^2/4 + 3/4)^2 + mu_v v tanh(4 Fn/Fn_t).

    r = v / omega_t. The bump r/(r^2/4+3/4)^2 peaks at r = 1 with value 1 (model.md).
    """
    r = v / omega_t
    d = 0.25 * r * r + 0.75
    return (fn * mu_d * math.tanh(4.0 * r) + fn * (mu_s - mu_d) * r / (d * d)
            + mu_v * v * math.tanh(4.0 * fn / fn_t))


@njit(cache=True)
def mass_matrix(rig: np.ndarray, th1: float) -> tuple[float, float, float]:
    """H11, H12 (= H21), H22."""
    m2, j1z, j2x, j2y, j2z = rig[1], rig[2], rig[3], rig[4], rig[5]
    m1, l1, l2, L1 = rig[0], rig[6], rig[7], rig[8]
    s = math.sin(th1)
    c = math.cos(th1)
    h11 = j1z + m1 * l1 * l1 + m2 * L1 * L1 + (m2 * l2 * l2 + j2y) * s * s + j2z * c * c
    h12 = -m2 * l2 * L1 * c
    h22 = j2x + m2 * l2 * l2
    return h11, h12, h22


@njit(cache=True)
def bias_gravity(rig: np.ndarray, th0: float, th1: float, v0: float, v1: float
                 ) -> tuple[float, float]:
    """B(q, q') + G(q), per joint."""
    m1, m2, j2y, j2z = rig[0], rig[1], rig[4], rig[5]
    l1, l2, L1, g, phi = rig[6], rig[7], rig[8], rig[9], rig[10]
    s = math.sin(th1)
    c = math.cos(th1)
    k = m2 * l2 * l2 + j2y - j2z
    b1 = 2.0 * k * s * c * v0 * v1 + m2 * l2 * L1 * s * v1 * v1
    b2 = -k * s * c * v0 * v0
    sp = math.sin(phi)
    g1 = g * sp * ((m1 * l1 + m2 * L1) * math.sin(th0) - m2 * l2 * s * math.cos(th0))
    g2 = m2 * g * l2 * (s * math.cos(phi) - sp * math.sin(th0) * c)
    return b1 + g1, b2 + g2


@njit(cache=True)
def extra_torque(rig: np.ndarray, th0: float, v1: float) -> tuple[float, float]:
    """The torques a lab adds to the model when its diagnostics ask: Q_extra = -(tau0, tau1).

    tau0 = k (theta0 - theta0_k), a cable or spring on the arm (k = rig[14] N m/rad,
    neutral angle theta0_k = rig[15]); tau1 = c |theta1'| theta1', air drag on the
    pendulum (c = rig[13] N m s^2). Both are zero on the nominal rig.
    """
    return rig[14] * (th0 - rig[15]), rig[13] * abs(v1) * v1


#: entries of the coefficient vector (coefficients()): the equations' constants for one
#: rig and friction, computed once per simulation instead of at every evaluation
N_COEFF = 18


@njit(cache=True)
def coefficients(rig: np.ndarray, fr: np.ndarray) -> np.ndarray:
    """The constants of acceleration_of for one rig and friction (N_COEFF entries).

    H11 = c0 + c3 sin^2, H12 = -c1 cos, H22 = c2; B and G from c1, c3-c6; each joint's
    friction from Fn mu_d, Fn (mu_s - mu_d), 1/omega_t and mu_v tanh(4 Fn/Fn_t)
    (c7-c10 arm, c11-c14 pendulum); the extra terms' k, theta0_k and c (c15-c17).
    """
    m1, m2, j1z, j2x, j2y, j2z = rig[0], rig[1], rig[2], rig[3], rig[4], rig[5]
    l1, l2, L1, g, phi = rig[6], rig[7], rig[8], rig[9], rig[10]
    c = np.empty(N_COEFF)
    c[0] = j1z + m1 * l1 * l1 + m2 * L1 * L1 + j2z
    c[1] = m2 * l2 * L1
    c[2] = j2x + m2 * l2 * l2
    c[3] = m2 * l2 * l2 + j2y - j2z
    sp = math.sin(phi)
    c[4] = g * sp * (m1 * l1 + m2 * L1)
    c[5] = g * sp * m2 * l2
    c[6] = m2 * g * l2 * math.cos(phi)
    for j in range(2):
        fn = rig[11 + j]
        mu_d, mu_s, mu_v, omega_t, fn_t = fr[5 * j], fr[5 * j + 1], fr[5 * j + 2], \
            fr[5 * j + 3], fr[5 * j + 4]
        c[7 + 4 * j] = fn * mu_d
        c[8 + 4 * j] = fn * (mu_s - mu_d)
        c[9 + 4 * j] = 1.0 / omega_t
        c[10 + 4 * j] = mu_v * math.tanh(4.0 * fn / fn_t)
    c[15], c[16], c[17] = rig[14], rig[15], rig[13]
    return c


@njit(cache=True)
def _friction_of(c: np.ndarray, k: int, v: float) -> float:
    """friction_torque with its constants from c[k:k + 4]."""
    r = v * c[k + 2]
    d = 0.25 * r * r + 0.75
    return c[k] * math.tanh(4.0 * r) + c[k + 1] * r / (d * d) + c[k + 3] * v


@njit(cache=True)
def mass_and_bias(c: np.ndarray, th0: float, th1: float, v0: float, v1: float
                  ) -> tuple[float, float, float, float, float]:
    """H11, H12, H22 and B + G per joint from the coefficient vector c."""
    s, co = math.sin(th1), math.cos(th1)
    sc = c[3] * s * co
    s0, c0 = math.sin(th0), math.cos(th0)
    bg0 = 2.0 * sc * v0 * v1 + c[1] * s * v1 * v1 + c[4] * s0 - c[5] * s * c0
    bg1 = -sc * v0 * v0 + c[6] * s - c[5] * s0 * co
    return c[0] + c[3] * s * s, -c[1] * co, c[2], bg0, bg1


@njit(cache=True)
def acceleration_of(c: np.ndarray, th0: float, th1: float, v0: float, v1: float
                    ) -> tuple[float, float]:
    """q'' = H^-1 (Q - B - G) from the coefficient vector c (coefficients())."""
    h11, h12, h22, bg0, bg1 = mass_and_bias(c, th0, th1, v0, v1)
    r0 = -_friction_of(c, 7, v0) - bg0 - c[15] * (th0 - c[16])
    r1 = -_friction_of(c, 11, v1) - bg1 - c[17] * abs(v1) * v1
    det = h11 * h22 - h12 * h12
    return (h22 * r0 - h12 * r1) / det, (h11 * r1 - h12 * r0) / det


@njit(cache=True)
def acceleration(rig: np.ndarray, fr: np.ndarray, th0: float, th1: float, v0: float,
                 v1: float) -> tuple[float, float]:
    """q'' = H^-1 (Q - B - G)."""
    return acceleration_of(coefficients(rig, fr), th0, th1, v0, v1)


@njit(cache=True)
def total_energy(rig: np.ndarray, th0: float, th1: float, v0: float, v1: float) -> float:
    """T + V (model.md), zero of V at the hinge geometry's reference."""
    m1, m2, l1, l2, L1, g, phi = rig[0], rig[1], rig[6], rig[7], rig[8], rig[9], rig[10]
    h11, h12, h22 = mass_matrix(rig, th1)
    t = 0.5 * (h11 * v0 * v0 + 2.0 * h12 * v0 * v1 + h22 * v1 * v1)
    sp = math.sin(phi)
    v = (-m1 * g * l1 * math.cos(th0) * sp
         - m2 * g * (L1 * math.cos(th0) * sp
                     + l2 * (math.sin(th0) * math.sin(th1) * sp + math.cos(th1) * math.cos(phi))))
    spring = 0.5 * rig[14] * (th0 - rig[15]) ** 2
    return t + v + spring


@njit(cache=True)
def inverse_dynamics(rig: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray
                     ) -> np.ndarray:
    """Friction torque implied by the motion: f = -(H q'' + B + G) - tau_extra, shape (n, 2)."""
    n = q.shape[0]
    f = np.empty((n, 2))
    for k in range(n):
        h11, h12, h22 = mass_matrix(rig, q[k, 1])
        bg0, bg1 = bias_gravity(rig, q[k, 0], q[k, 1], qd[k, 0], qd[k, 1])
        e0, e1 = extra_torque(rig, q[k, 0], qd[k, 1])
        f[k, 0] = -(h11 * qdd[k, 0] + h12 * qdd[k, 1] + bg0) - e0
        f[k, 1] = -(h12 * qdd[k, 0] + h22 * qdd[k, 1] + bg1) - e1
    return f


def friction_rate(c: np.ndarray, th1: np.ndarray,
                  omega_t_min: float | np.ndarray = 0.0) -> np.ndarray:
    """The largest rate |d q''_j / d q'_j| (1/s) each joint's friction reaches, at pendulum
    angles th1: (len(th1), 2). Its slope at zero velocity (the Coulomb tanh, the Stribeck
    bump and the viscous term; omega_t taken no wider than omega_t_min, the sharpest a fit
    may reach, one for both joints or one per joint) over the joint's own inertia,
    (H^-1)_jj of the coefficients c.

    Classic RK4 is stable on a rate lambda only for steps h with h lambda below about 2.8.
    A joint that friction holds still asks no substeps for accuracy (it does not
    accelerate), yet beyond that bound its simulated velocity chatters and the sensitivity
    equations grow without limit (1e176 in a fit of an arm with omega_t 6e-4 rad/s)."""
    th1 = np.asarray(th1, dtype=np.float64)
    s, co = np.sin(th1), np.cos(th1)
    h11, h12, h22 = c[0] + c[3] * s * s, -c[1] * co, c[2]
    det = h11 * h22 - h12 * h12
    out = np.empty((th1.size, 2))
    widest = np.broadcast_to(np.asarray(omega_t_min, dtype=np.float64), (2,))
    for j, inertia_inv in enumerate((h22 / det, h11 / det)):
        k = 7 + 4 * j
        sharp = max(float(c[k + 2]), 1.0 / widest[j] if widest[j] > 0 else 0.0)
        # d/dv of c_k tanh(4 r) + c_k+1 r / d(r)^2 at r = v sharp = 0: 4 c_k + c_k+1 / 0.5625
        slope = sharp * abs(4.0 * c[k] + c[k + 1] / 0.5625) + abs(float(c[k + 3]))
        out[:, j] = slope * np.abs(inertia_inv)
    return out


def friction(v: np.ndarray, fn: float, mu_d: float, mu_s: float, mu_v: float,
             omega_t: float, fn_t: float) -> np.ndarray:
    """Vectorised Brown-McPhee friction torque (seed 000 eq. 5, model.md)."""
    v = np.asarray(v, dtype=np.float64)
    r = v / omega_t
    d = 0.25 * r * r + 0.75
    return (fn * mu_d * np.tanh(4.0 * r) + fn * (mu_s - mu_d) * r / (d * d)
            + mu_v * v * np.tanh(4.0 * fn / fn_t))
