"""IdentificationResult: the one result shape every method returns and the service publishes.

JSON shape (stable, used by scripts and dashboards):
    {"method": ..., "parameters": {"mu_d0": {"value": x, "ci95": [lo, hi] | null,
     "identifiable": true | false, "note": ...}, ...},
     "rig": {"m2_l2": {...the same shape...}, ...} (methods that fit the rig; else {}),
     "fit_percent": {"arm": x, "pendulum": y}, "compute_seconds": s,
     "normalized_compute_time": n, ...}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .._time import utc_now
from .._version import SOFTWARE_VERSION
from ..model import PARAM_NAMES, FrictionParams
from ._frames import parameters_frame, response_frame
from ._metrics import normalized_compute_time
from ._response import Response
from ._summary import summary_html, summary_line, summary_text

if TYPE_CHECKING:
    from ..signal import Measurement

RESULT_SCHEMA = "hilrig.result/1"


class ParameterEstimate(BaseModel):
    """One friction parameter: a value with its 95 % interval, or an explicit 'cannot tell'."""

    model_config = ConfigDict(extra="forbid")

    value: float | None = Field(description="estimate; null when the data cannot determine it")
    ci95: tuple[float, float] | None = Field(None, description="95 % interval, or null")
    identifiable: bool
    note: str = ""
    assumed: float | None = Field(
        None, description="value used in simulation when not identifiable")


# No class docstring and no new field descriptions here: they would change the JSON Schema
# generated from this model (deploy/schemas/hilrig.result.v1.schema.json, the contract).
class IdentificationResult(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_: str = Field(RESULT_SCHEMA, alias="schema")
    method: str
    rig_kind: str = "furuta"
    capture_id: str | None = None
    parameters: dict[str, ParameterEstimate]
    rig: dict[str, ParameterEstimate] = Field(
        default_factory=dict,
        description="rig quantities identified with the friction (unit first in each note), "
                    "and those a free decay cannot separate; empty when the method fits none")
    fit_percent: dict[str, float | None] = Field(
        description="seed 000 eq. 53 per joint: arm, pendulum; null where a joint never moved")
    compute_seconds: float
    normalized_compute_time: float = Field(
        description="seed 000 eq. 54: compute s / (capture s x sample rate)")
    capture_seconds: float
    sample_rate_hz: float
    samples: int
    lost_samples: int = 0
    tilt_deg: float
    diagnostics: dict[str, Any] = Field(default_factory=dict)
    response: Response | None = Field(
        None, description="measured and simulated angles per joint, decimated for a plot; "
                          "null when the method simulates none")
    software_version: str = SOFTWARE_VERSION
    created_utc: str = Field(default_factory=utc_now)  # ISO 8601, UTC, milliseconds and Z

    @field_validator("fit_percent", mode="before")
    @classmethod
    def _undefined_fit_is_null(cls, v: dict[str, Any]) -> dict[str, Any]:
        # a joint that never moved has no variance to explain: its fit is undefined
        return {k: (None if isinstance(x, float) and not np.isfinite(x) else x)
                for k, x in v.items()}

    @classmethod
    def of_measurement(cls, m: Measurement, *, method: str,
                       parameters: dict[str, ParameterEstimate],
                       fit_percent: dict[str, float | None], compute_seconds: float,
                       diagnostics: dict[str, Any],
                       rig: dict[str, ParameterEstimate] | None = None,
                       response: Response | None = None) -> IdentificationResult:
        """A method's result on `m`: the capture's own fields (rate, samples, tilt) filled in."""
        return cls(
            method=method, capture_id=m.capture_id, parameters=parameters,
            fit_percent=fit_percent, compute_seconds=compute_seconds,
            normalized_compute_time=normalized_compute_time(compute_seconds, m.duration_s,
                                                            m.rate_hz),
            capture_seconds=m.duration_s, sample_rate_hz=m.rate_hz,
            samples=int(m.angles.shape[0]), lost_samples=m.lost_samples,
            tilt_deg=m.rig.tilt_deg, diagnostics=diagnostics, rig=rig or {},
            response=response)

    def friction_params(self) -> FrictionParams:
        """The parameter set to simulate: estimates, and assumed values where not identifiable."""
        vals = []
        for name in PARAM_NAMES:
            p = self.parameters[name]
            v = p.value if p.value is not None else p.assumed
            if v is None:
                raise ValueError(f"parameter {name} has neither a value nor an assumed value")
            vals.append(v)
        return FrictionParams.from_array(vals)

    def key_parameters(self) -> list[str]:
        """The parameters a one-line summary shows: the Furuta rig's Coulomb and viscous
        coefficients, a chain rig's Coulomb, viscous and drag torques."""
        if self.rig_kind == "furuta":
            return [n for n in ("mu_d0", "mu_v0", "mu_d1", "mu_v1") if n in self.parameters]
        return [n for n in self.parameters if n.startswith(("Fc", "b", "cd"))]

    def joint_fits(self) -> tuple[float | None, float | None]:
        """The fit of the first two joints (arm and pendulum, or theta1 and theta2)."""
        fits = list(self.fit_percent.values()) + [None, None]
        return fits[0], fits[1]

    def summary(self) -> str:
        """The table `hilrig identify` prints: estimates with intervals, fit, warnings."""
        return summary_text(self)

    def __repr__(self) -> str:
        # the whole model (response arrays included) is ~50 kB: a notebook shows this line
        return f"<IdentificationResult {summary_line(self)}>"

    def __str__(self) -> str:
        return summary_text(self)

    def _repr_html_(self) -> str:
        return summary_html(self)

    def to_dataframe(self, what: Literal["parameters", "response"] = "parameters") -> Any:
        """A pandas DataFrame (the `notebook` extra): "parameters", one row per friction
        parameter, rig quantity and extra term with value, ci95_lo, ci95_hi,
        identifiable, assumed, note; or "response", measured and simulated angles (rad)
        per joint indexed by time (s)."""
        if what == "parameters":
            return parameters_frame(self)
        if what == "response":
            return response_frame(self)
        raise ValueError(f"to_dataframe: what must be 'parameters' or 'response', got {what!r}")

    def to_json(self, indent: int | None = None) -> str:
        """The result as JSON, with the field names of the documented shape ("schema")."""
        return self.model_dump_json(by_alias=True, indent=indent)
