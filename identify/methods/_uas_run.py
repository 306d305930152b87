"""One run of the UAS observer over a capture, and the estimates read from it (seed 000 IV).

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

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..signal import Measurement, Release, contiguous_segments, decimate, find_release
from ._pipeline import decay_start_s
from ._uas_observer import NX, STATUS, uas_loop
from ._uas_settings import UASSettings


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
    for seg in contiguous_segments(d.grid):
        ok = np.flatnonzero(np.isfinite(d.v[seg]).all(axis=1)) + seg.start
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
    return run_observer(m, settings or UASSettings(), find_release(m))


def run_observer(m: Measurement, s: UASSettings, rel: Release) -> UASRun:
    """run_uas with the release already found (the method needs it too)."""
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
    en, rec, starts, status, last, x_last = uas_loop(
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
        final_state=x_last.copy(), initial_guess_weight=weight, velocity=vinfo, settings=s,
        notes=notes)
