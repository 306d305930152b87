"""From a chain rig's record to what its fit sees: segments, noise, start states, a start.

- The record is averaged down to at most 500 Hz (identify.signal.decimate_mean on each
  gap-free run); the RK4 simulator steps 2 ms exactly (a swing of 15 rad/s moves 0.03 rad
  a step, where RK4's local error is (omega h)^5 / 120, far below the noise).
- What comes before the free motion (a hold, a hand's tremor, its letting go:
  identify.signal.motion_start) stays out, as do spans held out for validation and gaps;
  runs are cut into segments of `segment_s` (a chaotic swing is followed one segment at a
  time).
- Noise per joint from third differences: for white noise var(d^3 x) = 20 sigma^2, and a
  swing's own third difference (jerk dt^3) is far below an encoder count at 1 kHz; the
  median absolute value makes it robust to the few steps a fast reversal leaves.
- Each segment starts from the state a cubic fitted to its first samples gives (the same
  rule held-out validation uses for any parameter set).
- The fit starts from seed 002's regression with a Coulomb column per joint: angles
  differentiated by Holoborodko's filters (N = 51, 101), solved by least squares with the
  normaliser's column moved to the right-hand side (eq. 14).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model import ChainParams, ChainRig, chain_regressor, inertial_normaliser, link_pairs
from ..signal import (
    Record,
    decimate_mean,
    holoborodko_first,
    holoborodko_second,
    motion_start,
)
from ._chain_problem import VT_COULOMB, ChainData

FIT_RATE_HZ = 500.0
START_WINDOW_S = 0.02  # the cubic that gives a segment's start state spans 20 ms
MIN_SEGMENT_S = 0.3
DEFAULT_SEGMENT_S = {"single": 10.0, "nlink": 2.5}


def record_runs(record: Record, exclude: Sequence[tuple[float, float]] = (),
         rate_hz: float = FIT_RATE_HZ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Gap-free runs of (t (k,), angles (k, n)) at <= rate_hz, outside the excluded spans."""
    factor = max(1, int(round(record.rate_hz / rate_hz)))
    t_all = record.t0_s + record.t
    out = []
    for seg in record.segments():
        t, q = t_all[seg], record.angles[seg]
        if factor > 1:
            t, q = decimate_mean(t, q, factor)
        keep = np.ones(t.size, bool)
        for lo, hi in exclude:
            keep &= ~((t >= lo) & (t <= hi))
        edges = np.flatnonzero(np.diff(np.concatenate([[0], keep.astype(np.int8), [0]])))
        for a, b in zip(edges[::2], edges[1::2], strict=True):
            if b - a >= 10:
                out.append((t[a:b], q[a:b]))
    return out


def held_span(record: Record) -> tuple[float, float]:
    """The span before the free motion starts (a hold, a hand letting go), to leave out."""
    return (-np.inf, record.t0_s + motion_start(record) - 1e-9)


def noise_sigma(q: np.ndarray, floor: float) -> np.ndarray:
    """Per-joint white-noise level from third differences (robust), at least `floor`."""
    d3 = np.diff(q, n=3, axis=0)
    s = 1.4826 * np.median(np.abs(d3 - np.median(d3, axis=0)), axis=0) / np.sqrt(20.0)
    return np.maximum(s, floor)


def start_state(t: np.ndarray, q: np.ndarray, window_s: float = START_WINDOW_S) -> np.ndarray:
    """(angles, velocities) at t[0] from a cubic fitted to the samples within window_s."""
    k = max(5, int(np.searchsorted(t, t[0] + window_s)))
    tt = t[:k] - t[0]
    coef = np.polynomial.polynomial.polyfit(tt, q[:k], min(3, k - 2))
    return np.concatenate([coef[0], coef[1]])


def free_runs(record: Record, rig: ChainRig, exclude: Sequence[tuple[float, float]] = ()
              ) -> list[tuple[np.ndarray, np.ndarray]]:
    """The record's free motion a fit may see: gap-free runs at FIT_RATE_HZ, without the
    hold before the release and the excluded (held-out) spans."""
    if record.joints != rig.links:
        raise ValueError(f"the record has {record.joints} joint(s), rig kind {rig.kind} "
                         f"has {rig.links}")
    return record_runs(record, [*exclude, held_span(record)])


