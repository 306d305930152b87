"""Telling a device of another protocol major version from line noise, and failure reasons."""

from __future__ import annotations

from collections import Counter

from hilrig.firmware_protocol import VERSION_MAJOR, CobsError, cobs_decode, crc32

__all__ = ["dominant_foreign_version", "failure_reason", "foreign_versions"]


def failure_reason(exc: BaseException | None) -> str:
    if exc is None:
        return "closed"
    if isinstance(exc, TimeoutError):
        return "no answer (timeout)"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0]


def foreign_versions(raw: bytes, crc_ok: bool = False) -> Counter[int]:
    """Version bytes other than ours among the frames in `raw` (optionally CRC-checked)."""
    seen: Counter[int] = Counter()
    for seg in raw.split(b"\x00"):
        if not seg:
            continue
        try:
            frame = cobs_decode(seg)
        except CobsError:
            continue
        if len(frame) < 20 or frame[0] in (0, VERSION_MAJOR):
            continue
        if crc_ok and crc32(frame[:-4]) != int.from_bytes(frame[-4:], "little"):
            continue
        seen[frame[0]] += 1
    return seen


def dominant_foreign_version(raw: bytes) -> int | None:
    """The version of a device that answers only in frames of another major version.

    Line noise decodes to frames with any first byte; a device of version v answers
    every HELLO with frames that all start with v. So: at least 3 such frames, and at
    least 90 % of everything received.
    """
    seen = foreign_versions(raw)
    if not seen:
        return None
    v, count = seen.most_common(1)[0]
    segments = sum(1 for seg in raw.split(b"\x00") if seg)
    return v if count >= 3 and count >= 0.9 * segments else None
