"""A Furuta capture file as identification takes it: read, its rig as the options say,
checked to be a free decay."""

from __future__ import annotations

import argparse
import math

import numpy as np

from hilrig.identify import Measurement

from ...acquisition import Capture, to_measurement
from ...config import Settings
from .._capture_files import read_capture_file
from .._measured import with_measured
from .._usage import UsageError

__all__ = ["FURUTA_HINT", "load_measurement"]


def load_measurement(args: argparse.Namespace, settings: Settings,
                     capture: Capture | None = None) -> Measurement:
    path, tilt = args.file, args.tilt
    unit, zero = getattr(args, "unit", None), getattr(args, "zero", None)
    if capture is not None and (unit or zero):
        raise UsageError(f"{path}: --unit and --zero are for a CSV's angles; an HDF5 capture "
                         "records its encoders' counts")
    capture = capture or read_capture_file(path, settings, unit, zero)
    # an HDF5 capture records its rig; a CSV import has none, so it gets the configured one
    rig = capture.rig if capture.source.kind != "replay" else settings.rig
    rig = rig.model_copy(update={"tilt_deg": tilt}) if tilt is not None else rig
    if not 0 <= rig.tilt_deg < 90:
        raise UsageError(f"--tilt must be in [0, 90) degrees, got {rig.tilt_deg}")
    rig = with_measured(rig, args.measured, args.cad_uncertainty)
    _check_moves(path, capture)
    try:
        return to_measurement(capture, rig)
    except ValueError as exc:  # what identification cannot take: one line, naming the file
        raise UsageError(f"{path}: {exc}") from None


def _check_moves(path: str, capture: Capture) -> None:
    """A capture in which neither joint moves more than two encoder counts is no free
    decay; its fit would divide by a zero residual."""
    quantum = 2 * math.pi / np.asarray(capture.counts_per_rev, dtype=np.float64)
    if np.all(np.ptp(capture.angles_rad, axis=0) <= 2 * quantum):
        raise UsageError(f"{path}: neither joint moves (a capture is a free decay after a "
                         "release)")


#: what to try when a Furuta fit fails numerically
FURUTA_HINT = ("check the rig values it starts from ([rig] in the config, --measured, "
               "--tilt) against the rig, or try another --method")


