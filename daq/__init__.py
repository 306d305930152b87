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
from ._catalog import Catalog, CatalogError
from ._config import ConfigError, MqttConfig, Settings, TriggerConfig, load_settings
from ._convert import measurement_from_capture
from ._mqtt import Publisher, monitor, resolve_broker
from ._plan import PlanError, SessionPlan, load_plan
from ._release import LatchReleaser, OperatorReleaser, Releaser, SimReleaser
from ._ring import RingBuffer
from ._service import CaptureOutcome, RigService, ServiceReport
from ._session import SessionRunner
from ._trigger import Armed, FreeDecayTrigger, Settled, Triggered, TriggerState
from ._version import SOFTWARE_VERSION

__all__ = [
    "SOFTWARE_VERSION", "Armed", "Capture", "CaptureFileError", "CaptureOutcome", "Catalog",
    "CatalogError", "ConfigError", "FreeDecayTrigger", "LatchReleaser", "MqttConfig", "OperatorReleaser",
    "PlanError", "Publisher", "Releaser", "RigService", "RingBuffer", "ServiceReport",
    "SessionPlan", "SessionRunner", "Settings", "Settled", "SimReleaser", "TriggerConfig",
    "TriggerInfo", "TriggerState", "Triggered", "load_plan", "load_settings",
    "measurement_from_capture", "monitor", "read_capture", "read_capture_csv", "read_capture_h5", "resolve_broker", "write_capture_csv", "write_capture_h5",
]
