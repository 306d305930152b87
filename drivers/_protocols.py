"""The interface every sample source implements, and the capabilities a source may add.

A source is an async context manager. Entering it opens the device (for the serial
bridge: port, handshake, START); `blocks()` then yields SampleBlocks until the source
is closed; leaving it stops the stream and releases the device.

What only some sources can do is a small protocol of its own, checked with
``isinstance(source, Releasable)`` and never by the source's class or kind:

- `Releasable`: lets the rig go itself (the simulated rig; a bridge with a latch);
- `Holdable`: can be put back at a pose and held there (the simulated rig);
- `Pacing`: produces samples in real time or as fast as they are read (the simulated rig);
- `LinkHealth`: reached over a link that can drop and reconnect (the serial bridge);
  its device streams whether or not it is read, so an idle consumer drains it;
- `Conditions`: reads conditions beside its encoders (the simulated rig's lab
  temperature), which a capture records as its covariates.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Protocol, Self, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict

__all__ = [
    "CHANNELS", "Conditions", "Holdable", "LinkHealth", "Pacing", "Releasable", "SampleBlock",
    "Source", "SourceInfo", "SourceStats",
]

CHANNELS: tuple[str, str] = ("arm", "pendulum")


@dataclass(frozen=True, slots=True)
class SampleBlock:
    """Consecutive samples of both encoders.

    first_index is the device's sample counter of counts[0]; indices are consecutive
    within a block. A block whose first_index is past the previous block's end marks
    lost samples: consumers must record the gap, never close it up. A block that is not
    `continuous` follows a gap whose length nobody knows (the board reset, or restarted
    its stream): its index only estimates the time between, so no consumer may join what
    follows to what came before as one stretch of samples.
    """

    first_index: int
    counts: np.ndarray  # int32, shape (n, 2): arm, pendulum
    host_time: float  # time.monotonic() when the block was received or produced
    flags: int = 0  # device flags (overrun, illegal transition, late sample), 0 for the sim
    continuous: bool = True  # False: an unknown number of samples is missing before it

    def __post_init__(self) -> None:
        if self.counts.dtype != np.int32 or self.counts.ndim != 2 or self.counts.shape[1] != 2:
            raise ValueError(f"SampleBlock.counts must be int32 (n, 2), got "
                             f"{self.counts.dtype} {self.counts.shape}")

    @property
    def end_index(self) -> int:
        """Index one past the last sample."""
        return self.first_index + self.counts.shape[0]

    def __len__(self) -> int:
        return int(self.counts.shape[0])


class SourceInfo(BaseModel):
    """Who produced the samples: recorded in every capture and published with status."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str  # "simulated", "serial", "replay": a record of provenance, not a capability
    identity: str  # e.g. "sim:tilt=10.0", "serial:/dev/ttyACM0:boot=..."
    sample_rate_hz: float
    counts_per_rev: tuple[int, int]
    channels: tuple[str, str] = CHANNELS
    firmware: str | None = None
    protocol_version: str | None = None
    boot_id: str | None = None


@dataclass
class SourceStats:
    """Counters every source keeps; the serial bridge adds protocol errors."""

    blocks: int = 0
    samples: int = 0
    lost_samples: int = 0
    errors: dict[str, int] = field(default_factory=dict)

    def health(self) -> dict[str, object]:
        """JSON-able counters for status messages and capture records (non-zero errors only)."""
        return {"blocks": self.blocks, "samples": self.samples,
                "lost_samples": self.lost_samples,
                "errors": {k: v for k, v in sorted(self.errors.items()) if v}}


@runtime_checkable
class Source(Protocol):
    """What the acquisition engine needs from any source."""

    @property
    def info(self) -> SourceInfo:
        """Re-read it: a board reset changes the identity."""
        ...

    @property
    def stats(self) -> SourceStats: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    def blocks(self) -> AsyncIterator[SampleBlock]: ...


@runtime_checkable
class Releasable(Protocol):
    """A source that can let the rig go itself."""

    @property
    def can_release(self) -> bool:
        """Whether releasing is possible now (a bridge: its firmware reports a latch)."""
        ...

    async def release(self, pulse_ms: int = 0) -> int | None:
        """Let go; the sample index of the first sample after the release, when known.

        Raises ConnectionError (or TimeoutError) when the device refuses or does not answer.
        """
        ...


@runtime_checkable
class Holdable(Protocol):
    """A rig that can be put at a pose and held still there (what an operator does by hand)."""

    @property
    def held(self) -> bool: ...

    @property
    def release_index(self) -> int | None:
        """The true sample index of the last release."""
        ...

    def hold(self, pose_deg: tuple[float, float], release_in_s: float | None = None) -> None:
        """Hold still at the pose; let go after `release_in_s` seconds of samples if given."""
        ...


@runtime_checkable
class Conditions(Protocol):
    """A source that reads conditions beside its encoders, as {name: value}: names with
    their unit last (temperature_c); empty when it reads none now."""

    def conditions(self) -> dict[str, float]: ...


@runtime_checkable
class Pacing(Protocol):
    """A source that produces samples in real time (paced) or as fast as they are read."""

    paced: bool


@runtime_checkable
class LinkHealth(Protocol):
    """A device reached over a link that can be lost and is reconnected by the source."""

    @property
    def port(self) -> str: ...

    @property
    def connected(self) -> bool:
        """False while the link is lost and being reconnected."""
        ...
