"""IdentificationResult: the one result shape every method returns and the service publishes.

JSON shape (stable, used by scripts and dashboards):
    {"method": ..., "parameters": {"mu_d0": {"value": x, "ci95": [lo, hi] | null,
     "identifiable": true | false, "note": ...}, ...},
     "fit_percent": {"arm": x, "pendulum": y}, "compute_seconds": s,
     "normalized_compute_time": n, ...}
"""

from __future__ import annotations

from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from .model import PARAM_NAMES, FrictionParams, RigParams

if TYPE_CHECKING:
    from .signal import Measurement

RESULT_SCHEMA = "hilrig.result/1"

try:
    _VERSION = version("hilrig")
except PackageNotFoundError:
    _VERSION = "0+unknown"


class ParameterEstimate(BaseModel):
    """One friction parameter: a value with its 95 % interval, or an explicit 'cannot tell'."""

    model_config = ConfigDict(extra="forbid")

    value: float | None = Field(description="estimate; null when the data cannot determine it")
    ci95: tuple[float, float] | None = Field(None, description="95 % interval, or null")
    identifiable: bool
    note: str = ""
    assumed: float | None = Field(
        None, description="value used in simulation when not identifiable")


class IdentificationResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_: str = Field(RESULT_SCHEMA, alias="schema")
    method: str
    capture_id: str | None = None
    parameters: dict[str, ParameterEstimate]
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
    software_version: str = _VERSION
    created_utc: str = Field(
        default_factory=lambda: datetime.now(timezone.utc).isoformat().replace("+00:00", "Z"))

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

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
                       diagnostics: dict[str, Any]) -> IdentificationResult:
        """A method's result on `m`: the capture's own fields (rate, samples, tilt) filled in."""
        return cls(
            method=method, capture_id=m.capture_id, parameters=parameters,
            fit_percent=fit_percent, compute_seconds=compute_seconds,
            normalized_compute_time=normalized_compute_time(compute_seconds, m.duration_s,
                                                            m.rate_hz),
            capture_seconds=m.duration_s, sample_rate_hz=m.rate_hz,
            samples=int(m.angles.shape[0]), lost_samples=m.lost_samples,
            tilt_deg=m.rig.tilt_deg, diagnostics=diagnostics)

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

    def to_json(self, indent: int | None = None) -> str:
        return self.model_dump_json(by_alias=True, indent=indent)


def format_fit(fit: dict[str, float | None]) -> str:
    """'arm 99.9990 %, pendulum 99.9999 %' (n/a where a joint never moved)."""
    return ", ".join(f"{k} {'n/a' if v is None else f'{v:.4f} %'}" for k, v in fit.items())


def fit_percent(simulated: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """Goodness of fit, seed 000 eq. 53, per column: 100 (1 - sum (x^ - x)^2 / sum (x - mean x)^2)."""
    simulated = np.asarray(simulated, dtype=np.float64)
    measured = np.asarray(measured, dtype=np.float64)
    sse = ((simulated - measured) ** 2).sum(axis=0)
    sst = ((measured - measured.mean(axis=0)) ** 2).sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100.0 * (1.0 - sse / sst)


def normalized_compute_time(compute_s: float, capture_s: float, rate_hz: float) -> float:
    """Seed 000 eq. 54: computation time / (experiment time x sampling frequency)."""
    return compute_s / (capture_s * rate_hz) if capture_s > 0 else float("nan")


def rig_summary(rig: RigParams) -> dict[str, float]:
    return {"tilt_deg": rig.tilt_deg, "Fn0": rig.fn0, "Fn1": rig.fn1}
