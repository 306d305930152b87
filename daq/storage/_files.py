"""Reading any capture file: HDF5 or CSV, by its name."""

from __future__ import annotations

import os
from pathlib import Path

from ..acquisition import Capture
from ._csv import read_capture_csv
from ._errors import CaptureFileError
from ._hdf5 import H5_SUFFIXES, read_capture_h5

__all__ = ["read_capture"]


def read_capture(path: str | os.PathLike[str]) -> Capture:
    """Read a capture file, HDF5 (.h5, .hdf5) or CSV (.csv, with default rig)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in H5_SUFFIXES:
        return read_capture_h5(p)
    if suffix == ".csv":
        return read_capture_csv(p)
    raise CaptureFileError(f"{p}: unknown capture file type {suffix or '(no suffix)'!r} "
                           f"(expected .h5, .hdf5 or .csv)")
