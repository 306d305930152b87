"""A session plan: what an unattended run of free-decay captures does, validated up front.

A plan is read from TOML (``[session]`` table or top level) or built from CLI flags,
and stored whole in the catalog, so ``hilrig session resume`` needs nothing else.
"""

from __future__ import annotations

import tomllib
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hilrig.identify import DEFAULT_METHOD

from ..acquisition import COVARIATE_NAME
from ..config import first_error, known_method
from ..storage import MIN_POOLED, SessionRow

__all__ = ["PlanError", "SessionPlan", "load_plan", "parse_plan", "stored_plan"]


class PlanError(ValueError):
    """A plan that cannot run; the message is one line naming what and where."""


#: a joint angle of a release pose, degrees from the hanging equilibrium
PoseAngle = Annotated[float, Field(ge=-360.0, le=360.0)]


class SessionPlan(BaseModel):
    """How many captures (or until when), from which poses, released how, identified how.

    Every number must be finite and in its range: a plan comes from files and commands,
    and a session runs unattended on it for hours.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: str = Field("", max_length=200, description="free text shown with the session")
    captures: int | None = Field(None, ge=1, le=100_000, description="captures to complete")
    until_utc: datetime | None = Field(None, description="no new release after this time")
    poses_deg: list[tuple[PoseAngle, PoseAngle]] = Field(
        default_factory=lambda: [(0.0, 120.0)], min_length=1,
        description="release poses (arm, pendulum) cycled capture after capture")
    source: Literal["sim", "serial"] = "sim"
    port: str | None = Field(None, description="serial port of the bridge (source serial)")
    paced: bool = Field(True, description="simulated rig in real time (False: as fast as it can)")
    release: Literal["self", "operator", "latch"] = Field(
        "self", description="self: the simulated rig lets go; operator: a person is asked "
                            "to; latch: the bridge opens its release output (protocol 1.1)")
    pulse_ms: int = Field(0, ge=0, le=10_000,
                          description="latch pulse length; 0: the firmware's default")
    pose_tolerance_deg: float = Field(
        10.0, gt=0, le=180,
        description="the trigger arms only when the rig rests this close to the pose asked for")
    hold_s: float = Field(1.0, ge=0.5, le=600, description="held still at the pose before release")
    capture_timeout_s: float = Field(
        60.0, gt=0, le=86_400, description="release request to motion, else a timeout")
    on_timeout: Literal["continue", "stop"] = "continue"
    max_consecutive_timeouts: int = Field(3, ge=1, le=1000)
    methods: list[str] = Field(default_factory=lambda: [DEFAULT_METHOD], min_length=1)
    max_consecutive_failures: int = Field(
        3, ge=1, le=1000, description="captures failing in a row (file or identification) "
                                      "that stop the session: a read-only or broken archive")
    min_free_mb: float = Field(
        500.0, ge=0, le=1e12,
        description="free disk space (MB) the archive needs before each capture")
    settle_s: float = Field(
        5.0, ge=0, le=3600, description="a suspending condition must stay clear this long")
    suspend_limit_s: float = Field(
        1800.0, gt=0, le=7 * 86_400,
        description="a suspension lasting longer stops the session (its reason kept)")
    max_link_errors_per_s: float = Field(
        2.0, gt=0, le=1e6,
        description="corrupted bridge frames per second that suspend the session")
    max_in_flight: int = Field(
        2, ge=1, le=16, description="captures awaiting identification before a release waits")
    pooled_min_captures: int = Field(
        MIN_POOLED, ge=0, le=100_000,
        description="at its end the session's captures are put together (drift tested, "
                    "`hilrig session identify`) when at least this many were identified; "
                    "0: never")
    pooled_covariate: str | None = Field(
        None, pattern=rf"^{COVARIATE_NAME.pattern}$",
        description="the trend at the session's end in this condition its captures record "
                    "(temperature_c, where the source reads one) instead of session hours")

    @field_validator("methods")
    @classmethod
    def _known_methods(cls, value: list[str]) -> list[str]:
        for method in value:
            known_method(method)
        if len(set(value)) != len(value):
            raise ValueError("a method is listed twice")
        return value

    @field_validator("until_utc")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise ValueError("until_utc needs a time zone (e.g. 2026-11-23T07:00:00Z)")
        return value.astimezone(UTC) if value is not None else None

    @model_validator(mode="after")
    def _bounded(self) -> SessionPlan:
        if self.captures is None and self.until_utc is None:
            raise ValueError("a plan needs captures or until_utc (or both)")
        if self.source == "serial" and not self.port:
            raise ValueError("source serial needs a port")
        if self.source == "serial" and self.release == "self":
            raise ValueError("a physical rig cannot release itself: use release = 'operator' "
                             "or 'latch'")
        if self.source == "sim" and self.release == "latch":
            raise ValueError("release 'latch' needs the serial bridge (source = 'serial')")
        if self.capture_timeout_s <= self.hold_s and self.release in ("self", "latch"):
            raise ValueError(f"capture_timeout_s ({self.capture_timeout_s}) must exceed "
                             f"hold_s ({self.hold_s}): the rig is held that long first")
        return self

    def pose(self, seq: int) -> tuple[float, float]:
        """Pose of capture number seq (1-based), cycling through poses_deg."""
        return self.poses_deg[(seq - 1) % len(self.poses_deg)]


def _one_line(exc: ValidationError, where: str) -> str:
    return f"{where}: {first_error(exc, 'plan')}"


def _fields(data: dict[str, object], where: str) -> dict[str, object]:
    """A plan's fields, from a table `session` if it has one."""
    section = data.get("session")
    if section is None:
        return data
    if not isinstance(section, dict):
        raise PlanError(f"{where}: session must be a table of the plan's fields")
    return {**{k: v for k, v in data.items() if k != "session"}, **section}


def parse_plan(data: dict[str, object], where: str) -> SessionPlan:
    """Validate a plan's fields; PlanError (one line, with `where`) if they are wrong. A
    plan is its fields, or a table ``session`` holding them (a plan file's [session]):
    one shape for a file, `hilrig cmd session/start` and a dashboard."""
    try:
        return SessionPlan.model_validate(_fields(data, where))
    except ValidationError as exc:
        raise PlanError(_one_line(exc, where)) from None


def load_plan(path: Path, overrides: dict[str, object] | None = None) -> SessionPlan:
    """A plan from a TOML file (its [session] table if it has one), then CLI overrides."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PlanError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PlanError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # the parser recurses per level of nested arrays and tables
        raise PlanError(f"{path}: nested too deeply to be a plan") from None
    return parse_plan({**_fields(data, str(path)), **(overrides or {})}, str(path))


def stored_plan(session: SessionRow) -> SessionPlan:
    """A session's plan as the catalog keeps it; PlanError (one line) if it no longer holds."""
    try:
        return SessionPlan.model_validate_json(session.plan_json)
    except ValidationError as exc:
        raise PlanError(_one_line(exc, f"session {session.session_id}: its stored plan")
                        ) from None
