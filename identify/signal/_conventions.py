"""Whether a record's angles can be what its file states: radians (or degrees) from a
zero (upright or hanging), continuous over turns; and, where they cannot, what they are.

A free decay ends with every pendulum joint hanging at rest. In the stated convention a
hanging joint reads pi (zero upright) or 0 (zero hanging), plus whole turns; a record
whose joints come to rest elsewhere, where another convention puts them exactly, was
read in the wrong one (a single pendulum's CSV in degrees came out 166 % off with no
hint). A joint that moves more than half a turn between two samples (a 314 rad/s swing
at 100 Hz) holds angles wrapped to one turn, which no fit can follow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ANGLE_UNITS", "HANGING_READS", "ConventionProblem", "angle_convention_problem",
           "chain_angles", "furuta_angles"]

#: radians per unit of a file's angles
ANGLE_UNITS = {"rad": 1.0, "deg": math.pi / 180.0}
#: where a hanging joint reads (rad, whole turns aside) for each zero a file may state
HANGING_READS = {"upright": math.pi, "hanging": 0.0}
#: the record's last fraction, and at least this long (s: a few periods of a lab
#: pendulum, so that the swing's middle is its rest), judged for its rest
_TAIL = 0.05
_TAIL_S = 2.0
#: the stated convention holds where the rest lies within this of hanging (rad): a
#: tilted Furuta pendulum rests within 0.15 rad of it, a real double pendulum 0.02
_HOLDS_RAD = 0.5
#: another convention explains the rest where it puts it this close to hanging (rad)
_EXPLAINS_RAD = 0.1


@dataclass(frozen=True)
class ConventionProblem:
    """Why a record's angles cannot be in the stated convention, and the likely fix."""

    joint: str
    message: str  # one line: what was found
    unit: str | None = None  # the unit that explains it, where another one does
    zero: str | None = None  # the zero that explains it, where another one does


def _plausible_sweep(rad: float) -> bool:
    """Whether a joint's whole record can sweep `rad` (max - min) in a free decay: more
    than a degree (a trigger needs motion), less than one and a half turns (a release
    from rest cannot go over the top and back; a push, once)."""
    return math.radians(1.0) < rad < 3 * math.pi


def _hang_error(value: float, unit: str, zero: str) -> float:
    """How far (rad) a joint reading `value` (file units) lies from hanging, whole turns
    aside, were the file in `unit` from `zero`."""
    x = value * ANGLE_UNITS[unit] - HANGING_READS[zero]
    return abs(math.remainder(x, 2 * math.pi))


def angle_convention_problem(values: np.ndarray, names: Sequence[str], rate_hz: float,
                             unit: str = "rad", zero: str = "upright",
                             pendulums: Sequence[bool] | None = None
                             ) -> ConventionProblem | None:
    """The first reason the record's `values` (n, joints; in the file's numbers) cannot be
    `unit` from `zero`, or None.

    pendulums[j]: whether joint j hangs at rest (every joint by default; a Furuta rig's
    arm does not). Checked: no joint moves half a turn between samples; every pendulum
    joint ends swinging about hanging (the middle of its swing over the record's last
    5 %, at least 2 s; a record shorter than three times that is not judged), unless no
    other convention puts it there (a rig that rests elsewhere is not refused for it).
    """
    if unit not in ANGLE_UNITS or zero not in HANGING_READS:
        raise ValueError(f"unit must be one of {sorted(ANGLE_UNITS)} and zero one of "
                         f"{sorted(HANGING_READS)}, got {unit!r}, {zero!r}")
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != len(names) or v.shape[0] < 2:
        raise ValueError(f"values must be (n >= 2, {len(names)}), got {v.shape}")
    pendulums = [True] * len(names) if pendulums is None else list(pendulums)
    steps = np.abs(np.diff(v, axis=0)) * ANGLE_UNITS[unit]
    for j, name in enumerate(names):
        over = np.flatnonzero(steps[:, j] > math.pi)
        if over.size:  # the first such jump, where a reader looks
            k = int(over[0])
            jump = abs(float(v[k + 1, j] - v[k, j]))
            degrees = unit == "rad" and abs(jump - 360.0) < 36.0  # a turn, in degrees
            return ConventionProblem(
                name, f"{name} jumps from {v[k, j]:.6g} to {v[k + 1, j]:.6g} between samples "
                      f"{k} and {k + 1}, more than half a turn in {unit}: angles wrapped to one "
                      f"turn{' (of 360: degrees)' if degrees else ''}? A fit needs them "
                      "continuous (numpy.unwrap)", unit="deg" if degrees else None)
    tail = max(int(round(_TAIL_S * rate_hz)), int(_TAIL * v.shape[0]), 2)
    if 3 * tail > v.shape[0]:
        return None  # too short to end swinging about its rest: nothing to judge
    end = v[-tail:]
    for j, name in enumerate(names):
        if not pendulums[j]:
            continue
        lo, hi = float(end[:, j].min()), float(end[:, j].max())
        rest, span = 0.5 * (lo + hi), hi - lo  # a swing's middle is where it rests
        if span * ANGLE_UNITS[unit] < 2 * math.pi and _hang_error(rest, unit, zero) <= _HOLDS_RAD:
            continue
        # another unit only where the stated one makes the whole swing implausible: in
        # degrees every small number lies near hanging
        sweep = float(v[:, j].max() - v[:, j].min())
        units = [u for u in ANGLE_UNITS
                 if u == unit or (not _plausible_sweep(sweep * ANGLE_UNITS[unit])
                                  and _plausible_sweep(sweep * ANGLE_UNITS[u]))]
        others = sorted(((u, z) for u in units for z in HANGING_READS
                         if (u, z) != (unit, zero) and span * ANGLE_UNITS[u] < 2 * math.pi
                         and _hang_error(rest, u, z) <= _EXPLAINS_RAD),
                        key=lambda c: _hang_error(rest, *c))
        if not others:
            continue  # no convention explains it better: a rig of its own, not refused
        u, z = others[0]
        hangs = "pi" if zero == "upright" else "0"
        return ConventionProblem(
            name, f"{name} ends swinging about {rest:.4g}, where a hanging joint reads {hangs} "
                  f"(whole turns aside) in {unit} from {zero}; it reads so in {u} from {z}",
            unit=u if u != unit else None, zero=z if z != zero else None)
    return None


def chain_angles(values: np.ndarray, unit: str = "rad", zero: str = "upright") -> np.ndarray:
    """A chain rig's link angles (n, joints) in `unit` from `zero`, as identification
    takes them: radians from the upward vertical (seed 002's delta_i; hanging reads pi)."""
    offset = HANGING_READS["upright"] - HANGING_READS[zero]  # pi from hanging, 0 from upright
    return np.asarray(values, dtype=np.float64) * ANGLE_UNITS[unit] + offset


def furuta_angles(values: np.ndarray, unit: str = "rad", zero: str = "hanging") -> np.ndarray:
    """The Furuta rig's arm and pendulum (n, 2) in `unit`, the pendulum from `zero`, as
    identification takes them: radians, the pendulum 0 hanging; from upright, the whole
    turns chosen so that the pendulum ends near 0 (where a free decay leaves it)."""
    angles = np.array(values, dtype=np.float64) * ANGLE_UNITS[unit]
    if zero == "upright":
        end = float(np.median(angles[-max(2, len(angles) // 20):, 1])) - math.pi
        angles[:, 1] -= math.pi + 2 * math.pi * round(end / (2 * math.pi))
    return angles
