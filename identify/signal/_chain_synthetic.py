"""Simulated records of the chain rig kinds, with the realism knobs of identify.model.Realism.

A hand holds the links at x0's angles for rest_s with the realism's tremor, then lets go
with x0's velocities (a push) on top of the tremor's; the true parameters move the links,
and the record is what encoders of `quantum` read over a lossy link: white noise,
interpolation error, count jitter, lost frames.
"""

from __future__ import annotations

import numpy as np

from ..model import (
    QUANTUM,
    ChainParams,
    ChainRig,
    Realism,
    encoder_counts,
    hand_tremor,
    lost_frames,
)
from ._measurement import Record


def chain_record(rig: ChainRig, params: ChainParams, x0: np.ndarray | list[float],
                 duration: float, realism: Realism | None = None, *, rest_s: float = 0.0,
                 rate_hz: float = 1000.0,
                 substeps: int = 4, quantum: float = QUANTUM,
                 rng: np.random.Generator | None = None, capture_id: str | None = None
                 ) -> Record:
    """A free swing of `rig` with the true `params` (any scale) from x0 = (q, q')."""
    realism = realism or Realism()
    rng = rng if rng is not None else realism.rng()
    x = np.asarray(x0, dtype=np.float64).reshape(1, -1)
    if x.shape[1] != 2 * rig.links:
        raise ValueError(f"x0 needs {2 * rig.links} entries for rig kind {rig.kind}")
    n = rig.links
    n_hold = int(round(rest_s * rate_hz))
    tremor_q, tremor_v = hand_tremor(n_hold + 1, rate_hz, realism.hand_tremor_rad, rng, n)
    x = x.copy()
    x[0, :n] += tremor_q[-1]
    x[0, n:] += tremor_v
    k = int(round(duration * rate_hz)) + 1
    free = params.simulate(rig.g_plane, x, np.array([k]), 1.0 / rate_hz, substeps)
    if not np.all(np.isfinite(free)):
        raise ValueError("the simulation diverged: check the parameters")
    angles = np.vstack([np.asarray(x0, dtype=np.float64)[:n] + tremor_q[:n_hold], free])
    counts = encoder_counts(angles, quantum, realism, rng)
    keep = lost_frames(angles.shape[0], realism, rng)
    return Record(angles=counts[keep] * quantum, sample_index=np.flatnonzero(keep),
                  rate_hz=rate_hz, resolution_rad=quantum, capture_id=capture_id)
