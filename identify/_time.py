"""Wall-clock timestamps as results and captures record them."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    """The current UTC time in ISO 8601 with milliseconds and a Z: 2026-11-23T20:52:24.123Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
