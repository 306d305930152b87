"""Acquisition statistics of a capture, for its record: rate received, trigger latency,
release errors against a known release, and the memory the service uses."""

from __future__ import annotations

import os
from typing import Any

from ..acquisition import Capture

__all__ = ["capture_statistics", "rss_mb"]


def capture_statistics(capture: Capture, release_index: int | None) -> dict[str, Any]:
    """Samples received per second, the trigger's latency and, when the release's sample is
    known (`release_index`: a latch's answer, the simulated rig), the errors of the onset
    and of the fitted release moment, in ms."""
    stats: dict[str, Any] = {}
    idx, rate = capture.sample_index, capture.sample_rate_hz
    span = (idx[-1] - idx[0] + 1) / rate
    stats["effective_rate_hz"] = round(idx.size / span, 3)
    trig = capture.trigger
    if trig.trigger_index is not None and trig.onset_index is not None:
        stats["trigger_latency_ms"] = round((trig.trigger_index - trig.onset_index)
                                            / rate * 1e3, 3)
    if release_index is not None and idx[0] <= release_index:
        stats["release_index"] = int(release_index)
        if trig.onset_index is not None:
            stats["onset_error_ms"] = round((trig.onset_index - release_index) / rate * 1e3, 3)
        if trig.release_estimate is not None:
            stats["release_error_ms"] = round((trig.release_estimate - release_index) / rate
                                              * 1e3, 3)
    stats["rss_mb"] = round(rss_mb(), 1)
    return stats


def rss_mb() -> float:
    """Resident memory of this process, MB (Linux; NaN elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return float("nan")
