"""The range of every number the offline commands take, checked before any work.

A value outside its range, nan or inf, is one line naming the option and the range (exit
2), never a numpy warning, an allocation of gigabytes or a traceback further on. The
ranges are what a lab's rig and the project allow; `--help` states them.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from ._usage import UsageError

__all__ = ["ANGLE", "CAD", "DURATION", "MOST_S", "PUSH", "RATE", "REST", "TILT", "WORKERS",
           "Range", "check_numbers"]

#: the longest capture any settings allow: trigger.max_duration_s (at most 3600 s) after
#: trigger.pre_trigger_s (at most 10 s), as storage's CaptureLimits counts it
MOST_S = 3610.0


@dataclass(frozen=True)
class Range:
    """lo..hi in `unit`, each end closed unless said open; never nan or inf."""

    lo: float
    hi: float
    unit: str
    lo_open: bool = False
    hi_open: bool = False

    def __str__(self) -> str:
        return (f"{'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}"
                f"{')' if self.hi_open else ']'} {self.unit}").rstrip()

    def holds(self, x: float) -> bool:
        return (math.isfinite(x) and (self.lo < x if self.lo_open else self.lo <= x)
                and (x < self.hi if self.hi_open else x <= self.hi))

    def check(self, option: str, x: float) -> None:
        if not self.holds(x):
            raise UsageError(f"{option} must be in {self}, got {x:g}")


#: a tilt of the arm axis (or of a chain's plane) from the vertical: RigParams, ChainRig
TILT = Range(0.0, 90.0, "deg", hi_open=True)
#: a release pose: within one turn either way
ANGLE = Range(-360.0, 360.0, "deg")
#: a simulated capture after its release, and the hold before it (trigger.pre_trigger_s's
#: range); both within what the settings allow, checked with them
DURATION = Range(0.0, MOST_S - 10.0, "s", lo_open=True)
REST = Range(0.0, 10.0, "s")
#: sample_rate_hz's range in the settings
RATE = Range(100.0, 100_000.0, "Hz")
#: the hand's push as it lets go: faster than a free swing of the rig reaches is no push
PUSH = Range(-20.0, 20.0, "rad/s")
#: --cad-uncertainty, percent
CAD = Range(0.0, 100.0, "%", lo_open=True)
#: identify --pooled --workers: processes side by side, each a few hundred MB
WORKERS = Range(1.0, 64.0, "processes")

#: each number option of identify, compare and simulate whose range is fixed, by its dest;
#: --segment-s, --validate and --measured are checked where the record or rig is known
_OPTIONS: dict[str, tuple[str, Range]] = {
    "tilt": ("--tilt", TILT), "theta0": ("--theta0", ANGLE), "theta1": ("--theta1", ANGLE),
    "angles": ("--angles", ANGLE), "duration": ("--duration", DURATION),
    "rest": ("--rest", REST), "rate": ("--rate", RATE), "push": ("--push", PUSH),
    "cad_uncertainty": ("--cad-uncertainty", CAD), "workers": ("--workers", WORKERS),
}


def check_numbers(args: argparse.Namespace) -> None:
    """Every fixed-range number the command was given, in range (one line if not); the
    realism options (--noise, --drag...) are Realism's, checked where it is built."""
    for dest, (option, allowed) in _OPTIONS.items():
        value = getattr(args, dest, None)
        for x in value if isinstance(value, list | tuple) else [value]:
            if x is not None:
                allowed.check(option, float(x))
