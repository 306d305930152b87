"""Where a free decay starts: the rest pose before release and the release time.

The rig is released from rest, so just after release q(t) = q_rest + a0 (t - t_r)^2 / 2
with a0 = H(q_rest)^-1 (-G(q_rest)) (friction is zero at zero velocity). Fitting t_r
to the first ~20 ms of motion places the release between samples, far better than the
first sample that moved (a pendulum starting from rest needs ~5 ms to move one count).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import bias_gravity, mass_matrix
from ._measurement import Measurement

#: the unit of the motion threshold when the angles are not encoder counts
#: (Measurement.resolution_rad None): 1e-4 rad. It is not the encoder quantum
#: (identify.model.QUANTUM, 1.57e-4 rad), and must not become it silently: the threshold
#: decides the onset, and so the release time, of every such capture.
UNKNOWN_RESOLUTION_RAD = 1e-4


@dataclass(frozen=True)
class Release:
    at_rest: bool  # the capture begins at rest before the release
    onset: int  # first sample index (row) that left the rest pose
    time_s: float  # estimated release time, seconds on Measurement.t
    rest_angles: np.ndarray  # (2,) mean pose before release (rad)


def find_release(m: Measurement, rest_min_s: float = 0.02) -> Release:
    """Find the rest pose and the release time of a free-decay capture."""
    q, t = m.angles, m.t
    quantum = m.resolution_rad or UNKNOWN_RESOLUTION_RAD
    moved = np.abs(q - q[0]).max(axis=1) > 1.5 * quantum
    onset = int(np.argmax(moved)) if moved.any() else q.shape[0]
    if onset < max(2, int(rest_min_s * m.rate_hz)) or onset >= q.shape[0] - 10:
        return Release(at_rest=False, onset=0, time_s=float(t[0]), rest_angles=q[0].copy())
    rest = q[:onset].mean(axis=0)
    rig = m.rig.as_array()
    h11, h12, h22 = mass_matrix(rig, rest[1])
    bg = np.array(bias_gravity(rig, rest[0], rest[1], 0.0, 0.0))
    a0 = np.linalg.solve(np.array([[h11, h12], [h12, h22]]), -bg)
    j = int(np.argmax(np.abs(a0)))
    if abs(a0[j]) < 1e-9:
        return Release(at_rest=True, onset=onset, time_s=float(t[onset]), rest_angles=rest)
    # only samples that left the rest count: before that, rounding hides the motion
    # and would bias the release late
    win = slice(onset, min(q.shape[0], onset + int(0.02 * m.rate_hz)))
    tw, qw = t[win], q[win, j]

    def cost(tr: float) -> float:
        # the rest pose is known only to a count: its offset is fitted too (closed form)
        shape = 0.5 * a0[j] * np.clip(tw - tr, 0.0, None) ** 2
        offset = float(np.mean(qw - rest[j] - shape))
        return float(((rest[j] + offset + shape - qw) ** 2).sum())

    lo = float(t[max(0, onset - int(0.03 * m.rate_hz) - 1)])
    from scipy.optimize import minimize_scalar  # on use: scipy.optimize is slow to import

    res = minimize_scalar(cost, bounds=(lo, float(t[onset])), method="bounded",
                          options={"xatol": 1e-7})
    return Release(at_rest=True, onset=onset, time_s=float(res.x), rest_angles=rest)
