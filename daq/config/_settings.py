"""Service configuration: one validated pydantic model, from a TOML file and HILRIG_* env vars.

Every key has a documented default; deploy/hilrig.example.toml lists them all.
"""

from __future__ import annotations

import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from hilrig.identify import DEFAULT_METHOD, FrictionParams, RigParams
from hilrig.identify.model import Realism
from hilrig.identify.reference import TABLE_III_TRUTH

from ._methods import known_method
from ._rig_kind import RIG_KIND_KEYS, RigKindConfig
from ._small_files import read_small_file
from ._validation import first_error


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class MqttConfig(_Section):
    url: str = Field("mqtt://127.0.0.1:1883", description="broker URL, mqtt://host:port")
    rig_id: str = Field("rig1", pattern=r"^[A-Za-z0-9_-]{1,64}$",
                        description="topic prefix hilrig/<rig_id>/")
    client_id: str | None = Field(None, description="MQTT client id; default hilrig-<rig_id>")
    embedded_fallback: bool = Field(
        True, description="start an embedded broker on 127.0.0.1 if nothing answers at url")
    connect_timeout_s: float = Field(3.0, gt=0, le=60)
    keepalive_s: int = Field(10, ge=2, le=600)
    username: str | None = Field(None, description="broker user (with password or password_file)")
    password: SecretStr | None = Field(None, description="never logged; prefer password_file")
    password_file: Path | None = Field(
        None, description="file holding the password (first line), e.g. a systemd credential")
    tls: bool = Field(False, description="TLS to the broker (implied by an mqtts:// url)")
    tls_ca_file: Path | None = Field(None, description="CA bundle that signed the broker's "
                                                         "certificate (default: the system's)")
    tls_cert_file: Path | None = Field(None, description="client certificate (optional)")
    tls_key_file: Path | None = Field(None, description="its key")
    telemetry_hz: float = Field(
        100.0, ge=0, le=100, description="live angles and velocities on telemetry; 0: none")
    retained_sessions: int = Field(
        10, ge=1, le=10_000,
        description="sessions whose retained topics (progress, capture records, overlays) "
                    "the broker keeps; a new session clears those of older ones")


    def secret(self) -> str | None:
        """The password, from password or password_file (read when connecting)."""
        if self.password is not None:
            return self.password.get_secret_value()
        if self.password_file is not None:
            try:
                return self.password_file.read_text(encoding="utf-8").splitlines()[0]
            except (OSError, IndexError) as exc:
                raise ConnectionError(f"mqtt.password_file {self.password_file}: cannot read "
                                      f"the password ({getattr(exc, 'strerror', None) or 'empty'})"
                                      ) from None
        return None


class TriggerConfig(_Section):
    """Free-decay trigger: ARMED -> RECORDING on motion, -> SETTLED when still."""

    motion_threshold_counts: int = Field(
        8, ge=1, description="counts either joint must move from its rest value to start")
    pre_trigger_s: float = Field(0.5, ge=0, le=10, description="history kept before the trigger")
    still_window_s: float = Field(
        0.2, gt=0, le=10, description="window over which a joint counts as still")
    still_band_counts: int = Field(
        2, ge=0, description="max peak-to-peak counts within the still window")
    hold_s: float = Field(1.0, gt=0, le=60,
                          description="both joints still this long ends a capture")
    max_duration_s: float = Field(
        110.0, gt=0, le=3600,
        description="hard end of a capture; with pre_trigger_s it must fit in the ring")
    bridge_gap_s: float = Field(
        0.01, ge=0, le=1,
        description="the trigger (only) sees a gap this short as the last sample held, so a "
                    "lossy link can still settle; longer gaps restart every window")


class RingConfig(_Section):
    seconds: float = Field(120.0, gt=0, le=3600, description="ring buffer length")


class StorageConfig(_Section):
    directory: Path = Field(Path("hilrig-data"), description="where capture files are written")


