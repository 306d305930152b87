"""Service configuration: one validated pydantic model, from a TOML file and HILRIG_* env vars.

Every key has a documented default; deploy/hilrig.example.toml lists them all.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from identify import TABLE_III_TRUTH, FrictionParams, RigParams


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MqttConfig(_Section):
    url: str = Field("mqtt://127.0.0.1:1883", description="broker URL, mqtt://host:port")
    rig_id: str = Field("rig1", pattern=r"^[A-Za-z0-9_-]{1,64}$",
                        description="topic prefix hilrig/<rig_id>/")
    client_id: str | None = Field(None, description="MQTT client id; default hilrig-<rig_id>")
    embedded_fallback: bool = Field(
        True, description="start an embedded broker on 127.0.0.1 if nothing answers at url")
    connect_timeout_s: float = Field(3.0, gt=0, le=60)
    keepalive_s: int = Field(10, ge=2, le=600)


class TriggerConfig(_Section):
    """Free-decay trigger: ARMED -> RECORDING on motion, -> SETTLED when still."""

    motion_threshold_counts: int = Field(
        8, ge=1, description="counts either joint must move from its rest value to start")
    pre_trigger_s: float = Field(0.5, ge=0, le=10, description="history kept before the trigger")
    still_window_s: float = Field(
        0.2, gt=0, le=10, description="window over which a joint counts as still")
    still_band_counts: int = Field(
        2, ge=0, description="max peak-to-peak counts within the still window")
    hold_s: float = Field(1.0, gt=0, le=60, description="both joints still this long ends a capture")
    max_duration_s: float = Field(120.0, gt=0, le=3600, description="hard end of a capture")


class RingConfig(_Section):
    seconds: float = Field(120.0, gt=0, le=3600, description="ring buffer length")


class StorageConfig(_Section):
    directory: Path = Field(Path("hilrig-data"), description="where capture files are written")


class SimConfig(_Section):
    pose_deg: tuple[float, float] = Field((0.0, 120.0), description="release pose: arm, pendulum")
    hold_s: float = Field(1.0, ge=0, description="time held at the pose before release")
    friction: FrictionParams = Field(default_factory=lambda: TABLE_III_TRUTH)
    block_size: int = Field(100, ge=1, le=10_000, description="samples per block")


class IdentifyConfig(_Section):
    method: str = Field("grey-box", description="identification method run on each capture")


class Settings(BaseSettings):
    """The whole service configuration."""

    model_config = SettingsConfigDict(env_prefix="HILRIG_", env_nested_delimiter="__",
                                      extra="forbid")

    sample_rate_hz: float = Field(10_000.0, ge=100, le=100_000)
    counts_per_rev: int = Field(40_000, ge=4, le=2**24)
    rig: RigParams = Field(default_factory=RigParams)
    sim: SimConfig = Field(default_factory=SimConfig)
    mqtt: MqttConfig = Field(default_factory=MqttConfig)
    trigger: TriggerConfig = Field(default_factory=TriggerConfig)
    ring: RingConfig = Field(default_factory=RingConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    identify: IdentifyConfig = Field(default_factory=IdentifyConfig)


class ConfigError(ValueError):
    """A configuration problem, with a one-line message naming the file and the key."""


def load_settings(path: Path | None = None, **overrides: Any) -> Settings:
    """Read a TOML file (if given), then HILRIG_* environment variables, then overrides."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: config file not found") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    data.update(overrides)
    try:
        return Settings(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        raise ConfigError(f"{path or 'settings'}: {where}: {err['msg']}{more}") from None
