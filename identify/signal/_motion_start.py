"""Where a record's free motion starts: after a hold, a hand's tremor and its letting go."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model import QUANTUM
from ._measurement import Record

LET_GO_S = 0.03  # after the motion is plain, the hand may still touch for this long
LEAVES_FOR_S = 0.15  # out of the held band this long: released (a tremor's swing is shorter)
#: a joint whose angle spans no more than this many encoder counts over a record never moved
STILL_COUNTS = 2


def motion_start(m: Record) -> float:
    """When the free motion is plainly under way (s on m.t), never before the release.

    What the rig did at first (rest, or a hand's tremor) sets a band per joint: 6 times
    the spread of the first 0.2 s (at least 3 encoder counts). The motion starts when
    either joint leaves its band for good: for at least LEAVES_FOR_S, which a tremor
    growing after the first 0.2 s never does (it crossed the band 0.3 s before a
    release and put the hand's motion into the fit); LET_GO_S later the hand is off.
    """
    q, t = m.angles, m.t
    quantum = m.resolution_rad or QUANTUM
    head = t <= min(0.2, 0.2 * float(t[-1]))
    if head.sum() < 5:
        return float(t[0])
    centre = np.median(q[head], axis=0)
    spread = np.maximum(q[head].std(axis=0), quantum)
    band = np.maximum(6 * spread, 3 * quantum)
    out = (np.abs(q - centre) > band).any(axis=1)
    if not out.any():
        return float(t[0])
    # out for the whole of [t_k, t_k + LEAVES_FOR_S]: no sample back inside the band
    inside = np.concatenate([[0], np.cumsum(~out)])
    until = np.searchsorted(t, t + LEAVES_FOR_S)
    stays = out & (inside[until] - inside[np.arange(t.size)] == 0)
    first = int(np.argmax(stays)) if stays.any() else int(np.argmax(out))
    if first <= head.sum() // 2:  # in motion from the start: no hold to skip
        return float(t[0])
    return min(float(t[first]) + LET_GO_S, float(t[-1]))


def still_joints(m: Record) -> list[int]:
    """The joints that never moved in the record: over all of it, their angle spans at most
    STILL_COUNTS encoder counts (a stuck or unplugged encoder reads one count throughout)."""
    quantum = m.resolution_rad or QUANTUM
    span = np.ptp(np.ascontiguousarray(m.angles.T), axis=1)  # 12 times faster than axis=0
    return [i for i, s in enumerate(span) if s <= STILL_COUNTS * quantum * (1 + 1e-9)]


def require_motion(m: Record, names: Sequence[str]) -> None:
    """A ValueError naming the joints that never moved (`names`: the record's joints, in
    order). No friction can be identified from a joint at rest, and every rig kind's
    joints move together, so a fit would explain a stuck encoder with the other joints'
    terms: a Furuta capture with its arm encoder stuck took 25 s to end at 'fit arm
    -6e20 %' with the arm's Coulomb term reported identified."""
    still = still_joints(m)
    if still:
        which = " and ".join(names[i] for i in still)
        raise ValueError(f"the {which} never moved in this capture (its angle stayed within "
                         f"{STILL_COUNTS} encoder counts): nothing to identify its friction "
                         "from; is its encoder stuck or unplugged?")
