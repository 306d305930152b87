"""What the acquisition engine tells the policy that drives it, block by block, in order.

Within one block the order is: LinkChanged, Telemetry, then the trigger's events
(TriggerArmed, CaptureStarted, CaptureTaken) as they happen in the block, then
CaptureAborted or CaptureProgress, and last BlockSeen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._capture import Capture
from ._trigger import Triggered

__all__ = ["BlockSeen", "CaptureAborted", "CaptureProgress", "CaptureStarted", "CaptureTaken",
           "EngineEvent", "LinkChanged", "Telemetry", "TriggerArmed"]


@dataclass(frozen=True, slots=True)
class BlockSeen:
    """A block was processed: the stream has reached `end_index` (exclusive)."""

    end_index: int
    host_time: float


@dataclass(frozen=True, slots=True)
class TriggerArmed:
    """The rig rests (near the pose asked for) and motion is watched from `index` on."""

    index: int


@dataclass(frozen=True, slots=True)
class CaptureStarted:
    """Motion detected: a capture is recording from `start_index`."""

    capture_id: str
    trigger: Triggered
    start_index: int
    started_utc: str


@dataclass(frozen=True, slots=True)
class CaptureProgress:
    """About once a second while recording."""

    capture_id: str
    samples: int
    duration_s: float


@dataclass(frozen=True, slots=True)
class CaptureTaken:
    """The rig came to rest (or the capture reached its longest): the capture, cut out.

    `link_errors`: link counters that grew during the capture, by how much. The trigger
    is idle now; the policy arms it for the next capture when it wants one.
    """

    capture: Capture
    link_errors: dict[str, int]


@dataclass(frozen=True, slots=True)
class CaptureAborted:
    """The capture under way was dropped (`AcquisitionEngine.abort`); nothing was kept."""

    capture_id: str


@dataclass(frozen=True, slots=True)
class LinkChanged:
    """The source's link health changed (a gap, an error, a reconnection); at most 1/s."""

    health: dict[str, Any]
    summary: str  # one line for a terminal: totals so far


@dataclass(frozen=True, slots=True)
class Telemetry:
    """Angles and velocities decimated for dashboards (a telemetry payload's body)."""

    body: dict[str, Any]


EngineEvent = (BlockSeen | TriggerArmed | CaptureStarted | CaptureProgress | CaptureTaken
               | CaptureAborted | LinkChanged | Telemetry)
