"""Simulators of the model: classic RK4 of the compiled equations (identify.model._equations).

simulate() integrates a free decay from a state on a uniform grid; simulate_scheduled,
simulate_batch and simulate_from start between grid points (a release between samples)
and take per-interval substep counts fixed in advance, as output-error fitting needs
(a negative count: that many steps of the implicit method instead, where friction holds
a joint; identify.model._implicit).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._equations import acceleration_of, coefficients, total_energy
from ._implicit import implicit_step
from ._params import FrictionParams, RigParams


@njit(cache=True)
def _rk4_step(c: np.ndarray, x: np.ndarray, dt: float) -> None:
    """One classic RK4 step of x = (theta0, theta1, theta0', theta1') in place; c: the
    equations' coefficients (identify.model._equations.coefficients)."""
    a0, a1 = acceleration_of(c, x[0], x[1], x[2], x[3])
    k1 = (x[2], x[3], a0, a1)
    h = 0.5 * dt
    a0, a1 = acceleration_of(c, x[0] + h * k1[0], x[1] + h * k1[1],
                          x[2] + h * k1[2], x[3] + h * k1[3])
    k2 = (x[2] + h * k1[2], x[3] + h * k1[3], a0, a1)
    a0, a1 = acceleration_of(c, x[0] + h * k2[0], x[1] + h * k2[1],
                          x[2] + h * k2[2], x[3] + h * k2[3])
    k3 = (x[2] + h * k2[2], x[3] + h * k2[3], a0, a1)
    a0, a1 = acceleration_of(c, x[0] + dt * k3[0], x[1] + dt * k3[1],
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
    c = coefficients(rig, fr)
    for k in range(n_out):
        out[k, :] = x
        energy[k] = total_energy(rig, x[0], x[1], x[2], x[3])
        if k + 1 < n_out:
            for _ in range(substeps):
                _rk4_step(c, x, dt)
    return out, energy


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
    """Angles at t_first + k h (k < len(substeps)) with `substeps[k]` RK4 steps in interval k
    (a negative entry -n: n steps of the implicit method, identify.model._implicit).

    A schedule fixed in advance (from the measured motion) keeps the integration grid
    independent of the parameters, so finite-difference Jacobians stay smooth.
    """
    n_out = substeps.shape[0]
    out = np.empty((n_out, 2))
    x = x0.copy()
    c = coefficients(rig, fr)
    da, kx, stages = np.empty((2, 4)), np.empty((3, 4)), np.empty((3, 4))  # implicit's
    lead = t_first - t0
    if lead > 0.0:
        _advance(c, x, lead, substeps[0], da, kx, stages)
    for k in range(n_out):
        out[k, 0] = x[0]
        out[k, 1] = x[1]
        if k + 1 < n_out:
            _advance(c, x, h, substeps[k], da, kx, stages)
    return out


@njit(cache=True)
def _advance(c: np.ndarray, x: np.ndarray, span: float, steps: int, da: np.ndarray,
             kx: np.ndarray, stages: np.ndarray) -> None:
    """x carried over span by `steps` RK4 steps, or by -steps implicit ones where negative."""
    if steps < 0:
        dt = span / -steps
        for _ in range(-steps):
            implicit_step(c, x, dt, da, kx, stages)
    else:
        dt = span / steps
        for _ in range(steps):
            _rk4_step(c, x, dt)


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
