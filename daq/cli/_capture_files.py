"""Capture files as every offline command takes them: read within the settings' limits
(with a bar while a long one is read), and an output that must not exist unless forced."""

from __future__ import annotations

from pathlib import Path

from ..acquisition import Capture
from ..config import Settings
from ..storage import CaptureLimits, read_capture
from ._progress import ProgressBar
from ._usage import UsageError

__all__ = ["check_out_free", "read_capture_file"]


def read_capture_file(path: str, settings: Settings, unit: str | None = None,
                      zero: str | None = None) -> Capture:
    """A capture file within what the settings allow, with a bar while a long one is read;
    a CSV's angles in `unit` from `zero` (default: what the file says, else rad, hanging)."""
    bar = ProgressBar(f"read {Path(path).name}")
    try:
        return read_capture(path, limits=CaptureLimits.of(settings), progress=bar, unit=unit,
                            zero=zero)
    finally:
        bar.close()



def check_out_free(out: Path, force: bool) -> None:
    # before any work; the writer still refuses atomically should the file appear meanwhile
    if not force and out.exists():
        raise UsageError(f"--out {out}: already exists; use --force to overwrite")
