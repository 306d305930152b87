"""Link health: what went wrong on the source's link, told when it changes (at most once a second).

Every source keeps counters (`SourceStats.health()`); the serial bridge adds gaps,
reconnections, resets and the decoder's errors. A change of any of them is news for a
terminal and a dashboard; the same counters, differenced over a capture, go into the
capture's record.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LinkWatch", "error_counts", "grown", "summary_line"]

# late_reads: silences that were this host reading late, not the link (serial bridge)
_COUNTERS = ("lost_samples", "gaps", "reconnects", "resets", "late_reads")


def _signature(health: dict[str, Any]) -> tuple[Any, ...]:
    return (*(health.get(k) for k in _COUNTERS), tuple(sorted(health.get("errors", {}).items())))


def error_counts(health: dict[str, Any]) -> dict[str, int]:
    """The counters that can only grow: errors by kind, lost samples, gaps, reconnections,
    late reads."""
    counts = {k: int(v) for k, v in health.get("errors", {}).items()}
    for key in _COUNTERS:
        if key in health:
            counts[key] = int(health[key])
    return counts


def grown(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """Counters that grew, by how much (what happened on the link during a capture)."""
    return {k: v - before.get(k, 0) for k, v in sorted(after.items()) if v > before.get(k, 0)}


def summary_line(health: dict[str, Any]) -> str:
    """One line for the terminal: totals of what went wrong on the link so far."""
    errors = health.get("errors", {})
    parts = [f"{health.get('lost_samples', 0)} samples lost"]
    for key in ("gaps", "reconnects", "resets", "late_reads"):
        if health.get(key):
            parts.append(f"{health[key]} {key}")
    parts += [f"{v} {k}" for k, v in errors.items()]
    return ", ".join(parts) + " (totals)"


class LinkWatch:
    """Looks at the health at most once per `period_s`; hands it out when it changed."""

    def __init__(self, health: dict[str, Any], period_s: float = 1.0) -> None:
        self.period_s = period_s
        self._seen = _signature(health)
        self._checked = float("-inf")

    def poll(self, health: Callable[[], dict[str, Any]], now: float) -> dict[str, Any] | None:
        """The health, if `period_s` has passed since the last look and it changed."""
        if now - self._checked < self.period_s:
            return None
        self._checked = now
        current = health()
        signature = _signature(current)
        if signature == self._seen:
            return None
        self._seen = signature
        return current
