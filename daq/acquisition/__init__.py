"""Acquisition: the engine that runs a source's stream through a ring buffer and a
free-decay trigger and hands out captures, with what it needs (ring, trigger, link
health, telemetry decimation) and what it hands out (events, `Capture`).

Imports neither storage, MQTT nor the runtime: it is tested with a source alone.
"""

from ._capture import (
    COVARIATE_NAME,
    MAX_ANGLE_RAD,
    MAX_RATE_HZ,
    MIN_RATE_HZ,
    Capture,
    TriggerInfo,
    capture_resolution,
    capture_summary,
    checked_covariates,
    covariate_value,
    new_capture_id,
    to_measurement,
)
from ._engine import AcquisitionEngine
from ._events import (
    BlockSeen,
    CaptureAborted,
    CaptureProgress,
    CaptureStarted,
    CaptureTaken,
    EngineEvent,
    LinkChanged,
    Telemetry,
    TriggerArmed,
)
from ._link import LinkWatch, error_counts, grown, summary_line
from ._rig_kinds import ChainKind, FurutaKind, RigKind, kind_of, to_record
from ._ring import RingBuffer
from ._telemetry import TelemetryDecimator
from ._trigger import (
    Armed,
    FreeDecayTrigger,
    Settled,
    Triggered,
    TriggerEvent,
    TriggerState,
    fit_release,
)

__all__ = [
    "ChainKind", "FurutaKind", "RigKind", "kind_of", "to_record",
    "COVARIATE_NAME", "MAX_ANGLE_RAD", "MAX_RATE_HZ", "MIN_RATE_HZ", "AcquisitionEngine",
    "Armed", "BlockSeen",
    "Capture", "CaptureAborted", "CaptureProgress", "CaptureStarted", "CaptureTaken",
    "EngineEvent", "FreeDecayTrigger", "LinkChanged", "LinkWatch", "RingBuffer", "Settled",
    "Telemetry", "TelemetryDecimator", "TriggerArmed", "TriggerEvent", "TriggerInfo",
    "TriggerState", "Triggered", "capture_resolution", "capture_summary", "checked_covariates",
    "covariate_value", "error_counts", "fit_release", "grown", "new_capture_id", "summary_line",
    "to_measurement",
]
