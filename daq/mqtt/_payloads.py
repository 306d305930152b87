"""The MQTT contract's payloads: one pydantic model per schema, the source of deploy/schemas/.

Every payload is one flat JSON object with the envelope: "schema" (name/major version),
"rig_id", "time" (UTC ISO 8601 with Z, when it was published), "software_version", and
the ids that join it to the catalog (capture_id, session_id, method, msg_id). Payloads
may gain keys within a major version; consumers ignore keys they do not know, so every
schema allows additional properties. `python -m hilrig.daq.mqtt.schemas` writes the JSON Schemas.
"""

from __future__ import annotations

import json
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hilrig.drivers import SourceInfo
from hilrig.identify import (
    SOFTWARE_VERSION,
    IdentificationResult,
    ParameterEstimate,
    SessionResult,
    utc_now,
)

__all__ = [
    "CapturePayload", "CaptureRecordPayload", "CommandReply", "EventPayload", "OverlayPayload",
    "PAYLOADS", "ResultPayload", "SessionResultPayload",
    "SessionPayload", "State", "StatusPayload", "TelemetryPayload", "dump_json", "jsonable",
]

State = Literal["online", "capturing", "idle", "suspended", "offline"]


def jsonable(value: Any) -> Any:
    """Plain JSON values from dicts, sequences and numpy scalars/arrays; NaN/inf -> None."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalar or array
        return jsonable(value.tolist())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    raise TypeError(f"cannot publish a {type(value).__name__} as JSON: {value!r:.80}")


class Envelope(BaseModel):
    """Fields every payload carries; ``to_json()`` gives the bytes published."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="allow")

    schema_id: str = Field(alias="schema", description="payload schema name / major version")
    rig_id: str = Field(description="the rig: topics are under hilrig/<rig_id>/")
    time: str = Field(default_factory=utc_now, description="publication time, UTC ISO 8601, Z")
    software_version: str = Field(SOFTWARE_VERSION, description="hilrig version that made it")
    msg_id: str | None = Field(
        None, description="durable messages: the same id on a redelivery of the same message")

    def to_json(self) -> bytes:
        return dump_json(self)


def dump_json(model: BaseModel) -> bytes:
    """Compact JSON; top-level keys without a value are left out (nested nulls are kept)."""
    body = jsonable(model.model_dump(by_alias=True))
    return json.dumps({k: v for k, v in body.items() if v is not None},
                      separators=(",", ":"), allow_nan=False).encode()


class StatusPayload(Envelope):
    """``status`` (retained, QoS 1): what the service is doing; the last will sets offline."""

    schema_id: Literal["hilrig.status/1"] = Field("hilrig.status/1", alias="schema")
    state: State
    source: SourceInfo | None = Field(None, description="the sample source (bridge identity)")
    protocol_version: str | None = Field(None, description="bridge protocol major.minor")
    link: dict[str, Any] | None = Field(None, description="source health counters")
    session_id: str | None = None
    reason: str | None = Field(None, description="why suspended (or offline)")


class CapturePayload(Envelope):
    """``capture/<capture_id>`` (QoS 1): a capture's lifecycle documents.

    document "start" when the release is detected, "progress" about once a second
    while recording, "stop" when the capture is over, with its exit status and
    acquisition statistics.
    """

    schema_id: Literal["hilrig.capture/1"] = Field("hilrig.capture/1", alias="schema")
    capture_id: str
    document: Literal["start", "progress", "stop"]
    session_id: str | None = None
    seq: int | None = Field(None, description="the planned capture number in its session")
    exit_status: Literal["success", "failed", "aborted", "interrupted"] | None = Field(
        None, description="stop documents: how the capture ended")
    reason: str | None = Field(None, description="stop documents that did not succeed: why")
    samples: int | None = None
    lost_samples: int | None = None
    gaps: int | None = None
    duration_s: float | None = None
    sample_rate_hz: float | None = None
    effective_rate_hz: float | None = None
    trigger_index: int | None = None
    onset_index: int | None = None
    release_estimate: float | None = None
    trigger_latency_ms: float | None = None
    end_reason: str | None = None
    file: str | None = None


class ResultPayload(IdentificationResult):
    """``result/<capture_id>/<method>`` (QoS 1) and ``result/latest`` (retained)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    rig_id: str
    time: str = Field(default_factory=utc_now)
    msg_id: str | None = None


class SessionResultPayload(SessionResult):
    """``session/<session_id>/result`` (retained, QoS 1): the session's captures put
    together, its friction's drift tested (identify.session)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    rig_id: str
    time: str = Field(default_factory=utc_now)


class SessionPayload(Envelope):
    """``session/<session_id>`` (retained, QoS 1): a session's progress."""

    schema_id: Literal["hilrig.session/1"] = Field("hilrig.session/1", alias="schema")
    session_id: str
    state: Literal["running", "waiting_for_release", "suspended", "done", "stopped", "failed"]
    name: str = ""
    planned: int | None = None
    done: int = 0
    failed: int = 0
    timeout: int = 0
    interrupted: int = 0
    in_flight: int = 0
    current_seq: int | None = None
    elapsed_s: float | None = None
    eta_s: float | None = None
    rss_mb: float | None = None
    until_utc: str | None = None
    reason: str | None = None
    prompt: str | None = Field(None, description="what an operator must do now")


