"""Suspenders, as in a run engine: conditions that pause a session and clear by themselves.

A session asks for no release while any suspender holds (the capture under way
finishes). Each is checked about twice a second by `SuspenderWatch.check`, given the
conditions of the moment (kind -> reason, or None when clear):

- ``bridge``: the serial bridge is lost and being reconnected;
- ``link``: corrupted frames (CRC, COBS, length) faster than the plan allows;
- ``encoder``: a joint that did not count while another swung (sticky: it clears
  only when every joint is seen moving, a person having checked the rig);
- ``disk``: captures that wait for room to be kept (the disk filled), or less free space
  than the plan's min_free_mb;
- ``paused``: a command (cleared only by session/resume).

A condition must stay clear for `settle_s` before its suspension is lifted; one that
lasts longer than `limit_s` stops the session with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SuspenderWatch", "Verdict"]

MANUAL = ("paused",)  # lifted by a command only


@dataclass
class Verdict:
    suspend: dict[str, str] = field(default_factory=dict)  # kind -> reason (new or changed)
    lift: list[str] = field(default_factory=list)  # kinds clear for settle_s
    stop: str | None = None  # a suspension that outlasted the limit


class SuspenderWatch:
    """Turns conditions over time into suspend / lift / stop decisions (no I/O)."""

    def __init__(self, settle_s: float, limit_s: float) -> None:
        self.settle_s = float(settle_s)
        self.limit_s = float(limit_s)
        self.since: dict[str, float] = {}  # kind -> when it began
        self.reasons: dict[str, str] = {}
        self._clear_since: dict[str, float] = {}

    def check(self, now: float, conditions: dict[str, str | None]) -> Verdict:
        v = Verdict()
        for kind, reason in conditions.items():
            if reason is not None:
                self._clear_since.pop(kind, None)
                if self.reasons.get(kind) != reason:
                    v.suspend[kind] = reason
                self.since.setdefault(kind, now)
                self.reasons[kind] = reason
            elif kind in self.since and kind not in MANUAL:
                start = self._clear_since.setdefault(kind, now)
                if now - start >= self.settle_s:
                    v.lift.append(kind)
                    self.since.pop(kind)
                    self.reasons.pop(kind, None)
                    self._clear_since.pop(kind)
        for kind, start in self.since.items():
            if kind not in MANUAL and now - start > self.limit_s:
                v.stop = f"{self.reasons[kind]} (suspended for more than {self.limit_s:g} s)"
                break
        return v

    def lifted(self, kind: str) -> None:
        """A manual suspension lifted by command."""
        self.since.pop(kind, None)
        self.reasons.pop(kind, None)
        self._clear_since.pop(kind, None)
