"""Compiled equations of motion of the tilted Furuta pendulum.

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
from numba import njit, prange

from ._rig import FrictionParams, RigParams

RIG_LAYOUT = ("m1", "m2", "j1z", "j2x", "j2y", "j2z", "l1", "l2", "L1", "g", "phi", "Fn0", "Fn1")


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
def acceleration(rig: np.ndarray, fr: np.ndarray, th0: float, th1: float, v0: float,
                 v1: float) -> tuple[float, float]:
    """q'' = H^-1 (Q - B - G)."""
    h11, h12, h22 = mass_matrix(rig, th1)
    bg0, bg1 = bias_gravity(rig, th0, th1, v0, v1)
    f0 = friction_torque(v0, rig[11], fr[0], fr[1], fr[2], fr[3], fr[4])
    f1 = friction_torque(v1, rig[12], fr[5], fr[6], fr[7], fr[8], fr[9])
    r0 = -f0 - bg0
    r1 = -f1 - bg1
    det = h11 * h22 - h12 * h12
    return (h22 * r0 - h12 * r1) / det, (h11 * r1 - h12 * r0) / det


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
    return t + v


@njit(cache=True)
def _rk4_step(rig, fr, x, dt):
    a0, a1 = acceleration(rig, fr, x[0], x[1], x[2], x[3])
    k1 = (x[2], x[3], a0, a1)
    h = 0.5 * dt
    a0, a1 = acceleration(rig, fr, x[0] + h * k1[0], x[1] + h * k1[1],
                          x[2] + h * k1[2], x[3] + h * k1[3])
    k2 = (x[2] + h * k1[2], x[3] + h * k1[3], a0, a1)
    a0, a1 = acceleration(rig, fr, x[0] + h * k2[0], x[1] + h * k2[1],
                          x[2] + h * k2[2], x[3] + h * k2[3])
    k3 = (x[2] + h * k2[2], x[3] + h * k2[3], a0, a1)
    a0, a1 = acceleration(rig, fr, x[0] + dt * k3[0], x[1] + dt * k3[1],
                          x[2] + dt * k3[2], x[3] + dt * k3[3])
    k4 = (x[2] + dt * k3[2], x[3] + dt * k3[3], a0, a1)
    for i in range(4):
        x[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@njit(cache=True)
def simulate_rk4(rig: np.ndarray, fr: np.ndarray, x0: np.ndarray, dt: float, n_out: int,
                 substeps: int) -> tuple[np.ndarray, np.ndarray]:
    """Integrate with classic RK4 at step dt; record every `substeps` steps.

    Returns (states[n_out, 4] as theta0, theta1, theta0', theta1'; energy[n_out]).
    Row 0 is x0.
    """
    out = np.empty((n_out, 4))
    energy = np.empty(n_out)
    x = x0.copy()
    for k in range(n_out):
        out[k, :] = x
        energy[k] = total_energy(rig, x[0], x[1], x[2], x[3])
        if k + 1 < n_out:
            for _ in range(substeps):
                _rk4_step(rig, fr, x, dt)
    return out, energy


@njit(cache=True)
def inverse_dynamics(rig: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray
                     ) -> np.ndarray:
    """Friction torque implied by the motion: f = -(H q'' + B + G), shape (n, 2)."""
    n = q.shape[0]
    f = np.empty((n, 2))
    for k in range(n):
        h11, h12, h22 = mass_matrix(rig, q[k, 1])
        bg0, bg1 = bias_gravity(rig, q[k, 0], q[k, 1], qd[k, 0], qd[k, 1])
        f[k, 0] = -(h11 * qdd[k, 0] + h12 * qdd[k, 1] + bg0)
        f[k, 1] = -(h12 * qdd[k, 0] + h22 * qdd[k, 1] + bg1)
    return f


def friction(v: np.ndarray, fn: float, mu_d: float, mu_s: float, mu_v: float,
             omega_t: float, fn_t: float) -> np.ndarray:
    """Vectorised Brown-McPhee friction torque (seed 000 eq. 5, model.md)."""
    v = np.asarray(v, dtype=np.float64)
    r = v / omega_t
    d = 0.25 * r * r + 0.75
    return (fn * mu_d * np.tanh(4.0 * r) + fn * (mu_s - mu_d) * r / (d * d)
            + mu_v * v * np.tanh(4.0 * fn / fn_t))


def simulate(rig: RigParams, friction_params: FrictionParams, x0: np.ndarray | list[float],
             duration: float, rate_hz: float = 10_000.0, substeps: int = 1
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Simulate a free decay from state x0 = (theta0, theta1, theta0', theta1') in rad, rad/s.

    RK4 with step 1/(rate_hz*substeps). Returns (t, states[n, 4], energy[n]).
    """
    if duration <= 0 or rate_hz <= 0 or substeps < 1:
        raise ValueError("duration and rate_hz must be positive, substeps >= 1")
    n = int(round(duration * rate_hz)) + 1
    dt = 1.0 / (rate_hz * substeps)
    x = np.asarray(x0, dtype=np.float64).reshape(4).copy()
    states, energy = simulate_rk4(rig.as_array(), friction_params.as_array(), x, dt, n, substeps)
    t = np.arange(n) / rate_hz
    return t, states, energy


@njit(cache=True)
def simulate_scheduled(rig: np.ndarray, fr: np.ndarray, x0: np.ndarray, t0: float,
                       t_first: float, h: float, substeps: np.ndarray) -> np.ndarray:
    """Angles at t_first + k h (k < len(substeps)) with `substeps[k]` RK4 steps in interval k.

    A schedule fixed in advance (from the measured motion) keeps the integration grid
    independent of the parameters, so finite-difference Jacobians stay smooth.
    """
    n_out = substeps.shape[0]
    out = np.empty((n_out, 2))
    x = x0.copy()
    lead = t_first - t0
    if lead > 0.0:
        ns = substeps[0]
        for _ in range(ns):
            _rk4_step(rig, fr, x, lead / ns)
    for k in range(n_out):
        out[k, 0] = x[0]
        out[k, 1] = x[1]
        if k + 1 < n_out:
            ns = substeps[k]
            dt = h / ns
            for _ in range(ns):
                _rk4_step(rig, fr, x, dt)
    return out


@njit(cache=True, parallel=True)
def simulate_batch(rig: np.ndarray, frs: np.ndarray, x0s: np.ndarray, t0s: np.ndarray,
                   t_first: float, h: float, substeps: np.ndarray) -> np.ndarray:
    """simulate_scheduled for many parameter sets at once, in parallel: (m, n_out, 2)."""
    m = frs.shape[0]
    out = np.empty((m, substeps.shape[0], 2))
    for i in prange(m):
        out[i] = simulate_scheduled(rig, frs[i], x0s[i], t0s[i], t_first, h, substeps)
    return out


def simulate_from(rig: np.ndarray, fr: np.ndarray, x0: np.ndarray, t0: float, t_first: float,
                  h: float, n_out: int, substeps: int) -> np.ndarray:
    """Angles (n_out, 2) at t_first + k h from state x0 at time t0 <= t_first.

    The first interval (t_first - t0) gets its own RK4 substeps, so the start need not
    lie on the sample grid (a release between two samples).
    """
    return simulate_scheduled(rig, fr, x0, t0, t_first, h, np.full(n_out, substeps, np.int64))
