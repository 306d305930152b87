"""Between capture files (daq) and what identification takes (identify.Measurement)."""

from __future__ import annotations

import math

from identify import Measurement, RigParams

from ._capture_file import Capture


def measurement_from_capture(capture: Capture, rig: RigParams | None = None) -> Measurement:
    """The capture's angles on its sample grid; gaps stay gaps."""
    quantum = (2 * math.pi / max(capture.counts_per_rev)) if capture.counts is not None else None
    return Measurement(angles=capture.angles_rad, sample_index=capture.sample_index,
                       rate_hz=capture.sample_rate_hz, rig=rig or capture.rig,
                       resolution_rad=quantum, capture_id=capture.capture_id)