class SimConfig(_Section):
    pose_deg: tuple[float, float] = Field((0.0, 120.0), description="release pose: arm, pendulum")
    hold_s: float = Field(1.0, ge=0, description="time held at the pose before release")
    friction: FrictionParams = Field(
        default_factory=lambda: TABLE_III_TRUTH,
        description="the simulated rig's true friction; keys left out keep the seed's Table III")
    block_size: int = Field(100, ge=1, le=10_000, description="samples per block")
    realism: Realism = Field(default_factory=Realism,
                             description="how the simulated rig departs from the nominal one")


    @field_validator("friction", mode="before")
    @classmethod
    def _table_iii_where_unstated(cls, v: Any) -> Any:
        # the simulator's truth, not a guess of any estimator: a partial table edits it
        return {**TABLE_III_TRUTH.model_dump(), **v} if isinstance(v, dict) else v


class IdentifyConfig(_Section):
    method: str = Field(DEFAULT_METHOD,
                        description="identification method run on each capture (and the "
                                    "methods of a session whose plan names none)")
    offload: bool = Field(
        False, description="send each capture as a job to a ready `hilrig worker` instead of "
                           "identifying it here (needs an MQTT v5 broker)")
    job_timeout_s: float = Field(
        600.0, gt=0, le=86_400,
        description="a job its worker leaves unanswered this long goes to another worker")
    worker_wait_s: float = Field(
        30.0, gt=0, le=86_400,
        description="a job no worker has taken this long is identified here instead "
                    "(with local_fallback)")
    local_fallback: bool = Field(
        True, description="identify here a job no worker has taken within worker_wait_s; "
                          "false: wait for a worker however long")

    @field_validator("method")
    @classmethod
    def _known_method(cls, value: str) -> str:
        # checked when the config is read, not once a capture is taken and waits for it
        return known_method(value)


class ClusterConfig(_Section):
    """A batch cluster for campaigns (`--cluster slurm` or `--cluster pbs`), through
    dask-jobqueue: each job starts one Dask worker process per core, one thread each (a
    fit is CPU-bound and holds the interpreter)."""

    kind: Literal["slurm", "pbs"] = Field("slurm", description="the cluster's job scheduler")
    queue: str | None = Field(None, description="partition (SLURM) or queue (PBS)")
    account: str | None = Field(None, description="the account jobs are charged to")
    cores: int = Field(1, ge=1, le=1024, description="cores per job")
    memory: str = Field("4GB", pattern=r"^\d+(\.\d+)?\s*[KMGT]i?B$",
                        description="memory per job, e.g. 4GB")
    walltime: str = Field("01:00:00", pattern=r"^(\d+-)?\d{1,3}:\d{2}:\d{2}$",
                          description="each job's time limit, [D-]HH:MM:SS")
    jobs: int = Field(4, ge=1, le=10_000, description="how many jobs a campaign asks for")
    local_directory: str = Field(
        "$TMPDIR", description="node-local scratch for each worker (its spill files and "
                               "numba cache)")
    job_script_prologue: list[str] = Field(
        default_factory=list, description="shell lines run before each worker starts, e.g. "
                                          "'module load python/3.11'")
    shared_storage: bool = Field(
        False, description="the workers see the archive's files at the same paths; false: "
                           "each capture's file is shipped with its task")


class DashboardConfig(_Section):
    """The live page (`hilrig dashboard`, or --http on run, serve and session start)."""

    http: str = Field("127.0.0.1:8080", pattern=r"^[^\s/]+:\d{1,5}$",
                      description="HOST:PORT the page is served on")
    ws_url: str | None = Field(
        None, pattern=r"^wss?://[^\s]+$",
        description="the broker's MQTT-over-WebSockets url for browsers; default: the page's "
                    "own host, ws port 9001 (wss 8081 with mqtt.tls), or the embedded broker's")
    login: bool | None = Field(
        None, description="the page asks for a broker user and password; default: when "
                          "mqtt.username is set (a secured broker)")
    embedded_role: Literal["operator", "dashboard"] = Field(
        "operator", description="with the embedded broker, what the page this process serves "
                                "may do: operator (read, and command with a confirmation) "
                                "or dashboard (read only); no other page may connect")