def cut(t: np.ndarray, segment_s: float) -> list[tuple[int, int]]:
    """(first, stop) rows of consecutive segments of `segment_s` seconds along the run's
    times t, each at least MIN_SEGMENT_S long (a shorter tail is left out)."""
    edges = np.searchsorted(t, np.arange(t[0], t[-1], segment_s))
    return [(int(a), int(b)) for a, b in zip(edges, list(edges[1:]) + [t.size], strict=True)
            if t[b - 1] - t[a] >= MIN_SEGMENT_S]


def chain_data(runs: list[tuple[np.ndarray, np.ndarray]], rig: ChainRig,
               segment_s: float | None = None, resolution_rad: float | None = None
               ) -> tuple[ChainData, np.ndarray]:
    """The fit's segments of the free runs and their start states (S, 2n)."""
    seg_s = segment_s or DEFAULT_SEGMENT_S[rig.kind.split(":")[0]]
    pieces = [(t[a:b], q[a:b]) for t, q in runs for a, b in cut(t, seg_s)]
    if not pieces:
        raise ValueError(f"no stretch of {MIN_SEGMENT_S} s or more to fit outside the held-out "
                         "spans")
    dt = float(np.median(np.diff(pieces[0][0])))
    q_all = np.vstack([q for _, q in pieces])
    floor = (resolution_rad or 0.0) / np.sqrt(12.0) or 1e-7
    data = ChainData(q=q_all, lengths=np.array([q.shape[0] for _, q in pieces]),
                     t_start=np.array([t[0] for t, _ in pieces]), dt=dt,
                     sigma=noise_sigma(q_all, floor), g_plane=rig.g_plane)
    return data, np.array([start_state(t, q) for t, q in pieces])


def chain_regression_start(runs: list[tuple[np.ndarray, np.ndarray]], rig: ChainRig
                           ) -> ChainParams:
    """Normalised parameters from the regression (viscous and Coulomb per joint) on the
    free runs."""
    n = rig.links
    blocks = []
    for t, q in runs:
        if t.size < 120:
            continue
        h = float(np.median(np.diff(t)))
        v, a = holoborodko_first(q, h, 51), holoborodko_second(q, h, 101)
        ok = np.isfinite(v).all(axis=1) & np.isfinite(a).all(axis=1)
        phi = chain_regressor(q[ok], v[ok], a[ok], rig.g_plane)
        coulomb = np.zeros(phi.shape[:2] + (n,))
        for i in range(n):
            w = v[ok, i] - (v[ok, i - 1] if i > 0 else 0.0)
            coulomb[:, i, i] = np.tanh(4.0 * w / VT_COULOMB)
            if i > 0:
                coulomb[:, i - 1, i] = -coulomb[:, i, i]
        blocks.append(np.concatenate([phi, coulomb], axis=2).reshape(-1, phi.shape[2] + n))
    if not blocks:
        raise ValueError("the record is too short to start a fit (needs 0.12 s in one piece)")
    a_mat = np.vstack(blocks)
    c = inertial_normaliser(n)
    x, *_ = np.linalg.lstsq(np.delete(a_mat, c, axis=1), -a_mat[:, c], rcond=None)
    x = np.insert(x, c, 1.0)
    k = len(link_pairs(n)) + 2 * n
    fr = np.zeros((n, 5))
    fr[:, 3] = np.maximum(x[k:k + n], 0.0)
    fr[:, 0] = fr[:, 1] = np.maximum(x[k + n:], 0.0)
    fr[:, 2] = VT_COULOMB
    inertial = x[:k]
    if np.any(inertial[len(link_pairs(n)):] <= 0):
        raise ValueError("the regression gives a non-positive inertia or static moment: is the "
                         "angle convention (0 upright, pi hanging) the record's?")
    return ChainParams(inertial, fr)
