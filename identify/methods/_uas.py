"""The UAS (universal adaptive stabiliser) observer of seed 000, eqs. 16-23, and method "uas".

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

What the estimates are. Eq. 23 is linear in z^_n with the scalar input ||e||:
with Lambda_n = lambda_un + lambda_ln and S(t) = integral_t0^t ||e|| dt,

    z^_n(t) = z*_n + (z^_n(t0) - z*_n) exp(-Lambda_n S(t)),
    z*_n = (gamma + lambda_un z_un + lambda_ln z_ln) / Lambda_n.

Every estimate is a fixed blend of the initial guess and the bound-determined point
z*; the data enter only through the one scalar S(t), shared by all ten parameters.
With Table II (Lambda = 51) an S of 0.1 rad leaves 0.6 % of (z0 - z*), an S of 0.5 rad
leaves 1e-11: the estimates are then set by the bounds, not the data
(shared/reference/model.md, "The UAS estimates of the seed are fixed by its bounds").
On the 35 s public case (Table III truth, 10 deg, 120 deg) S reaches 0.17 rad by the
threshold time and 6 rad by the end; the estimates equal z* to 2e-4 relative, i.e.
3.15x (mu_d0), 5.1x (mu_d1), 1.2x (mu_v), 0.06x (omega_t) the truth, and simulating
them fits the angles to ~3 % (arm) and ~22 % (pendulum) by eq. 53.

Not reproduced: the seed's Table III (simulation). Its estimates are 0.092-0.101 times
its initial guesses and ~0.95 times the truth, equal where the truths are equal
(mu_s0 = mu_d1, mu_v0 = mu_v1, ...). With Table II's bounds no gamma and no S give
that: the estimates must lie between z0 and z*, and z*(mu_d0) = 1.575e-3 is above
the Table III estimate 4.79e-4 while z*(omega_t0) = 3.0e-4 is below 4.74e-3. Here, the
ratio estimate / initial guess is z*/z0: 0.006 (omega_t) to 0.53 (mu_d1).

k0 (eq. 20): the seed gives no value; k0 = 1 (N(k0) = 0.83, a unit-order gain) is the
default. On the public case the gain then settles near k = 7.4, N = 27 (the second
positive lobe of E_3), where ||e|| ~ 0.02-0.03 rad/s. k0 only changes S, so
estimates stay a blend of z0 and z* whatever it is (k0 = 7 reads them before S has
grown: 0.2 % of z0 - z* remains). The method reports that honestly:
each value comes with identifiable = False, no interval, and a note with its distance
from z* and from the initial guess; diagnostics hold z*, the initial guesses and
exp(-Lambda S), the weight the initial guess still carries.

Reading the estimates (seed 000 IV-A, IV-B): after ||e|| falls below a threshold
(0.01 rad/s in the seed's simulation, 0.05 rad/s in its experiment: our captures are
encoder counts, so the default is 0.05), averaged until the motion ceases. Here "falls
below" means: after ||e|| has first exceeded the threshold (the observer starts at the
measured state, so e(t0) = 0), the first time it stays below for `hold_s`. Motion
ceases at the last sample where the measured speed ||q'|| exceeds
`motion_threshold` (rad/s).

Measured velocity. Block-mean decimation to 1 kHz and the Holoborodko N = 51
differentiator (identify.signal.decimate, as the grey-box method), interpolated linearly
back to the capture's samples. Measured on the 35 s public case against the true
simulated velocity: rms error 1.7e-3 (arm) and 0.8e-3 rad/s (pendulum) in ~25 ms;
differentiating the 10 kHz counts directly needs N ~ 5000 for the same error (N = 801
gives 5.1e-3 / 3.1e-3 rad/s) and ~2 s to build the kernel. Cubic interpolation gains
nothing over linear (< 1 %).

Gaps. Derivatives are taken per contiguous segment, never across a gap, and are
undefined for (N - 1)/2 decimated samples at each segment end. The observer steps
only between adjacent samples with a defined velocity; at a gap it stops, holding
k, z^ and S (no error, no adaptation), and restarts at the first sample after it with
a defined velocity from the measured state there (q^ = q, q^' = q'). The number of
restarts is reported.

Divergence. If the state stops being finite (e.g. N(k) h beyond RK4's stability
limit of ~2.8, which at 10 kHz is k ~ 21), the loop stops and the run reports
status "diverged" with its time; estimates come from the samples before it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .._progress import Progress, no_progress
from ..model import PARAM_NAMES, acceleration, joint_params, param_index, param_indices
from ..results import IdentificationResult, ParameterEstimate, fit_percent
from ..signal import Measurement, Release, decimate, find_release
from ..solvers import ML3_T_MAX, ml3_scalar, nussbaum_gain
from ._pipeline import StartState, decay_start_s, release_state, simulate_capture

METHOD = "uas"

#: Seed 000 Table III, row "Initial Guess" (simulation), PARAM_NAMES order.
TABLE_III_INITIAL_GUESS: tuple[float, ...] = (
    5.135e-3, 5.875e-3, 2.531e-3, 4.853e-2, 1.029e-1,
    5.705e-3, 6.683e-3, 2.399e-3, 4.820e-2, 9.720e-2,
)
#: Seed 000 Table II: upper bounds z_nu, PARAM_NAMES order.
TABLE_II_UPPER: tuple[float, ...] = (
    0.075, 0.075, 0.01, 0.01, 0.1,
    0.150, 0.151, 0.01, 0.01, 0.100,
)
#: Seed 000 Table II: lower bounds z_nl (machine epsilon).
TABLE_II_LOWER: tuple[float, ...] = (2.22e-16,) * 10
#: Seed 000 Table II: confidences lambda_nu, lambda_nl.
TABLE_II_LAMBDA_UPPER: tuple[float, ...] = (1.0,) * 10
TABLE_II_LAMBDA_LOWER: tuple[float, ...] = (50.0,) * 10
#: the adaptation rate gamma of eq. 23; the seed prints no value: 0.00533 is the value
#: with which z* reproduces Table IV to four digits (shared/reference/model.md)
GAMMA_MODEL_MD = 0.00533

#: omega_t and Fn_t divide in eqs. 17-18: they must stay positive
_DIVISORS = joint_params("omega_t") + joint_params("Fn_t")
#: an estimate within this relative distance of z* is reported as set by the bounds
BOUND_SET_REL = 0.05

STATUS = {0: "ok", 1: "diverged"}


def _ten(name: str, v: tuple[float, ...]) -> tuple[float, ...]:
    if len(v) != len(PARAM_NAMES):
        raise ValueError(f"{name} needs {len(PARAM_NAMES)} values ({', '.join(PARAM_NAMES)}), "
                         f"got {len(v)}")
    return v


class UASSettings(BaseModel):
    """Tuning of the UAS observer (seed 000 eqs. 20-23, Table II) and how estimates are read.

    Per-parameter tuples are in PARAM_NAMES order (mu_d0, mu_s0, mu_v0, omega_t0,
    Fn_t0, mu_d1, ...).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    gamma: float = Field(GAMMA_MODEL_MD, description="adaptation term gamma of eq. 23")
    k0: float = Field(1.0, gt=0, description="initial UAS gain k(t0) of eq. 20; the seed "
                      "gives none (> 0): 1 makes N(k0) = 0.83")
    nussbaum_lambda: float = Field(1.0, gt=0, description="lambda of eq. 21 (seed: 1)")
    initial_guess: tuple[float, ...] = Field(
        TABLE_III_INITIAL_GUESS, description="z^(t0); default seed Table III 'Initial Guess'")
    upper_bound: tuple[float, ...] = Field(TABLE_II_UPPER, description="z_nu, Table II")
    lower_bound: tuple[float, ...] = Field(TABLE_II_LOWER, description="z_nl, Table II")
    lambda_upper: tuple[float, ...] = Field(TABLE_II_LAMBDA_UPPER,
                                            description="confidence lambda_nu, Table II")
    lambda_lower: tuple[float, ...] = Field(TABLE_II_LAMBDA_LOWER,
                                            description="confidence lambda_nl, Table II")
    error_threshold: float = Field(
        0.05, gt=0, description="||e|| (rad/s) below which estimates are read: the seed uses "
        "0.01 in simulation, 0.05 in experiment")
    hold_s: float = Field(0.1, ge=0, description="||e|| must stay below the threshold this long")
    motion_threshold: float = Field(
        0.05, gt=0, description="motion has ceased after the last sample with measured "
        "||q'|| above this (rad/s)")
    differentiator_hz: float = Field(1000.0, gt=0, description="rate the angles are "
                                     "decimated to before differentiation")
    differentiator_n: int = Field(51, ge=5, description="Holoborodko first-derivative length")
    record_hz: float = Field(1000.0, gt=0, description="rate of the recorded trajectories")

    _v_guess = field_validator("initial_guess")(lambda v: _ten("initial_guess", v))
    _v_up = field_validator("upper_bound")(lambda v: _ten("upper_bound", v))
    _v_lo = field_validator("lower_bound")(lambda v: _ten("lower_bound", v))
    _v_lu = field_validator("lambda_upper")(lambda v: _ten("lambda_upper", v))
    _v_ll = field_validator("lambda_lower")(lambda v: _ten("lambda_lower", v))

    @model_validator(mode="after")
    def _check(self) -> "UASSettings":
        if self.differentiator_n % 2 == 0:
            raise ValueError("differentiator_n must be odd")
        if min(self.lambda_upper) <= 0 or min(self.lambda_lower) <= 0:
            raise ValueError("the confidences lambda_nu, lambda_nl must be positive (seed 000)")
        for name in _DIVISORS:
            # omega_t and Fn_t divide in eqs. 17-18: z must stay positive; it moves
            # monotonically from the guess towards z*, so both must be positive
            j = param_index(name)
            if self.initial_guess[j] <= 0 or self.z_star()[j] <= 0:
                raise ValueError(f"{name}: the initial guess and the point z* "
                                 f"must be positive (it divides in eqs. 17-18)")
        return self

    def z_star(self) -> np.ndarray:
        """Fixed point of eq. 23: (gamma + lambda_u z_u + lambda_l z_l) / (lambda_u + lambda_l)."""
        lu, ll = np.array(self.lambda_upper), np.array(self.lambda_lower)
        return (self.gamma + lu * np.array(self.upper_bound)
                + ll * np.array(self.lower_bound)) / (lu + ll)

    def confidence_sum(self) -> np.ndarray:
        """Lambda_n = lambda_nu + lambda_nl: the rate of eq. 23 per unit integral of ||e||."""
        return np.array(self.lambda_upper) + np.array(self.lambda_lower)