class Settings(BaseSettings):
    """The whole service configuration."""

    model_config = SettingsConfigDict(env_prefix="HILRIG_", env_nested_delimiter="__",
                                      extra="forbid", allow_inf_nan=False)

    sample_rate_hz: float = Field(10_000.0, ge=100, le=100_000)
    counts_per_rev: int = Field(40_000, ge=4, le=2**24)
    rig: RigParams = Field(default_factory=RigParams)
    rig_kind: RigKindConfig = Field(
        default_factory=RigKindConfig,
        description="which rig the encoders are on: the [rig] keys kind, channel, "
                    "joint_angles, zero, plane_tilt_deg and friction")
    sim: SimConfig = Field(default_factory=SimConfig)
    mqtt: MqttConfig = Field(default_factory=MqttConfig)
    trigger: TriggerConfig = Field(default_factory=TriggerConfig)
    ring: RingConfig = Field(default_factory=RingConfig)
    storage: StorageConfig = Field(default_factory=StorageConfig)
    identify: IdentifyConfig = Field(default_factory=IdentifyConfig)
    dashboard: DashboardConfig = Field(default_factory=DashboardConfig)
    cluster: ClusterConfig = Field(default_factory=ClusterConfig)

    @model_validator(mode="before")
    @classmethod
    def _rig_kind_keys_from_rig(cls, data: Any) -> Any:
        # one [rig] table for the lab: the kind's keys go to rig_kind, the rest to RigParams
        if isinstance(data, dict) and isinstance(data.get("rig"), dict):
            rig = dict(data["rig"])
            moved = {k: rig.pop(k) for k in RIG_KIND_KEYS if k in rig}
            if moved:
                data = {**data, "rig": rig,
                        "rig_kind": {**dict(data.get("rig_kind") or {}), **moved}}
        return data

    @model_validator(mode="after")
    def _ring_holds_a_whole_capture(self) -> Settings:
        # the capture is cut from the ring when it ends: a longer one would lose its start
        longest = self.trigger.pre_trigger_s + self.trigger.max_duration_s
        if self.ring.seconds < longest + 1.0:
            raise ValueError(f"ring.seconds ({self.ring.seconds:g}) must exceed "
                             "trigger.pre_trigger_s + trigger.max_duration_s + 1 s "
                             f"({longest + 1:g})")
        return self

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # explicit overrides, then HILRIG_* environment, then the TOML file, then defaults
        return (init_settings, env_settings, _TomlSource(settings_cls))


# read only, never mutated: an empty mapping is a safe default
_TOML_DATA: ContextVar[dict[str, Any]] = ContextVar("hilrig_toml", default={})  # noqa: B039


class _TomlSource(PydanticBaseSettingsSource):
    """The already-parsed TOML file of load_settings, as the lowest-priority source."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return _TOML_DATA.get().get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_TOML_DATA.get())


#: a config file's size limit: the example documenting every key is 8 kB
MAX_CONFIG_BYTES = 1 << 20


class ConfigError(ValueError):
    """A configuration problem, with a one-line message naming the file and the key."""


def load_settings(path: Path | None = None, **overrides: Any) -> Settings:
    """Settings from defaults < TOML file < HILRIG_* environment variables < overrides."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            raw = read_small_file(path, MAX_CONFIG_BYTES)
        except FileNotFoundError:
            raise ConfigError(f"{path}: config file not found") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the config file ({exc.strerror})") from None
        except ValueError as exc:  # a FIFO, a device, a file far larger than any config
            raise ConfigError(f"{path}: cannot read the config file ({exc})") from None
        try:
            data = tomllib.loads(raw.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        except RecursionError:  # the parser recurses per level of nested arrays and tables
            raise ConfigError(f"{path}: nested too deeply to be a configuration") from None
    token = _TOML_DATA.set(data)
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        more = f" (and {len(exc.errors()) - 1} more)" if len(exc.errors()) > 1 else ""
        # the kind's keys are written in [rig]: name them there
        text = first_error(exc, "(top level)").replace("rig_kind.", "rig.", 1)
        raise ConfigError(f"{path or 'settings'}: {text}{more}") from None
    finally:
        _TOML_DATA.reset(token)
