"""The software version and UTC timestamps recorded in captures, results and messages."""

from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version

__all__ = ["SOFTWARE_VERSION", "utc_now"]

try:
    SOFTWARE_VERSION = version("hilrig")
except PackageNotFoundError:  # running from a source tree that was not installed
    SOFTWARE_VERSION = "0+unknown"


def utc_now() -> str:
    """Now, UTC, ISO 8601 with milliseconds and Z: 2026-11-23T20:52:24.123Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
