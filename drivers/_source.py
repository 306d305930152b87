"""The one interface every sample source implements: simulated rig, serial bridge, replay.

A source is an async context manager. Entering it opens the device (for the serial
bridge: port, handshake, START); `blocks()` then yields SampleBlocks until the source
is closed; leaving it stops the stream and releases the device.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import AsyncIterator, Protocol, Self, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict

CHANNELS: tuple[str, str] = ("arm", "pendulum")


@dataclass(frozen=True, slots=True)
class SampleBlock:
    """Consecutive samples of both encoders.

    first_index is the device's sample counter of counts[0]; indices are consecutive
    within a block. A block whose first_index is past the previous block's end marks
    lost samples: consumers must record the gap, never close it up.
    """

    first_index: int
    counts: np.ndarray  # int32, shape (n, 2): arm, pendulum
    host_time: float  # time.monotonic() when the block was received or produced
    flags: int = 0  # device flags (overrun, illegal transition, late sample), 0 for the sim

    def __post_init__(self) -> None:
        if self.counts.dtype != np.int32 or self.counts.ndim != 2 or self.counts.shape[1] != 2:
            raise ValueError(f"SampleBlock.counts must be int32 (n, 2), got "
                             f"{self.counts.dtype} {self.counts.shape}")

    @property
    def end_index(self) -> int:
        """Index one past the last sample."""
        return self.first_index + self.counts.shape[0]

    def __len__(self) -> int:
        return self.counts.shape[0]


class SourceInfo(BaseModel):
    """Who produced the samples: recorded in every capture and published with status."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str  # "simulated", "serial", "replay"
    identity: str  # e.g. "sim:tilt=10.0", "serial:/dev/ttyACM0:boot=..."
    sample_rate_hz: float
    counts_per_rev: tuple[int, int]
    channels: tuple[str, str] = CHANNELS
    firmware: str | None = None
    protocol_version: str | None = None
    boot_id: str | None = None


@runtime_checkable
class Source(Protocol):
    """What the DAQ needs from any source."""

    info: SourceInfo
    stats: SourceStats

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc: object) -> None: ...

    def blocks(self) -> AsyncIterator[SampleBlock]: ...


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
