"""Simulated captures of every rig kind: a free decay of the model as the encoders would
have recorded it, ideal (free_decay_counts) or as a real rig would give it
(realistic_capture); a chain rig's swing with the same realism (chain_record).

A chain record: a hand holds the links at x0's angles for rest_s with the realism's
tremor, then lets go with x0's velocities (a push) on top of the tremor's; the true
parameters move the links, and the record is what encoders of `quantum` read over a
lossy link: white noise, interpolation error, count jitter, lost frames."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model import (
    QUANTUM,
    ChainParams,
    ChainRig,
    FrictionParams,
    Realism,
    RigParams,
    encoder_counts,
    hand_tremor,
    lost_frames,
    simulate,
    to_counts,
    true_rig,
)
from ._measurement import Measurement, Record


def _substeps(rate_hz: float) -> int:
    """RK4 substeps per sample so the integration step is never above 0.1 ms: a 1 kHz
    capture is the 10 kHz motion sampled less often (as the simulated device does)."""
    return max(1, math.ceil(10_000.0 / rate_hz - 1e-9))


def free_decay_counts(rig: RigParams, friction: FrictionParams,
                      pose_deg: tuple[float, float] = (0.0, 120.0), duration: float = 35.0,
                      rest_s: float = 0.5, rate_hz: float = 10_000.0,
                      quantum: float = QUANTUM) -> np.ndarray:
    """Encoder counts (n, 2) of a capture: held at the pose for rest_s, then released.

    The model is simulated from rest at pose_deg (arm, pendulum; degrees) for `duration`
    seconds at rate_hz (identify.model.simulate), each angle rounded to the nearest count
    of `quantum` rad, and the first row repeated rest_s x rate_hz times before it.
    """
    x0 = [math.radians(pose_deg[0]), math.radians(pose_deg[1]), 0, 0]
    _, states, _ = simulate(rig, friction, x0, duration, rate_hz=rate_hz,
                            substeps=_substeps(rate_hz))
    counts = to_counts(states[:, :2], quantum)
    rest = np.repeat(counts[:1], int(rest_s * rate_hz), axis=0)
    return np.vstack([rest, counts])


def simulated_measurement(rig: RigParams | None, friction: FrictionParams,
                          pose_deg: tuple[float, float] = (0.0, 120.0), duration: float = 35.0,
                          *, rest_s: float = 0.5, rate_hz: float = 10_000.0,
                          quantum: float = QUANTUM, capture_id: str | None = None,
                          realism: Realism | None = None) -> Measurement:
    """A free-decay Measurement of counts (free_decay_counts), as the rig would record it.

    Defaults are the seed's public case (with identify.reference.TABLE_III_TRUTH as the
    friction, and rig None for Table I): released at theta1 = 120 deg
    after 0.5 s at rest, 35 s, sampled at 10 kHz by encoders of 40,000 counts per rev.
    With `realism`, the capture of realistic_capture (the Measurement tells the nominal
    rig; the truth it was made with is lost: use realistic_capture to keep it).
    """
    rig = rig if rig is not None else RigParams()
    if realism is not None:
        return realistic_capture(rig, friction, pose_deg, duration, realism, rest_s=rest_s,
                                 rate_hz=rate_hz, quantum=quantum,
                                 capture_id=capture_id).measurement
    counts = free_decay_counts(rig, friction, pose_deg, duration, rest_s, rate_hz, quantum)
    return Measurement(angles=counts * quantum, sample_index=np.arange(counts.shape[0]),
                       rate_hz=rate_hz, rig=rig, resolution_rad=quantum, capture_id=capture_id)


@dataclass(frozen=True)
class SyntheticCapture:
    """A realistic capture and the truth it was made from."""

    measurement: Measurement  # what the estimator gets: angles, and the nominal rig
    rig: RigParams  # the true rig, with its errors, drag and cable
    friction: FrictionParams
    release_time_s: float  # on measurement.t's clock
    release_state: np.ndarray  # (4,) angles and velocities as the hand let go


def realistic_capture(nominal: RigParams, friction: FrictionParams,
                      pose_deg: tuple[float, float], duration: float, realism: Realism, *,
                      rest_s: float = 0.5, rate_hz: float = 10_000.0, quantum: float = QUANTUM,
                      capture_id: str | None = None, rng: np.random.Generator | None = None,
                      rig: RigParams | None = None) -> SyntheticCapture:
    """A capture as a real rig gives it (identify.model.Realism): the true rig drawn about
    `nominal`, held at `pose_deg` by a trembling hand for rest_s, let go with a push,
    simulated for `duration` s, read by imperfect encoders over a lossy link.

    `rng` (default: realism.rng()) draws everything, in a fixed order, so a seed gives
    one capture and a shared generator gives a new capture at each call. `rig` names the
    true rig outright (a test of one error); otherwise it is drawn (true_rig).
    """
    rng = rng if rng is not None else realism.rng()
    drawn = true_rig(nominal, realism, rng)
    rig = drawn if rig is None else rig
    n_hold = int(round(rest_s * rate_hz))
    pose = np.radians(np.asarray(pose_deg, dtype=np.float64))
    tremor_q, tremor_v = hand_tremor(n_hold + 1, rate_hz, realism.hand_tremor_rad, rng)
    x0 = np.concatenate([pose + tremor_q[-1], tremor_v + np.asarray(realism.push_rad_s)])
    _, states, _ = simulate(rig, friction, x0, duration, rate_hz=rate_hz,
                            substeps=_substeps(rate_hz))
    angles = np.vstack([pose + tremor_q[:n_hold], states[:, :2]])
    counts = encoder_counts(angles, quantum, realism, rng)
    keep = lost_frames(counts.shape[0], realism, rng)
    index = np.flatnonzero(keep)
    m = Measurement(angles=counts[keep] * quantum, sample_index=index, rate_hz=rate_hz,
                    rig=nominal, resolution_rad=quantum, capture_id=capture_id)
    # times on m.t's clock start at the first sample kept
    return SyntheticCapture(m, rig, friction, (n_hold - index[0]) / rate_hz, x0)


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
