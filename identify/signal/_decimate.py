"""Decimation: block means, and a measurement on an aligned coarse grid, differentiated.

decimate(): blocks of `factor` samples are aligned to multiples of the sample index, so block
times lie on one uniform grid even across gaps; a block is kept only if it lies
wholly inside one contiguous segment, and derivatives are taken within segments only.
point_values(): the block means made the angles at the block times, for a fit that
compares them with a simulation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ._differentiate import contiguous_segments, holoborodko_first, holoborodko_second
from ._measurement import Record
from ._savgol import savgol_filter


def decimate_mean(t: np.ndarray, x: np.ndarray, factor: int) -> tuple[np.ndarray, np.ndarray]:
    """Average non-overlapping blocks of `factor` samples (a boxcar anti-alias filter).

    The time of each block is the mean of its sample times, so the averaging adds no
    delay. A trailing partial block is dropped. Use on one contiguous segment.
    """
    if factor < 1:
        raise ValueError(f"decimation factor must be >= 1, got {factor}")
    n = (t.shape[0] // factor) * factor
    tb = t[:n].reshape(-1, factor).mean(axis=1)
    xb = x[:n].reshape(-1, factor, *x.shape[1:]).mean(axis=1)
    return tb, xb


@dataclass(frozen=True)
class Decimated:
    """A measurement decimated from a start time on: block means and their derivatives."""

    grid: np.ndarray  # (k,) int64 coarse grid index; time = grid * h + offset
    t: np.ndarray  # (k,) s, on the record's t clock
    q: np.ndarray  # (k, n) rad, block means
    v: np.ndarray  # (k, n) rad/s, NaN within (N1-1)/2 of a segment end
    a: np.ndarray  # (k, n) rad/s^2, NaN within (N2-1)/2 of a segment end
    h: float  # coarse step, s
    factor: int


def decimate(m: Record, start_s: float, target_hz: float = 1000.0, n_first: int = 51,
             n_second: int = 101) -> Decimated:
    """Block-mean decimation from `start_s` on, then Holoborodko derivatives per segment."""
    factor = max(1, int(round(m.rate_hz / target_hz)))
    h = factor / m.rate_hz
    idx = m.sample_index - m.sample_index[0]
    first = int(np.ceil(start_s * m.rate_hz - 1e-9))
    first_block = -(-first // factor)  # ceil division
    keep = idx >= first_block * factor
    # masked once, not per segment: a capture with lost frames has a hundred segments
    kept_idx, kept_angles = idx[keep], m.angles[keep]
    grids, qs = [], []
    for seg in contiguous_segments(kept_idx):
        sidx = kept_idx[seg]
        sq = kept_angles[seg]
        b0 = -(-int(sidx[0]) // factor)
        lo = b0 * factor - int(sidx[0])
        nblocks = (sidx.size - lo) // factor
        if nblocks <= 0:
            continue
        qs.append(sq[lo:lo + nblocks * factor].reshape(nblocks, factor, -1).mean(axis=1))
        grids.append(np.arange(b0, b0 + nblocks, dtype=np.int64))
    if not grids:
        raise ValueError("no complete decimation block after the release")
    grid = np.concatenate(grids)
    q = np.concatenate(qs)
    # block mean time: mean of its sample times
    t = (grid * factor + (factor - 1) / 2.0) / m.rate_hz
    v = np.full_like(q, np.nan)
    a = np.full_like(q, np.nan)
    for seg in contiguous_segments(grid):
        v[seg] = holoborodko_first(q[seg], h, n_first)
        a[seg] = holoborodko_second(q[seg], h, n_second)
    return Decimated(grid=grid, t=t, q=q, v=v, a=a, h=h, factor=factor)


#: samples of the local cubic (Savitzky-Golay) that gives q'' where the Holoborodko
#: filter does not reach, near a segment's ends
EDGE_WINDOW = 25


def point_values(d: Decimated, rate_hz: float) -> Decimated:
    """`d` with its block means turned into the angles at the block times.

    The mean of f samples dt apart around t is q(t) + q''(t) dt^2 (f^2 - 1) / 24 + O(dt^4):
    a fit that compares a simulation's q(t) with the means sees a term in q'', which it
    reads as the rig (a single pendulum decimated 1 kHz -> 500 Hz: kappa/nu off by 7e-7,
    its intervals missing by 1.6 standard errors on average; read at 500 Hz, by 0.07).
    q'' is the Holoborodko estimate where it exists, near a segment's ends that of a
    local cubic over EDGE_WINDOW samples.
    """
    if d.factor == 1:
        return d
    c = (1.0 / rate_hz) ** 2 * (d.factor ** 2 - 1) / 24.0
    a = d.a.copy()
    for seg in contiguous_segments(d.grid):
        q, part = d.q[seg], a[seg]
        missing = ~np.isfinite(part)
        if not missing.any():
            continue
        if q.shape[0] < 5:
            part[missing] = 0.0  # too short to say: left as means
            continue
        w = min(EDGE_WINDOW, q.shape[0] - (1 - q.shape[0] % 2))  # odd, within the segment
        local = savgol_filter(q, w, min(3, w - 1), deriv=2, delta=d.h, axis=0)
        part[missing] = local[missing]
    return replace(d, q=d.q - c * a)
