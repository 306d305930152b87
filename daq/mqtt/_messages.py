"""The messages of the contract (docs/mqtt.md), built and checked: topic and payload bytes.

Nothing here touches a connection: the publisher, the courier and the workers all build
their messages here, so each payload is made in one way. Topics are under
``hilrig/<rig_id>/``; payload models in _payloads.py, JSON Schemas in deploy/schemas/:

- ``status``: retained, QoS 1, StatusPayload (a connection's last will is "offline");
- ``capture/<capture_id>``: QoS 1, CapturePayload (lifecycle documents);
- ``session/<session_id>``: retained, QoS 1, SessionPayload: a session's progress;
- ``result/<capture_id>/<method>``: QoS 1, ResultPayload (an IdentificationResult with
  the envelope); the same payload is also retained on ``result/latest``;
- ``session/<session_id>/capture/<capture_id>``: retained, QoS 1, CaptureRecordPayload:
  a capture of a session and its results' summaries, as the catalog holds them;
- ``result/<capture_id>/<method>/overlay``: retained, QoS 1, OverlayPayload: the
  result's measured and simulated response, decimated;
- ``events``: QoS 1, EventPayload; ``telemetry``: QoS 0, TelemetryPayload.

A caller's dict may repeat an envelope id only with the same value (else ValueError);
its own "software_version" is kept (the version that computed it); its "time" is
replaced.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from hilrig.drivers import SourceInfo

from ..config import MqttConfig
from ._payloads import (
    CampaignPayload,
    CapturePayload,
    CaptureRecordPayload,
    EventPayload,
    OverlayPayload,
    ResultPayload,
    SessionPayload,
    SessionResultPayload,
    State,
    StatusPayload,
    TelemetryPayload,
    dump_json,
    jsonable,
)
from ._topics import Topics

__all__ = ["MessageBuilder", "Message"]

Message = tuple[str, bytes]  # topic, payload


def _body(schema: str, data: dict[str, Any] | BaseModel, **ids: str) -> dict[str, Any]:
    """The caller's keys as plain JSON values, checked against the envelope's ids."""
    body = jsonable(data)
    if not isinstance(body, dict):
        raise TypeError(f"{schema}: expected a dict or a pydantic model, got {type(data).__name__}")
    for key, value in {"schema": schema, **ids}.items():
        if body.get(key) not in (None, value):
            raise ValueError(f"{schema}: {key} {body[key]!r} in the payload does not match "
                             f"{value!r}")
        body.pop(key, None)
    body.pop("time", None)
    return body


class MessageBuilder:
    """Builds one rig's messages; `source` (the sample source) goes into every status."""

    def __init__(self, rig_id: str, software_version: str,
                 source: SourceInfo | None = None) -> None:
        self.topics = Topics(rig_id)
        self.rig_id = rig_id
        self.software_version = software_version
        self.source = source

    @classmethod
    def of(cls, cfg: MqttConfig, software_version: str,
           source: SourceInfo | None = None) -> MessageBuilder:
        return cls(cfg.rig_id, software_version, source)

    def status_payload(self, state: State, **extra: Any) -> StatusPayload:
        extra = _body("hilrig.status/1", extra, rig_id=self.rig_id)
        extra["software_version"] = extra.get("software_version") or self.software_version
        if self.source is not None:
            extra.setdefault("protocol_version", self.source.protocol_version)
        return StatusPayload(rig_id=self.rig_id, state=state, source=self.source, **extra)

    def status(self, state: State, **extra: Any) -> Message:
        """``status`` (retain it)."""
        return self.topics.status, self.status_payload(state, **extra).to_json()

    def telemetry(self, body: dict[str, Any]) -> Message:
        msg = TelemetryPayload(rig_id=self.rig_id, software_version=self.software_version,
                               **body)
        return self.topics.telemetry, msg.to_json()

    def capture(self, capture_id: str, summary: dict[str, Any]) -> Message:
        """``capture/<capture_id>``: a lifecycle document (a "stop" unless it says)."""
        body = _body("hilrig.capture/1", summary, rig_id=self.rig_id, capture_id=capture_id)
        body["software_version"] = body.get("software_version") or self.software_version
        body.setdefault("document", "stop")
        msg = CapturePayload(rig_id=self.rig_id, capture_id=capture_id, **body)
        return self.topics.capture(capture_id), msg.to_json()

    def event(self, level: str, code: str, message: str, **ids: Any) -> Message:
        msg = EventPayload(rig_id=self.rig_id, level=level, code=code, message=message,
                           software_version=self.software_version, **ids)
        return self.topics.events, msg.to_json()

    def capture_record(self, session_id: str, capture_id: str,
                       record: dict[str, Any]) -> Message:
        """``session/<session_id>/capture/<capture_id>`` (retain it)."""
        body = _body("hilrig.capture_record/1", record, rig_id=self.rig_id,
                     session_id=session_id, capture_id=capture_id)
        msg = CaptureRecordPayload(rig_id=self.rig_id, session_id=session_id,
                                   capture_id=capture_id,
                                   software_version=self.software_version, **body)
        return self.topics.capture_record(session_id, capture_id), msg.to_json()

    def overlay(self, capture_id: str, method: str, response: dict[str, Any],
                session_id: str | None = None) -> Message:
        """``result/<capture_id>/<method>/overlay`` (retain it): a result's response."""
        body = _body("hilrig.overlay/1", response, rig_id=self.rig_id, capture_id=capture_id,
                     method=method)
        msg = OverlayPayload(rig_id=self.rig_id, capture_id=capture_id, method=method,
                             session_id=session_id, software_version=self.software_version,
                             **body)
        return self.topics.overlay(capture_id, method), msg.to_json()

    def session(self, session_id: str, progress: dict[str, Any]) -> Message:
        """``session/<session_id>`` (retain it)."""
        body = _body("hilrig.session/1", progress, rig_id=self.rig_id, session_id=session_id)
        body["software_version"] = body.get("software_version") or self.software_version
        msg = SessionPayload(rig_id=self.rig_id, session_id=session_id, **body)
        return self.topics.session(session_id), msg.to_json()

    def session_result(self, session_id: str, result: BaseModel) -> Message:
        """``session/<session_id>/result`` (retain it): hilrig.session-result/1."""
        body = _body("hilrig.session-result/1", result, rig_id=self.rig_id)
        if body.get("session_id") not in (None, session_id):
            raise ValueError(f"hilrig.session-result/1: session_id {body['session_id']!r} in "
                             f"the payload does not match {session_id!r}")
        body["session_id"] = session_id
        msg = SessionResultPayload(rig_id=self.rig_id, **body)
        return self.topics.session_result(session_id), dump_json(msg)

    def campaign(self, campaign_id: str, progress: dict[str, Any]) -> Message:
        """``campaign/<campaign_id>`` (retain it)."""
        body = _body("hilrig.campaign/1", progress, rig_id=self.rig_id, campaign_id=campaign_id)
        msg = CampaignPayload(rig_id=self.rig_id, campaign_id=campaign_id, **body)
        return self.topics.campaign(campaign_id), msg.to_json()

    def result(self, capture_id: str, method: str,
               result: dict[str, Any] | BaseModel, *, with_response: bool = False,
               **extra: Any) -> Message:
        """``result/<capture_id>/<method>``; the same bytes also go retained to result/latest.

        The response (measured against simulated angles) is left out unless
        `with_response` (a worker's answer to its rig): it goes on its own retained topic
        (`overlay`), so a result stays small for the subscribers of every result.
        `extra`: envelope fields of the sender (msg_id; a worker's job_id and name).
        """
        topic = self.topics.result(capture_id, method)
        body = _body("hilrig.result/1", result, rig_id=self.rig_id, capture_id=capture_id,
                     method=method)
        if not with_response:
            body.pop("response", None)
        body["software_version"] = body.get("software_version") or self.software_version
        msg = ResultPayload.model_validate(
            {**body, **extra, "rig_id": self.rig_id, "capture_id": capture_id,
             "method": method, "schema": "hilrig.result/1"})
        return topic, dump_json(msg)
