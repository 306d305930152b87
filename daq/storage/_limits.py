"""What a capture file may hold, so a reader refuses it before it costs hours or gigabytes.

A capture is one free decay: at most the longest capture the settings allow
(trigger.max_duration_s + trigger.pre_trigger_s) at the rig's rate. A file holding more
is refused at once, naming the setting to raise; one holding fewer than MIN_SAMPLES
samples cannot be identified.

A CSV of such a capture is bounded too, before it is parsed: no more bytes than its rows
of numbers CSV_NUMBER_BYTES wide each and CSV_HEAD_BYTES of comments and header above
them (`max_csv_bytes`); while it is read, no line longer than CSV_MAX_LINE_BYTES and no
more than CSV_MAX_OTHER_LINES blank or comment lines among the rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..acquisition import MAX_RATE_HZ, MIN_RATE_HZ
from ..config import Settings
from ._errors import CaptureFileError

__all__ = ["CSV_HEAD_BYTES", "CSV_MAX_LINE_BYTES", "CSV_MAX_OTHER_LINES", "CSV_NUMBER_BYTES",
           "MIN_SAMPLES", "CaptureLimits"]

MIN_SAMPLES = 10
# the largest the settings allow: 100 kHz, a 3600 s capture after 10 s of pre-trigger
_MOST_S = 3600.0 + 10.0
_MOST_RATE_HZ = 100_000.0
#: the widest number a CSV row holds, padding included: a float64 written to round-trip is
#: at most 24 characters ('-2.2250738585072014e-308'), a spreadsheet's '%.17g' fewer
CSV_NUMBER_BYTES = 40
#: no line of a capture CSV is longer, its ending included: a row of four numbers needs
#: at most 164 bytes, a comment a line of text
CSV_MAX_LINE_BYTES = 4096
#: comments and the header line, above the first row: found within this many bytes
CSV_HEAD_BYTES = 65_536
#: blank and comment lines among the rows: a file of little else is no capture (and
#: would cost seconds a million lines)
CSV_MAX_OTHER_LINES = 65_536


@dataclass(frozen=True)
class CaptureLimits:
    """At most `max_samples` samples, spanning at most `max_duration_s` seconds."""

    max_samples: int = math.ceil(_MOST_S * _MOST_RATE_HZ) + 1
    max_duration_s: float = _MOST_S

    @classmethod
    def of(cls, settings: Settings) -> CaptureLimits:
        """The longest capture these settings allow, at their rate."""
        longest = settings.trigger.max_duration_s + settings.trigger.pre_trigger_s
        return cls(math.ceil(longest * settings.sample_rate_hz) + 1, longest)

    def max_csv_bytes(self, columns: int) -> int:
        """The largest CSV of `columns` columns a capture within these limits makes: its
        rows of numbers at most CSV_NUMBER_BYTES wide (a separator or line ending each),
        below CSV_HEAD_BYTES of comments and header."""
        return CSV_HEAD_BYTES + self.max_samples * columns * (CSV_NUMBER_BYTES + 1)

    def check_samples(self, p: Path, n: int) -> None:
        if n < MIN_SAMPLES:
            raise CaptureFileError(f"{p}: only {n} samples (at least {MIN_SAMPLES} required)")
        if n > self.max_samples:
            raise CaptureFileError(
                f"{p}: more than {self.max_samples} samples, the longest capture the settings "
                f"allow ({self.max_duration_s:g} s at the rig's rate); raise "
                "trigger.max_duration_s or sample_rate_hz to read it")

    @staticmethod
    def check_rate(p: Path, rate_hz: float) -> None:
        if not (math.isfinite(rate_hz) and MIN_RATE_HZ <= rate_hz <= MAX_RATE_HZ):
            raise CaptureFileError(f"{p}: sample_rate_hz must lie in [{MIN_RATE_HZ:g}, "
                                   f"{MAX_RATE_HZ:g}] Hz, got {rate_hz:.6g}")

    def check_duration(self, p: Path, seconds: float) -> None:
        if not seconds <= self.max_duration_s:
            raise CaptureFileError(
                f"{p}: spans {seconds:.6g} s, longer than the longest capture the settings "
                f"allow ({self.max_duration_s:g} s); raise trigger.max_duration_s to read it")
