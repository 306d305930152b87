"""The software version recorded in every result (and, through daq, every capture)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    SOFTWARE_VERSION: str = version("hilrig")
except PackageNotFoundError:  # running from a source tree that was not installed
    SOFTWARE_VERSION = "0+unknown"
