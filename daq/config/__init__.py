"""What users give hilrig: settings (TOML file, HILRIG_* environment) and one-line errors.

The bottom layer of `daq`: every other subpackage may import it, it imports none of them.
"""

from ._json import MAX_DOCUMENT_NESTING, MAX_NESTING, json_nesting, loads_bounded
from ._methods import known_method
from ._rig_kind import RIG_KIND_KEYS, RigKindConfig
from ._settings import (
    ClusterConfig,
    ConfigError,
    DashboardConfig,
    IdentifyConfig,
    MqttConfig,
    RingConfig,
    Settings,
    SimConfig,
    StorageConfig,
    TriggerConfig,
    load_settings,
)
from ._small_files import read_small_file
from ._validation import first_error, one_line, where

__all__ = [
    "RIG_KIND_KEYS", "RigKindConfig",
    "MAX_DOCUMENT_NESTING", "MAX_NESTING", "ClusterConfig", "ConfigError", "DashboardConfig",
    "IdentifyConfig",
    "MqttConfig",
    "RingConfig", "Settings", "SimConfig", "StorageConfig", "TriggerConfig", "first_error",
    "json_nesting", "known_method", "load_settings", "loads_bounded", "one_line",
    "read_small_file", "where",
]
