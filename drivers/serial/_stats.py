"""What the serial bridge counts and how it fails: its errors, gaps and link statistics."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from hilrig.firmware_protocol import Status

from .._protocols import SourceStats

__all__ = ["DECODER_ERRORS", "Gap", "ProtocolMismatchError", "SerialBridgeError", "SerialStats"]

#: the stream decoder's counters, summed over all connections into SerialStats.errors
DECODER_ERRORS = ("crc_errors", "cobs_errors", "oversize", "length_errors",
                  "unknown_version", "unknown_type", "bad_payload", "lost_frames")


class SerialBridgeError(ConnectionError):
    """The bridge cannot be used: one line naming the port and the reason."""


class ProtocolMismatchError(SerialBridgeError):
    """The device speaks another protocol version or sample layout (never retried)."""


@dataclass(frozen=True, slots=True)
class Gap:
    """Samples missing in the host index: [first_index, first_index + count)."""

    first_index: int
    count: int
    kind: str  # "lost" (frames lost on the link or dropped by the device), "reset", "restart"
    exact: bool  # False: count is the outage-time estimate (reset, restart)


@dataclass
class SerialStats(SourceStats):
    """SourceStats plus what the link and the device report.

    lost_samples counts every sample missing in the host index, exact and estimated;
    estimated_lost is the estimated part. errors holds the decoder's counters summed over
    all connections (crc_errors, cobs_errors, oversize, length_errors, unknown_version,
    unknown_type, bad_payload, lost_frames) and the driver's own (link_lost, stalls,
    handshake_failures, index_restarts, host_overruns, naks).
    """

    gaps: deque[Gap] = field(default_factory=lambda: deque(maxlen=SerialStats.MAX_GAPS))
    gap_count: int = 0
    estimated_lost: int = 0
    reconnects: int = 0
    resets: int = 0
    late_reads: int = 0  # silences of timeout_s with bytes waiting: this host, not a stall
    frames: int = 0  # valid frames received
    bytes_in: int = 0
    flags_seen: int = 0  # OR of every SAMPLES frame's flags
    device: Status | None = None  # the last STATUS

    MAX_GAPS = 10_000  # gaps kept in `gaps` (gap_count counts them all)

    def health(self) -> dict[str, object]:
        out = super().health()
        out.update(gaps=self.gap_count, estimated_lost=self.estimated_lost,
                   reconnects=self.reconnects, resets=self.resets, frames=self.frames,
                   late_reads=self.late_reads)
        if self.device is not None:
            d = self.device
            out["device"] = {"clock_us": d.device_us, "samples_taken": d.samples_taken,
                             "frames_dropped": d.frames_dropped,
                             "samples_dropped": d.samples_dropped, "overruns": d.overruns,
                             "illegal_transitions": [d.illegal_0, d.illegal_1]}
        return out