# --------------------------------------------------------------------------- compiled core

NX = 16  # q^0, q^1, q^0', q^1', k, z^1..z^10, S


@njit(cache=True)
def _nussbaum_or_nan(k: float, cbrt_lam: float) -> float:
    t = cbrt_lam * k
    if not (t <= ML3_T_MAX):  # also NaN: the state has already diverged
        return math.nan
    return ml3_scalar(t)


@njit(cache=True)
def _deriv(rig, x, vm0, vm1, gamma, zu, zl, lu, ll, cbrt_lam, out):
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
def _uas_loop(rig, q, v, adjacent, start, h, k0, z0, zu, zl, lu, ll, gamma, cbrt_lam,
              record_every):
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


# --------------------------------------------------------------------------- Python side


@dataclass
class UASRun:
    """One observer run: trajectories (recorded at record_hz) and the estimates read from them."""

    t: np.ndarray  # (m,) s on Measurement.t's clock, recorded samples
    e_norm: np.ndarray  # (m,) ||e|| rad/s (NaN where the observer was not running)
    k: np.ndarray  # (m,) UAS gain state
    nussbaum: np.ndarray  # (m,) N(k)
    z: np.ndarray  # (m, 10) parameter trajectories
    q_hat: np.ndarray  # (m, 2) observer angles
    v_hat: np.ndarray  # (m, 2) observer velocities
    integral_e: np.ndarray  # (m,) S(t) = integral of ||e|| dt
    estimates: np.ndarray  # (10,) averaged over [threshold_time, stop_time]
    z_star: np.ndarray  # (10,) bound-determined fixed point of eq. 23
    initial_guess: np.ndarray  # (10,)
    start_time_s: float  # observer start (release)
    start_state: np.ndarray  # (4,) measured q, q' where the observer started
    threshold_time_s: float | None  # when ||e|| fell below the threshold (None: never)
    stop_time_s: float  # when the measured motion ceased
    window: tuple[float, float]  # averaging window actually used
    status: str  # "ok" | "diverged"
    end_time_s: float  # last sample the observer reached
    restarts: int  # restarts after gaps (0: one uninterrupted run)
    observer_seconds: float  # wall time of the compiled loop
    final_state: np.ndarray  # (16,) q^, q^', k, z^, S where the observer stopped
    #: (10,) mean of exp(-Lambda_n S) over the window: the share of the initial guess in
    #: each estimate (estimate = z* + weight (z0 - z*), eq. 23)
    initial_guess_weight: np.ndarray
    velocity: dict[str, Any]  # how q' was measured
    settings: UASSettings
    notes: list[str] = field(default_factory=list)