class CampaignPayload(Envelope):
    """``campaign/<campaign_id>`` (retained, QoS 1): a re-identification campaign's progress."""

    schema_id: Literal["hilrig.campaign/1"] = Field("hilrig.campaign/1", alias="schema")
    campaign_id: str
    state: Literal["running", "done", "interrupted", "failed"]
    total: int = Field(description="tasks (captures x methods) the campaign selects")
    finished: int = Field(description="tasks done or failed, earlier runs included")
    done: int = Field(0, description="tasks this run kept a result of")
    failed: int = Field(0, description="tasks this run found no result for (each with its "
                                       "reason in the catalog)")
    earlier: int = Field(0, description="tasks an earlier run of the same campaign finished")
    rate_per_min: float = 0.0
    eta_s: float | None = None
    methods: list[str] = Field(default_factory=list)
    cluster: str | None = Field(None, description="where it runs: local:N, a scheduler's "
                                                  "address, slurm, pbs")


class ResultSummary(BaseModel):
    """A result as a capture record holds it: what a dashboard's table and trend need."""

    model_config = ConfigDict(extra="allow")

    rig_kind: str = "furuta"
    created_utc: str | None = None
    compute_seconds: float | None = None
    fit_percent: dict[str, float | None] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list, description="adequacy warnings")
    parameters: dict[str, ParameterEstimate] = Field(default_factory=dict)
    rig: dict[str, ParameterEstimate] = Field(default_factory=dict)
    overlay: bool = Field(False, description="a response is retained on "
                                             "result/<capture_id>/<method>/overlay")


class CaptureRecordPayload(Envelope):
    """``session/<session_id>/capture/<capture_id>`` (retained, QoS 1): one capture of a
    session as the catalog holds it, with its results; a dashboard opened late reads the
    whole session from these (added in contract 1.1)."""

    schema_id: Literal["hilrig.capture_record/1"] = Field("hilrig.capture_record/1",
                                                          alias="schema")
    session_id: str
    capture_id: str
    seq: int | None = None
    status: str = Field(description="recording, captured (identifying), done, failed, "
                                    "timeout, interrupted, aborted")
    reason: str | None = Field(None, description="why it failed, timed out or was aborted")
    started_utc: str | None = None
    ended_utc: str | None = None
    duration_s: float | None = None
    samples: int | None = None
    lost_samples: int | None = None
    gaps: int | None = None
    results: dict[str, ResultSummary] = Field(default_factory=dict, description="by method")


class OverlayPayload(Envelope):
    """``result/<capture_id>/<method>/overlay`` (retained, QoS 1): measured against
    identified angles, decimated for a plot (added in contract 1.1)."""

    schema_id: Literal["hilrig.overlay/1"] = Field("hilrig.overlay/1", alias="schema")
    capture_id: str
    method: str
    session_id: str | None = None
    unit: str = "rad"
    joints: list[str]
    t_s: list[float | None] = Field(description="capture time, s; null between spans")
    measured: list[list[float | None]] = Field(description="per joint")
    simulated: list[list[float | None]] = Field(description="per joint; null: a gap between "
                                                            "spans simulated on their own")


class EventPayload(Envelope):
    """``events`` (QoS 1): warnings and errors, one per message."""

    schema_id: Literal["hilrig.event/1"] = Field("hilrig.event/1", alias="schema")
    level: Literal["info", "warning", "error"]
    code: str = Field(description="stable machine-readable kind, e.g. identify.failed, "
                      "session.suspended.disk, job.retry (docs/mqtt.md lists them)")
    message: str
    capture_id: str | None = None
    session_id: str | None = None


class TelemetryPayload(Envelope):
    """``telemetry`` (QoS 0, may drop): angles and velocities decimated to <= 100 Hz.

    Flat arrays of equal length, one entry per decimated sample: Grafana's MQTT data
    source and Node-RED charts read them as columns (t in Unix seconds).
    """

    schema_id: Literal["hilrig.telemetry/1"] = Field("hilrig.telemetry/1", alias="schema")
    rate_hz: float = Field(description="rate of the decimated samples")
    index0: int = Field(description="device sample index of the first entry")
    t: list[float] = Field(description="Unix time of each entry, seconds")
    theta0_deg: list[float]
    theta1_deg: list[float]
    omega0_dps: list[float] = Field(description="arm velocity, degrees per second")
    omega1_dps: list[float]
    dropped: int = Field(0, description="telemetry blocks dropped so far (queue full)")


class CommandReply(Envelope):
    """The reply to ``cmd/<verb>``: to the MQTT v5 response topic, else ``reply/<client>``."""

    schema_id: Literal["hilrig.reply/1"] = Field("hilrig.reply/1", alias="schema")
    verb: str
    ok: bool
    correlation_id: str | None = Field(None, description="echoed from the request")
    command_id: str | None = Field(None, description="echoed from the request (1.2)")
    error: str | None = None
    result: dict[str, Any] | None = None


PAYLOADS: dict[str, type[BaseModel]] = {
    "hilrig.status/1": StatusPayload,
    "hilrig.capture/1": CapturePayload,
    "hilrig.result/1": ResultPayload,
    "hilrig.session/1": SessionPayload,
    "hilrig.event/1": EventPayload,
    "hilrig.telemetry/1": TelemetryPayload,
    "hilrig.reply/1": CommandReply,
    "hilrig.capture_record/1": CaptureRecordPayload,
    "hilrig.overlay/1": OverlayPayload,
    "hilrig.campaign/1": CampaignPayload,
    "hilrig.session-result/1": SessionResultPayload,
}
