"""Reading any capture file: HDF5 or CSV, by its name; nothing but a regular file."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hilrig.identify import Progress

from ..acquisition import Capture
from ._csv import read_capture_csv
from ._errors import CaptureFileError
from ._hdf5 import H5_SUFFIXES, read_capture_h5
from ._limits import CaptureLimits

__all__ = ["read_capture"]


def read_capture(path: str | os.PathLike[str], *, limits: CaptureLimits | None = None,
                 progress: Progress | None = None, unit: str | None = None,
                 zero: str | None = None) -> Capture:
    """Read a capture file, HDF5 (.h5, .hdf5) or CSV (.csv, with default rig;
    `unit` and `zero` of its angles as read_capture_csv takes them).

    Only a regular file is opened (a FIFO would block for ever); one holding more than
    `limits` allow is refused before it is read whole. `progress(fraction, message)` is
    told how a long CSV read goes.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (*H5_SUFFIXES, ".csv"):
        raise CaptureFileError(f"{p}: unknown capture file type {suffix or '(no suffix)'!r} "
                               f"(expected .h5, .hdf5 or .csv)")
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        raise CaptureFileError(f"{p}: file not found") from None
    except OSError as exc:
        raise CaptureFileError(f"{p}: cannot open ({exc.strerror or exc})") from None
    if not stat.S_ISREG(mode):
        raise CaptureFileError(f"{p}: not a regular file (a directory, FIFO or device)")
    limits = limits or CaptureLimits()
    if suffix == ".csv":
        return read_capture_csv(p, limits=limits, progress=progress, unit=unit, zero=zero)
    if unit is not None or zero is not None:
        raise CaptureFileError(f"{p}: an angle unit or zero is for a CSV's angles; an HDF5 "
                               "capture records its encoders' counts")
    return read_capture_h5(p, limits=limits)
