"""Simulated captures: a free decay of the model as the encoders would have recorded it."""

from __future__ import annotations

import math

import numpy as np

from ..model import QUANTUM, TABLE_III_TRUTH, FrictionParams, RigParams, simulate, to_counts
from ._measurement import Measurement


def free_decay_counts(rig: RigParams, friction: FrictionParams = TABLE_III_TRUTH,
                      pose_deg: tuple[float, float] = (0.0, 120.0), duration: float = 35.0,
                      rest_s: float = 0.5, rate_hz: float = 10_000.0,
                      quantum: float = QUANTUM) -> np.ndarray:
    """Encoder counts (n, 2) of a capture: held at the pose for rest_s, then released.

    The model is simulated from rest at pose_deg (arm, pendulum; degrees) for `duration`
    seconds at rate_hz (identify.model.simulate), each angle rounded to the nearest count
    of `quantum` rad, and the first row repeated rest_s x rate_hz times before it.
    """
    x0 = [math.radians(pose_deg[0]), math.radians(pose_deg[1]), 0, 0]
    _, states, _ = simulate(rig, friction, x0, duration, rate_hz=rate_hz)
    counts = to_counts(states[:, :2], quantum)
    rest = np.repeat(counts[:1], int(rest_s * rate_hz), axis=0)
    return np.vstack([rest, counts])


def simulated_measurement(rig: RigParams | None = None,
                          friction: FrictionParams = TABLE_III_TRUTH,
                          pose_deg: tuple[float, float] = (0.0, 120.0), duration: float = 35.0,
                          *, rest_s: float = 0.5, rate_hz: float = 10_000.0,
                          quantum: float = QUANTUM, capture_id: str | None = None
                          ) -> Measurement:
    """A free-decay Measurement of counts (free_decay_counts), as the rig would record it.

    Defaults are the seed's public case: Table III truth, released at theta1 = 120 deg
    after 0.5 s at rest, 35 s, sampled at 10 kHz by encoders of 40,000 counts per rev.
    """
    rig = rig if rig is not None else RigParams()
    counts = free_decay_counts(rig, friction, pose_deg, duration, rest_s, rate_hz, quantum)
    return Measurement(angles=counts * quantum, sample_index=np.arange(counts.shape[0]),
                       rate_hz=rate_hz, rig=rig, resolution_rad=quantum, capture_id=capture_id)
