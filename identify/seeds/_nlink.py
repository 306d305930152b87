"""Seed 002's n-link pendulum, cart fixed: model, simulator, standard parameters, regression.

Geometry (seed 002 Fig. 1, eqs. 1-2). Link i (i = 1..n) has mass m_i, length l_i, centre
of mass at a_i l_i from its lower joint A_{i-1}, inertia J_i about its centre of mass, and
viscous friction b_i in joint i. delta_i is the absolute angle of link i from the upward
vertical (delta = 0 upright, pi hanging). The cart is fixed: y_0 = 0, u = y_0'' = 0.

    centre of mass i: Y_i = sum_{j<i} l_j sin d_j + a_i l_i sin d_i,
                      Z_i = sum_{j<i} l_j cos d_j + a_i l_i cos d_i
(the seed's eq. 1 prints the sum to i; eq. 2 has the right upper limit i - 1.)

Energies (seed 002 Propositions 1-2, eqs. 4-7, with y_0' = 0):

    V = g sum_i nu_i cos d_i
    T = 1/2 sum_i kappa_i d_i'^2 + sum_{i<j} mu_ij d_i' d_j' cos(d_i - d_j)
    nu_i    = m_i a_i l_i + l_i sum_{k>i} m_k
    kappa_i = J_i + m_i a_i^2 l_i^2 + l_i^2 sum_{k>i} m_k
    mu_ij   = l_i nu_j                     (i < j; mu_ji = mu_ij)
    D = 1/2 b_1 d_1'^2 + 1/2 sum_{k>=2} b_k (d_k' - d_{k-1}')^2       (eq. 8)

Euler-Lagrange, d/dt dL/dq_i' - dL/dq_i + dD/dq_i' = 0 (eq. 9 with u = 0; derived here
from T, V, D above, and checked by energy conservation in the tests):

    kappa_i q_i'' + sum_{j != i} mu_ij [cos(q_i - q_j) q_j'' + sin(q_i - q_j) q_j'^2]
        - g nu_i sin q_i + b_i (q_i' - q_{i-1}') - b_{i+1} (q_{i+1}' - q_i') = 0
    with q_0' = 0 and b_{n+1} = 0.

Matrix form: M(q) q'' = tau(q, q'), M_ii = kappa_i, M_ij = mu_ij cos(q_i - q_j),
tau_i = -sum_j mu_ij sin(q_i - q_j) q_j'^2 + g nu_i sin q_i - dD/dq_i'.

Standard dynamic parameters (seed 002 eqs. 12-14, Table I). The model is linear in the
r = n(n-1)/2 + 3n vector theta~ = [mu_12, mu_13, ..., mu_{n-1,n}, kappa_1..kappa_n,
nu_1..nu_n, b_1..b_n] (eq. 12): Phi~(q, q', q'') theta~ = 0 (eq. 13), with

    column mu_ij (i<j): f_ij = cos(q_i - q_j) q_j'' + sin(q_i - q_j) q_j'^2 in row i,
                        f_ji in row j
    column kappa_i:     q_i'' in row i
    column nu_i:        h_i = u cos q_i - g sin q_i = -g sin q_i in row i   (u = 0 here)
    column b_i:         k_i = q_i' - q_{i-1}' in row i, -k_i in row i - 1

The equations are homogeneous in theta~, so data fix it only up to a common factor. As the
seed does, divide by mu_{n-1,n} (n >= 2; Table I: by nu_1 = m_1 a_1 l_1 for n = 1) and move
that column to the right-hand side: Phi theta = Psi (eq. 14), with r - 1 =
3n + n(n-1)/2 - 1 standard dynamic parameters (n = 1: 2, n = 2: 6, n = 3: 11):

    n = 1: kappa1/nu1, b1/nu1
    n = 2: kappa1/mu12, kappa2/mu12, nu1/mu12, nu2/mu12 (= 1/l1), b1/mu12, b2/mu12
    n = 3: mu12/mu23, mu13/mu23 (= l1/l2), kappa1..3/mu23, nu1..3/mu23 (nu3/mu23 = 1/l2),
           b1..3/mu23

What fixing the cart changes: the input columns nu_i u cos q_i (eq. 15's h_i) vanish, so
nu_i are seen only through gravity, -g nu_i sin q_i; the cart's own equation (total mass,
b_0) is absent anyway once u is the input. All r - 1 ratios above remain structurally
identifiable from free swings (tests: rank r - 1). Physical parameters (5n of them) do not
follow uniquely from them (seed section I), and the overall scale (e.g. mu_{n-1,n} in
kg m^2) is lost without a known torque or cart acceleration.

Identification (seed 002 sections III-IV): angles sampled at h = 1 ms, velocities by the
Holoborodko first-derivative filter N = 51, accelerations by the second-derivative filter
N = 101, the regression model stacked over samples (rows joint-major: all samples of joint
1's equation, then joint 2's, ...) and solved by OLS and WLS (identify.solvers).

How well that works (measured, 3 swings of 10 s, encoder 40,000 counts/rev, defaults
below): n = 1 0.05 %, n = 2 0.4 %, n = 3 1.4 % worst error of a well-identified parameter,
while eq. 24 claims relative standard deviations of 0.01-0.03 %. The error is bias, not
noise: (i) the N = 101 filter attenuates q'' by 0.2 % at 2 Hz and 1.2 % at 5 Hz while q
in sin q, cos(q_i - q_j) is not filtered at all, and the third link of a triple pendulum
moves fast; (ii) noise in the regressors (errors in variables) biases least squares
along the weakly excited directions, amplified by Cond(W): small swings (0.3 rad) give
4 % errors on n = 3. The viscous coefficients b_i are always flagged by the 10x rule
(as in the seed's Table II).

`filtered=True` removes most of (i). The seed's filters factor exactly into central
differences D (f_{k+1} - f_{k-1}) / 2h and binomial smoothers B_L (L taps, C(L-1, k) /
2^(L-1)): first derivative (N) = D B_{N-2}, second derivative (N) = D^2 B_{N-4} (checked
to rounding in the tests). So instead of inserting smoothed derivatives into the
non-linear regressor, filter the whole equation with S = B_{N2-4} (linear in theta, so
S(Phi~) theta~ = 0 holds as exactly as Phi~ theta~ = 0) and integrate the q'' terms by
parts, using f_ij = d/dt[cos(q_i - q_j) q_j'] + sin(q_i - q_j) q_i' q_j':

    kappa_i:  S(q_i'')                  = D^2 B_{N2-4} q_i   (the seed's N2 filter itself)
    mu_ij:    D S(cos(q_i - q_j) q_j') + S(sin(q_i - q_j) q_i' q_j')     (row i; row j alike)
    nu_i:     S(-g sin q_i)
    b_i:      D S(q_i - q_{i-1})

with q' inside the products by the plain central difference (its noise is smoothed by S
afterwards, and products of different joints' noise have zero mean). Measured on the same
swings: worst well-identified error 0.03 % (n = 2), 0.15 % (n = 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..model import (
    G_ACCEL,
    ChainParams,
    chain_acceleration,
    chain_energy,
    chain_regressor,
    link_pairs,
)
from ..signal import holoborodko_first, holoborodko_second
from ..solvers import LinearFit, group_weighted_least_squares


class NLinkParams(BaseModel):
    """Physical parameters of an n-link pendulum on a fixed cart (SI units).

    Defaults: a plausible laboratory triple pendulum (aluminium links, lengths as the
    seed's l1 = 0.25 m, l2 = 0.32 m; slender-rod inertias plus bearings). Use
    :meth:`lab` for the first n links of it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    m: tuple[float, ...] = Field((0.85, 0.65, 0.35), description="link masses, kg")
    l: tuple[float, ...] = Field((0.25, 0.32, 0.30), description="link lengths (joint to joint), m")
    a: tuple[float, ...] = Field((0.48, 0.52, 0.45),
                                 description="centre of mass at a_i l_i from the lower joint")
    J: tuple[float, ...] = Field((4.6e-3, 5.8e-3, 2.7e-3),
                                 description="inertia about the centre of mass, kg m^2")
    b: tuple[float, ...] = Field((3.0e-3, 1.5e-3, 8.0e-4),
                                 description="viscous friction of joint i, N m s/rad")
    g: float = Field(G_ACCEL, gt=0, description="gravity, m/s^2")

    @model_validator(mode="after")
    def _check(self) -> NLinkParams:
        n = len(self.m)
        if n < 1:
            raise ValueError("need at least one link")
        for name in ("l", "a", "J", "b"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"{name} has {len(getattr(self, name))} entries, m has {n}")
        if min(self.m) <= 0 or min(self.l) <= 0 or min(self.J) <= 0:
            raise ValueError("masses, lengths and inertias must be positive")
        if min(self.a) <= 0 or min(self.b) < 0:
            raise ValueError("a must be positive and b non-negative")
        return self

    @property
    def n(self) -> int:
        return len(self.m)

    @classmethod
    def lab(cls, n: int = 3, **overrides: object) -> NLinkParams:
        """The first n links of the default laboratory triple pendulum."""
        if not 1 <= n <= 3:
            raise ValueError(f"the lab pendulum has 1 to 3 links, got {n}")
        d = cls()
        kw: dict[str, Any] = {k: getattr(d, k)[:n] for k in ("m", "l", "a", "J", "b")}
        kw.update(overrides)
        return cls(**kw)

    def frictionless(self) -> NLinkParams:
        return self.model_copy(update={"b": (0.0,) * self.n})

    # --- parameters of eqs. 5, 7 -----------------------------------------------------
    def nu(self) -> np.ndarray:
        m, l, a = map(np.asarray, (self.m, self.l, self.a))
        tail = np.array([m[i + 1:].sum() for i in range(self.n)])
        return m * a * l + l * tail

    def kappa(self) -> np.ndarray:
        m, l, a, J = map(np.asarray, (self.m, self.l, self.a, self.J))
        tail = np.array([m[i + 1:].sum() for i in range(self.n)])
        return J + m * a**2 * l**2 + l**2 * tail

    def mu(self) -> np.ndarray:
        """(n, n) symmetric, zero diagonal: mu_ij = l_i nu_j for i < j."""
        n, nu, l = self.n, self.nu(), np.asarray(self.l)
        out = np.zeros((n, n))
        for i in range(n):
            for j in range(i + 1, n):
                out[i, j] = out[j, i] = l[i] * nu[j]
        return out


# --- parameter vectors (eq. 12) and names ----------------------------------------------

_pairs = link_pairs


def full_parameter_names(n: int) -> tuple[str, ...]:
    """Names of theta~ (eq. 12)."""
    return (tuple(f"mu{i + 1}{j + 1}" for i, j in _pairs(n))
            + tuple(f"kappa{i + 1}" for i in range(n)) + tuple(f"nu{i + 1}" for i in range(n))
            + tuple(f"b{i + 1}" for i in range(n)))


def full_parameters(p: NLinkParams) -> np.ndarray:
    """theta~ = [mu_ij (i<j), kappa, nu, b] (eq. 12), in kg m^2, kg m, N m s/rad."""
    mu = p.mu()
    return np.concatenate([[mu[i, j] for i, j in _pairs(p.n)], p.kappa(), p.nu(),
                           np.asarray(p.b, dtype=np.float64)])


def normaliser_index(n: int) -> int:
    """Index in theta~ of the parameter the others are divided by: mu_{n-1,n} (n >= 2), nu_1."""
    if n == 1:
        return 1  # theta~ = [kappa1, nu1, b1]
    return len(_pairs(n)) - 1


def standard_parameter_names(n: int) -> tuple[str, ...]:
    full = full_parameter_names(n)
    k = normaliser_index(n)
    return tuple(f"{name}/{full[k]}" for i, name in enumerate(full) if i != k)


def standard_parameters(p: NLinkParams) -> np.ndarray:
    """The r - 1 standard dynamic parameters (Table I, cart fixed).

    In standard_parameter_names order.
    """
    full = full_parameters(p)
    k = normaliser_index(p.n)
    return np.delete(full, k) / full[k]


def lab_chain(n: int = 3) -> ChainParams:
    """The first n links of the laboratory pendulum as the chain model's true parameters,
    with Brown-McPhee joints: Coulomb 4 mN m times (n - i + 1) for joint i (the lower
    joints carry more), static 1.8 times Coulomb, v_t = 0.05 rad/s, and the lab's viscous
    terms. What the simulated chain rigs and their tests and benchmarks swing."""
    p = NLinkParams.lab(n)
    full = full_parameters(p)
    fr = np.zeros((n, 5))
    fr[:, 0] = 0.004 * np.arange(n, 0, -1)
    fr[:, 1] = 1.8 * fr[:, 0]
    fr[:, 2] = 0.05
    fr[:, 3] = p.b
    return ChainParams(full[:len(full) - n], fr)


# --- compiled dynamics --------------------------------------------------------------

def pack(p: NLinkParams) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """(kappa, mu (n, n), nu, b, g) as float64 arrays for the compiled kernels."""
    return (p.kappa(), p.mu(), p.nu(), np.asarray(p.b, dtype=np.float64), float(p.g))


@njit(cache=True)
def nlink_acceleration(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, b: np.ndarray,
                       g: float, q: np.ndarray, qd: np.ndarray, out: np.ndarray) -> None:
    """q'' = M(q)^-1 tau(q, q') into `out`: the chain model with viscous joints only."""
    fr = np.zeros((b.shape[0], 5))
    fr[:, 3] = b
    chain_acceleration(kappa, mu, nu, g, fr, q, qd, out)


nlink_energy = chain_energy


@njit(cache=True)
def _nlink_rk4(kappa: np.ndarray, mu: np.ndarray, nu: np.ndarray, b: np.ndarray, g: float,
               x0: np.ndarray, dt: float, n_out: int, substeps: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """Classic RK4 of nlink_acceleration: (states (n_out, 2n), energy (n_out,)), row 0 x0."""
    n = kappa.shape[0]
    out = np.empty((n_out, 2 * n))
    energy = np.empty(n_out)
    x = x0.copy()
    k1 = np.empty(2 * n)
    k2 = np.empty(2 * n)
    k3 = np.empty(2 * n)
    k4 = np.empty(2 * n)
    xs = np.empty(2 * n)
    acc = np.empty(n)
    for k in range(n_out):
        out[k, :] = x
        energy[k] = nlink_energy(kappa, mu, nu, g, x[:n], x[n:])
        if k + 1 == n_out:
            break
        for _ in range(substeps):
            nlink_acceleration(kappa, mu, nu, b, g, x[:n], x[n:], acc)
            k1[:n] = x[n:]
            k1[n:] = acc
            xs[:] = x + 0.5 * dt * k1
            nlink_acceleration(kappa, mu, nu, b, g, xs[:n], xs[n:], acc)
            k2[:n] = xs[n:]
            k2[n:] = acc
            xs[:] = x + 0.5 * dt * k2
            nlink_acceleration(kappa, mu, nu, b, g, xs[:n], xs[n:], acc)
            k3[:n] = xs[n:]
            k3[n:] = acc
            xs[:] = x + dt * k3
            nlink_acceleration(kappa, mu, nu, b, g, xs[:n], xs[n:], acc)
            k4[:n] = xs[n:]
            k4[n:] = acc
            x += dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return out, energy


def simulate_nlink(p: NLinkParams, x0: np.ndarray | list[float], duration: float,
                   rate_hz: float = 1000.0, substeps: int = 10
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Free motion from x0 = (q_1..q_n, q_1'..q_n') with classic RK4 at 1/(rate_hz substeps).

    Returns (t (k,), states (k, 2n), energy (k,)) at rate_hz, row 0 = x0.
    """
    if duration <= 0 or rate_hz <= 0 or substeps < 1:
        raise ValueError("duration and rate_hz must be positive, substeps >= 1")
    x = np.asarray(x0, dtype=np.float64).reshape(-1).copy()
    if x.size != 2 * p.n:
        raise ValueError(f"x0 needs {2 * p.n} entries for n = {p.n}, got {x.size}")
    n_out = int(round(duration * rate_hz)) + 1
    kappa, mu, nu, b, g = pack(p)
    states, energy = _nlink_rk4(kappa, mu, nu, b, g, x, 1.0 / (rate_hz * substeps), n_out,
                                substeps)
    return np.arange(n_out) / rate_hz, states, energy


def accelerations(p: NLinkParams, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Exact q'' from the equations of motion for rows of (q, q'): (k, n)."""
    kappa, mu, nu, b, g = pack(p)
    q = np.ascontiguousarray(q, dtype=np.float64)
    qd = np.ascontiguousarray(qd, dtype=np.float64)
    out = np.empty_like(q)
    for k in range(q.shape[0]):
        nlink_acceleration(kappa, mu, nu, b, g, q[k], qd[k], out[k])
    return out


# --- regression model (eqs. 13-15, u = 0) --------------------------------------------

def full_regressor(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, g: float = G_ACCEL
                   ) -> np.ndarray:
    """Phi~ of eq. 13 with u = 0 for each sample: (k, n, r), Phi~ theta~ = 0."""
    return chain_regressor(q, qd, qdd, g)


def regression_model(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, g: float = G_ACCEL
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacked Phi theta = Psi (eq. 14): (W (k n, r-1), Y (k n,), joint (k n,)), joint-major."""
    phi = full_regressor(q, qd, qdd, g)
    k, n, r = phi.shape
    c = normaliser_index(n)
    stacked = phi.transpose(1, 0, 2).reshape(k * n, r)  # rows: joint 0 samples, joint 1, ...
    y = -stacked[:, c]
    w = np.delete(stacked, c, axis=1)
    joint = np.repeat(np.arange(n), k)
    return w, y, joint


def binomial_smoother(taps: int) -> np.ndarray:
    """B_L: C(L-1, k) / 2^(L-1), k = 0..L-1 (unit DC gain, response cos^(L-1)(w h / 2))."""
    if taps < 1 or taps % 2 == 0:
        raise ValueError(f"binomial smoother needs an odd number of taps, got {taps}")
    coefficients = np.array([math.comb(taps - 1, k) for k in range(taps)], dtype=np.float64)
    return coefficients / 2.0 ** (taps - 1)


def _correlate(x: np.ndarray, kernel: np.ndarray) -> np.ndarray:
    """Centred correlation along axis 0, NaN where the kernel does not fit."""
    x = np.asarray(x, dtype=np.float64)
    m = (kernel.size - 1) // 2
    out = np.full(x.shape, np.nan)
    if x.shape[0] >= kernel.size:
        out[m:x.shape[0] - m] = np.convolve(x, kernel[::-1], mode="valid")
    return out


def filtered_regression_model(q: np.ndarray, h: float, g: float = G_ACCEL, n_second: int = 101
                              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Phi theta = Psi filtered by S = B_{n_second - 4}, q'' terms integrated by parts.

    See the module docstring. Returns (W, Y, joint) like regression_model, on the rows
    where every filter fits (n_second // 2 + 1 samples are lost at each end).
    """
    q = np.asarray(q, dtype=np.float64)
    k, n = q.shape
    if n_second < 5 or n_second % 2 == 0:
        raise ValueError(f"n_second must be odd and >= 5, got {n_second}")
    ks = binomial_smoother(n_second - 4)
    d1 = np.array([-0.5, 0.0, 0.5]) / h
    kd = np.convolve(d1, ks)
    kdd = np.convolve(d1, kd)  # = the seed's second-derivative kernel for N = n_second
    v = np.full_like(q, np.nan)
    v[1:-1] = (q[2:] - q[:-2]) / (2.0 * h)
    v[0] = v[-1] = 0.0  # never reaches a kept row: the kernels are wider than 2 samples

    def S(x: np.ndarray) -> np.ndarray:
        return _correlate(x, ks)

    def DS(x: np.ndarray) -> np.ndarray:
        return _correlate(x, kd)

    pairs = _pairs(n)
    npair = len(pairs)
    r = npair + 3 * n
    phi = np.zeros((k, n, r))
    for c, (i, j) in enumerate(pairs):
        d = q[:, i] - q[:, j]
        cross = S(np.sin(d) * v[:, i] * v[:, j])
        phi[:, i, c] = DS(np.cos(d) * v[:, j]) + cross  # S(f_ij)
        phi[:, j, c] = DS(np.cos(d) * v[:, i]) - cross  # S(f_ji)
    for i in range(n):
        phi[:, i, npair + i] = _correlate(q[:, i], kdd)
        phi[:, i, npair + n + i] = S(-g * np.sin(q[:, i]))
        ki = DS(q[:, i] - (q[:, i - 1] if i > 0 else 0.0))
        phi[:, i, npair + 2 * n + i] = ki
        if i > 0:
            phi[:, i - 1, npair + 2 * n + i] = -ki
    ok = np.asarray(np.isfinite(phi).all(axis=(1, 2)))
    ok[: (n_second - 1) // 2 + 1] = False
    ok[k - (n_second - 1) // 2 - 1:] = False
    phi = phi[ok]
    kk = phi.shape[0]
    c = normaliser_index(n)
    stacked = phi.transpose(1, 0, 2).reshape(kk * n, r)
    return np.delete(stacked, c, axis=1), -stacked[:, c], np.repeat(np.arange(n), kk)


@dataclass(frozen=True)
class NLinkIdentification:
    """OLS and WLS estimates of the standard dynamic parameters of one or more swings."""

    names: tuple[str, ...]
    ols: LinearFit
    wls: LinearFit
    samples: int  # samples used per joint

    def best(self, weighted: bool = True) -> LinearFit:
        return self.wls if weighted else self.ols


def derivatives(angles: np.ndarray, h: float, n_first: int = 51, n_second: int = 101
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, q', q'') on the rows where both Holoborodko derivatives exist (seed: 51, 101)."""
    q = np.asarray(angles, dtype=np.float64)
    v = holoborodko_first(q, h, n_first)
    a = holoborodko_second(q, h, n_second)
    ok = np.isfinite(v).all(axis=1) & np.isfinite(a).all(axis=1)
    return q[ok], v[ok], a[ok]


def identify_nlink(swings: list[np.ndarray], h: float = 1e-3, g: float = G_ACCEL,
                   n_first: int = 51, n_second: int = 101, filtered: bool = False
                   ) -> NLinkIdentification:
    """Standard dynamic parameters from sampled angles of free swings with the cart fixed.

    swings: arrays (k_s, n) of joint angles (rad) at step h, each one contiguous record.
    Each is differentiated on its own (Holoborodko N = n_first, n_second), the regression
    models are stacked, and OLS then the seed's per-joint WLS are solved. filtered=True
    uses filtered_regression_model (the equation smoothed by the binomial inside the
    N = n_second filter; n_first is then unused) instead of the seed's pointwise eq. 14.
    """
    if not swings:
        raise ValueError("need at least one swing")
    n = np.asarray(swings[0]).shape[1]
    ws, ys, js = [], [], []
    total = 0
    for s in swings:
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 2 or s.shape[1] != n:
            raise ValueError(f"every swing needs shape (k, {n})")
        if filtered:
            w, y, j = filtered_regression_model(s, h, g, n_second)
            total += w.shape[0] // n
        else:
            q, v, a = derivatives(s, h, n_first, n_second)
            w, y, j = regression_model(q, v, a, g)
            total += q.shape[0]
        ws.append(w)
        ys.append(y)
        js.append(j)
    names = standard_parameter_names(n)
    ols, wls = group_weighted_least_squares(np.vstack(ws), np.concatenate(ys),
                                            np.concatenate(js), names)
    return NLinkIdentification(names=names, ols=ols, wls=wls, samples=total)


__all__ = [
    "NLinkIdentification", "NLinkParams", "accelerations", "binomial_smoother", "derivatives",
    "filtered_regression_model", "full_parameter_names", "full_parameters", "full_regressor",
    "identify_nlink", "lab_chain",
    "nlink_acceleration", "nlink_energy", "normaliser_index", "regression_model",
    "simulate_nlink", "standard_parameter_names", "standard_parameters",
]
