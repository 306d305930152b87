"""SessionResult: what several captures of one rig say together, and whether its friction
drifted between them (identify.session).

JSON shape (hilrig.session-result/1; stable, used by scripts and dashboards):
    {"schema": ..., "method": "pooled", "capture_method": "shooting", "session_id": ...,
     "rig_kind": "furuta", "covariate": "hours",
     "verdict": "no drift" | "drift" | "captures disagree beyond a trend" | "not tested",
     "summary": one sentence,
     "parameters": {"mu_d0": {value, ci95, identifiable, note, assumed}, ...} (the
       session's friction at the covariate's mean),
     "rig": {...} (the pooled rig quantities),
     "drift": {"level": 0.01, "rule": ..., "slopes": {"mu_v1": {...}}, "standouts": [...],
               "without_standouts": verdict | null},
     "scatter": {"mu_v1": relative scatter between captures beyond their intervals, ...},
     "captures": [{"capture_id", "x", "included", "reason", "levels": {...},
                   "residual_over_noise": {...}}, ...],
     "compute_seconds": s, ...}
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .._time import utc_now
from .._version import SOFTWARE_VERSION
from ._result import ParameterEstimate
from ._session_summary import session_summary_text

__all__ = ["SESSION_RESULT_SCHEMA", "VERDICTS", "CaptureInSession", "DriftReport",
           "LevelSlope", "SessionResult", "Standout"]

SESSION_RESULT_SCHEMA = "hilrig.session-result/1"
#: what the session's friction did; "not tested": fewer than 3 captures fit to pool
VERDICTS = ("no drift", "drift", "captures disagree beyond a trend", "not tested")


class LevelSlope(BaseModel):
    """A friction level's straight-line trend in the covariate."""

    model_config = ConfigDict(extra="forbid")

    per_unit: float = Field(description="change per unit of the covariate (per hour), as a "
                                        "fraction of the level at the covariate's mean")
    df: int = Field(description="degrees of freedom of its t test (captures - 2)")
    ci95: tuple[float, float]
    over_session: float = Field(description="the change from the first capture to the last, "
                                            "as a fraction of the level at the mean")
    p_value: float
    moved: bool


class Standout(BaseModel):
    model_config = ConfigDict(extra="forbid")

    capture_id: str
    p_value: float = Field(description="the smallest over its levels, before the correction "
                                       "for the number of captures and levels")
    departure: dict[str, float] = Field(description="each level's departure from the line "
                                                    "through the other captures, fraction")


class DriftReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    level: float = Field(description="the false alarm rate each family of tests allows")
    rule: str = ""
    slopes: dict[str, LevelSlope] = Field(default_factory=dict)
    standouts: list[Standout] = Field(default_factory=list)
    without_standouts: str | None = Field(
        None, description="the verdict on the captures left when those that stand out are "
                          "set aside")


class CaptureInSession(BaseModel):
    model_config = ConfigDict(extra="forbid")

    capture_id: str
    x: float = Field(description="the covariate at the capture (session hours by default)")
    included: bool
    reason: str = ""
    levels: dict[str, ParameterEstimate] = Field(
        default_factory=dict, description="the capture's own friction levels, rig shared "
                                          "(the per-capture model)")
    residual_over_noise: dict[str, float] = Field(default_factory=dict)


class SessionResult(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(SESSION_RESULT_SCHEMA, alias="schema")
    method: str = "pooled"
    capture_method: str = Field("shooting", description="the method each capture was "
                                                        "identified by")
    session_id: str | None = None
    rig_kind: str = "furuta"
    covariate: str = "hours"
    verdict: Literal["no drift", "drift", "captures disagree beyond a trend", "not tested"]
    summary: str
    parameters: dict[str, ParameterEstimate]
    rig: dict[str, ParameterEstimate] = Field(default_factory=dict)
    drift: DriftReport
    captures: list[CaptureInSession]
    scatter: dict[str, float] = Field(
        default_factory=dict, description="per level: the captures' scatter beyond their own "
                                          "intervals, relative (the model's error between "
                                          "releases)")
    compute_seconds: float
    software_version: str = SOFTWARE_VERSION
    created_utc: str = Field(default_factory=utc_now)

    def __str__(self) -> str:
        return session_summary_text(self)

    def __repr__(self) -> str:
        return f"<SessionResult {self.session_id or '-'}: {self.summary}>"

    def to_json(self, indent: int | None = None) -> str:
        """The hilrig.session-result/1 JSON, with the documented field names ("schema")."""
        return self.model_dump_json(by_alias=True, indent=indent)
