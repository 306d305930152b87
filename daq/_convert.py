"""Between capture files (daq) and what identification takes (identify.Measurement)."""

from __future__ import annotations

import math

import numpy as np

from identify import Measurement, RigParams

from ._capture_file import Capture


def encoder_quantum(capture: Capture) -> float | None:
    """The angle of one encoder count, if the angles are counts (recorded, or exported ones)."""
    step = 2 * math.pi / max(capture.counts_per_rev)
    if capture.counts is not None:
        return step
    # CSV angles that sit on the count grid came from an encoder of that resolution
    counts = capture.angles_rad / step
    return step if bool(np.all(np.abs(counts - np.rint(counts)) < 1e-6)) else None


def measurement_from_capture(capture: Capture, rig: RigParams | None = None) -> Measurement:
    """The capture's angles on its sample grid; gaps stay gaps."""
    quantum = encoder_quantum(capture)
    return Measurement(angles=capture.angles_rad, sample_index=capture.sample_index,
                       rate_hz=capture.sample_rate_hz, rig=rig or capture.rig,
                       resolution_rad=quantum, capture_id=capture.capture_id)
