"""The software version recorded in every capture, result and status message."""

from importlib.metadata import PackageNotFoundError, version

try:
    SOFTWARE_VERSION = version("hilrig")
except PackageNotFoundError:  # running from a source tree that was not installed
    SOFTWARE_VERSION = "0+unknown"
