"""Acquisition service: ring buffer, trigger, capture files, MQTT publication, config, CLI."""

from ._capture_file import (
    Capture,
    CaptureFileError,
    TriggerInfo,
    read_capture,
    read_capture_csv,
    read_capture_h5,
    write_capture_csv,
    write_capture_h5,
)
from ._config import ConfigError, MqttConfig, Settings, TriggerConfig, load_settings
from ._convert import measurement_from_capture
from ._mqtt import Publisher, monitor, resolve_broker
from ._ring import RingBuffer
from ._service import CaptureOutcome, RigService, ServiceReport
from ._trigger import Armed, FreeDecayTrigger, Settled, Triggered, TriggerState
from ._version import SOFTWARE_VERSION

__all__ = [
    "SOFTWARE_VERSION", "Armed", "Capture", "CaptureFileError", "CaptureOutcome", "ConfigError",
    "FreeDecayTrigger", "MqttConfig", "Publisher", "RigService", "RingBuffer", "ServiceReport",
    "Settings", "Settled", "TriggerConfig", "TriggerInfo", "TriggerState", "Triggered",
    "load_settings", "measurement_from_capture", "monitor", "read_capture", "read_capture_csv",
    "read_capture_h5", "resolve_broker", "write_capture_csv", "write_capture_h5",
]
