"""What users give hilrig: settings (TOML file, HILRIG_* environment) and one-line errors.

The bottom layer of `daq`: every other subpackage may import it, it imports none of them.
"""

from ._settings import (
    ConfigError,
    IdentifyConfig,
    MqttConfig,
    RingConfig,
    Settings,
    SimConfig,
    StorageConfig,
    TriggerConfig,
    load_settings,
)
from ._validation import first_error, one_line, where

__all__ = [
    "ConfigError", "IdentifyConfig", "MqttConfig", "RingConfig", "Settings",
    "SimConfig", "StorageConfig", "TriggerConfig", "first_error", "load_settings", "one_line",
    "where",
]