def _measured_velocity(m: Measurement, s: UASSettings) -> tuple[np.ndarray, dict[str, Any]]:
    """q' at every sample: 1 kHz block means, Holoborodko per segment, linear interpolation.

    Interpolation happens only between decimated points of one contiguous segment:
    samples outside a segment's defined derivative get NaN.
    """
    d = decimate(m, float(m.t[0]), s.differentiator_hz, n_first=s.differentiator_n,
                 n_second=5)
    v = np.full(m.angles.shape, np.nan)
    t = m.t
    # decimated segments (contiguous grid) -> interpolate inside each, within its defined part
    breaks = np.flatnonzero(np.diff(d.grid) != 1) + 1
    edges = np.concatenate([[0], breaks, [d.grid.size]])
    for a, b in zip(edges[:-1], edges[1:]):
        ok = np.flatnonzero(np.isfinite(d.v[a:b]).all(axis=1)) + a
        if ok.size < 2:
            continue
        lo, hi = d.t[ok[0]], d.t[ok[-1]]
        rows = np.flatnonzero((t >= lo) & (t <= hi))
        for j in range(2):
            v[rows, j] = np.interp(t[rows], d.t[ok], d.v[ok, j])
    info = {"decimated_to_hz": m.rate_hz / d.factor, "holoborodko_n": s.differentiator_n,
            "interpolation": "linear, within contiguous segments"}
    return v, info


