"""Simulated records of the chain rig kinds, with the realism knobs of identify.model.Realism.

The swing starts at x0 (angles and velocities: a push is a velocity), the true parameters
move the links, and the record is what encoders of `quantum` read over a lossy link:
white noise, interpolation error, count jitter, lost frames.
"""

from __future__ import annotations

import numpy as np

from ..model import QUANTUM, ChainParams, ChainRig, Realism, encoder_counts, lost_frames
from ._measurement import Record


def chain_record(rig: ChainRig, params: ChainParams, x0: np.ndarray | list[float],
                 duration: float, realism: Realism | None = None, *, rate_hz: float = 1000.0,
                 substeps: int = 4, quantum: float = QUANTUM,
                 rng: np.random.Generator | None = None, capture_id: str | None = None
                 ) -> Record:
    """A free swing of `rig` with the true `params` (any scale) from x0 = (q, q')."""
    realism = realism or Realism()
    rng = rng if rng is not None else realism.rng()
    x = np.asarray(x0, dtype=np.float64).reshape(1, -1)
    if x.shape[1] != 2 * rig.links:
        raise ValueError(f"x0 needs {2 * rig.links} entries for rig kind {rig.kind}")
    k = int(round(duration * rate_hz)) + 1
    angles = params.simulate(rig.g_plane, x, np.array([k]), 1.0 / rate_hz, substeps)
    if not np.all(np.isfinite(angles)):
        raise ValueError("the simulation diverged: check the parameters")
    counts = encoder_counts(angles, quantum, realism, rng)
    keep = lost_frames(k, realism, rng)
    return Record(angles=counts[keep] * quantum, sample_index=np.flatnonzero(keep),
                  rate_hz=rate_hz, resolution_rad=quantum, capture_id=capture_id)