def _threshold_time(t: np.ndarray, en: np.ndarray, thr: float, hold_s: float
                    ) -> float | None:
    """First time ||e|| stays below thr for hold_s, after it has first exceeded thr."""
    above = np.flatnonzero(en >= thr)  # NaN compares False: not 'above'
    if above.size == 0:
        return None
    below = (en < thr)  # NaN (gap) breaks a run
    below[: above[0]] = False
    if not below.any():
        return None
    b = below.astype(np.int8)
    d = np.diff(np.concatenate([[0], b, [0]]))
    run_start = np.flatnonzero(d == 1)
    run_end = np.flatnonzero(d == -1)  # exclusive
    for a, e in zip(run_start, run_end):
        if t[e - 1] - t[a] >= hold_s or e == en.size:
            return float(t[a])
    return None


def run_uas(m: Measurement, settings: UASSettings | None = None) -> UASRun:
    """Run the UAS observer of seed 000 over a free-decay capture and read its estimates.

    The observer starts at the release (identify.signal.find_release), or at the first sample with
    a defined velocity if the capture does not begin at rest, from the measured state.
    """
    return _run(m, settings or UASSettings(), find_release(m))


def _run(m: Measurement, s: UASSettings, rel: Release) -> UASRun:
    notes: list[str] = []
    v, vinfo = _measured_velocity(m, s)
    t = m.t
    valid = np.isfinite(v).all(axis=1)
    cand = np.flatnonzero((t >= decay_start_s(m, rel) - 1e-12) & valid)
    if cand.size == 0:
        raise ValueError("no sample with a defined velocity after the release: capture too short")
    start = int(cand[0])
    adjacent = np.diff(m.sample_index) == 1
    adjacent = np.concatenate([adjacent, [False]])
    record_every = max(1, int(round(m.rate_hz / s.record_hz)))
    z0 = np.array(s.initial_guess, dtype=np.float64)
    t0 = time.perf_counter()
    en, rec, starts, status, last, x_last = _uas_loop(
        m.rig.as_array(), m.angles, v, adjacent, start, 1.0 / m.rate_hz, s.k0, z0,
        np.array(s.upper_bound), np.array(s.lower_bound), np.array(s.lambda_upper),
        np.array(s.lambda_lower), s.gamma, float(np.cbrt(s.nussbaum_lambda)), record_every)
    observer_s = time.perf_counter() - t0
    rec_rows = np.arange(rec.shape[0]) * record_every
    tr = t[rec_rows]
    en_rec = en[rec_rows]
    if status != 0:
        notes.append(f"observer diverged at t = {t[last]:.4f} s (state not finite: N(k) h "
                     f"beyond RK4's stability); estimates use the samples before it")

    # reading the estimates (seed 000 IV-A/IV-B)
    t_th = _threshold_time(t, en, s.error_threshold, s.hold_s)
    speed = np.linalg.norm(v, axis=1)
    moving = np.flatnonzero(speed > s.motion_threshold)
    t_stop = float(t[moving[-1]]) if moving.size else float(t[start])
    t_stop = min(t_stop, float(t[last]))
    have = np.isfinite(rec[:, 5:15]).all(axis=1)
    sel = np.zeros(0, dtype=np.int64)
    if t_th is None:
        notes.append(f"||e|| never fell below {s.error_threshold:g} rad/s for {s.hold_s:g} s: "
                     f"the estimates are the final values of z")
    else:
        sel = np.flatnonzero(have & (tr >= t_th) & (tr <= t_stop))
        if sel.size == 0:
            sel = np.flatnonzero(have & (tr >= t_th))[:1]
            notes.append("the motion ceased before ||e|| fell below the threshold: the "
                         "estimates are z at the threshold time")
    if sel.size:
        window = (float(tr[sel[0]]), float(tr[sel[-1]]))
        estimates = rec[sel, 5:15].mean(axis=0)
        weight = np.exp(-np.outer(rec[sel, 15], s.confidence_sum())).mean(axis=0)
    else:  # the final state of the observer
        window = (float(t[last]), float(t[last]))
        estimates = x_last[5:15].copy()
        weight = np.exp(-x_last[15] * s.confidence_sum())
    if starts > 1:
        notes.append(f"the observer restarted {starts - 1} time(s) after gaps in the data")
    return UASRun(
        t=tr, e_norm=en_rec, k=rec[:, 4], nussbaum=rec[:, NX], z=rec[:, 5:15],
        q_hat=rec[:, 0:2], v_hat=rec[:, 2:4], integral_e=rec[:, 15], estimates=estimates,
        z_star=s.z_star(), initial_guess=z0, start_time_s=float(t[start]),
        start_state=np.array([*m.angles[start], *v[start]]),
        threshold_time_s=t_th, stop_time_s=t_stop, window=window, status=STATUS[status],
        end_time_s=float(t[last]), restarts=max(0, starts - 1), observer_seconds=observer_s,
        final_state=x_last.copy(), initial_guess_weight=weight, velocity=vinfo, settings=s, notes=notes)


def _note(value: float, zs: float, guess: float) -> str:
    tiny = np.finfo(np.float64).tiny
    dz = abs(value - zs) / max(abs(zs), tiny) * 100.0
    dz_s = f"{dz:.0f}" if dz >= 10 else f"{dz:.2g}"
    rg = (1.0 - value / guess) * 100.0 if guess != 0 else float("nan")
    side = f"{rg:.0f} % below" if rg >= 0 else f"{-rg:.0f} % above"
    if dz <= BOUND_SET_REL * 100.0:
        verdict = "set by the bounds, not the data"
    else:
        verdict = ("a blend of the initial guess and z* (eq. 23: z = z* + (z0 - z*) "
                   "exp(-Lambda integral ||e||)), not a measurement")
    return (f"UAS estimate; {dz_s} % from the bound-determined point z*={zs:.4g}, "
            f"{side} the initial guess {guess:.4g}: {verdict}")


def identify_uas(m: Measurement, progress: Progress | None = None,
                 settings: UASSettings | None = None) -> IdentificationResult:
    """Method "uas": the seed's UAS observer, reported with its diagnosis."""
    report = progress or no_progress
    s = settings or UASSettings()
    t_start = time.perf_counter()
    report(0.0, "running the UAS observer")
    rel = find_release(m)
    run = _run(m, s, rel)
    report(0.8, "goodness of fit")
    # the model simulated with the estimates from the capture's initial state, as the
    # grey-box method does: from rest at the release, else from the observer's start
    start = release_state(rel) or StartState(q=run.start_state[:2], v=run.start_state[2:],
                                             t=run.start_time_s, at_rest=False)
    x0, t0 = start.x0, start.t
    params = np.asarray(run.estimates, dtype=np.float64)
    if np.isfinite(params).all() and (params[param_indices(_DIVISORS)] > 0).all():
        rows, sim = simulate_capture(m, params, x0, t0)
        fit = fit_percent(sim, m.angles[rows])
    else:
        fit = np.array([np.nan, np.nan])
    elapsed = time.perf_counter() - t_start

    pe: dict[str, ParameterEstimate] = {}
    for j, name in enumerate(PARAM_NAMES):
        pe[name] = ParameterEstimate(
            value=float(params[j]), ci95=None, identifiable=False,
            note=_note(float(params[j]), float(run.z_star[j]), float(run.initial_guess[j])))
    w = run.initial_guess_weight
    by_name = lambda a: {n: float(x) for n, x in zip(PARAM_NAMES, a)}  # noqa: E731
    rel_z = np.abs(params - run.z_star) / np.maximum(np.abs(run.z_star),
                                                      np.finfo(np.float64).tiny)
    k_final = float(run.final_state[4])
    n_final = float(nussbaum_gain(k_final, s.nussbaum_lambda)) if math.isfinite(
        k_final) and np.cbrt(s.nussbaum_lambda) * k_final <= ML3_T_MAX else float("nan")
    peak = int(np.nanargmax(run.e_norm)) if np.isfinite(run.e_norm).any() else 0
    diagnosis = (
        "eq. 23 gives z = z* + (z0 - z*) exp(-Lambda S), S = integral of ||e||: every estimate "
        "is fixed by the bounds, confidences and gamma (z*) and the initial guess; the data "
        f"enter only through S. Here the largest distance from z* is {rel_z.max() * 100:.2g} %")
    return IdentificationResult.of_measurement(
        m, method=METHOD, parameters=pe,
        fit_percent={"arm": float(fit[0]), "pendulum": float(fit[1])}, compute_seconds=elapsed,
        diagnostics={
            "diagnosis": diagnosis,
            "z_star": by_name(run.z_star),
            "initial_guess": by_name(run.initial_guess),
            "relative_distance_from_z_star": by_name(rel_z),
            "initial_guess_weight": by_name(w),
            "integral_e_norm": float(run.final_state[15]),
            "threshold_rad_s": s.error_threshold,
            "threshold_time_s": run.threshold_time_s,
            "motion_stop_time_s": run.stop_time_s,
            "averaging_window_s": list(run.window),
            "start_time_s": run.start_time_s,
            "end_time_s": run.end_time_s,
            "released_from_rest": rel.at_rest,
            "initial_state": [float(x) for x in x0],
            "k_final": k_final,
            "nussbaum_final": n_final,
            "e_norm_peak": float(run.e_norm[peak]),
            "e_norm_peak_time_s": float(run.t[peak]),
            "status": run.status,
            "restarts_after_gaps": run.restarts,
            "observer_seconds": run.observer_seconds,
            "rk4_step_s": 1.0 / m.rate_hz,
            "measured_velocity": run.velocity,
            "notes": run.notes,
            "settings": s.model_dump(),
        },
    )
