"""One MQTT connection: the payloads of the contract (docs/mqtt.md), built and published.

Topics, all under ``hilrig/<rig_id>/``; payload models in _payloads.py, JSON Schemas in
deploy/schemas/:

- ``status``: retained, QoS 1, StatusPayload; the connection's last will is a retained
  ``"offline"`` status, so a killed service leaves "offline" behind.
- ``capture/<capture_id>``: QoS 1, CapturePayload (lifecycle documents).
- ``session/<session_id>``: retained, QoS 1, SessionPayload: a session's progress.
- ``result/<capture_id>/<method>``: QoS 1, ResultPayload (an IdentificationResult with
  the envelope); the same payload is also retained on ``result/latest``.

A caller's dict may repeat an envelope id only with the same value (else ValueError);
its own "software_version" is kept (the version that computed it); its "time" is
replaced.

A `Publisher` is one connection and nothing more: a publish that the broker does not
acknowledge within ``publish_timeout_s`` returns False (logged). The service never
uses it directly: the `Courier` owns one at a time, reconnects, and keeps what must
not be lost in the outbox on disk until it is acknowledged.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from types import TracebackType
from typing import Any, Self, TextIO

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from pydantic import BaseModel

from drivers._source import SourceInfo

from ._broker import (
    EmbeddedBroker,
    client_options,
    parse_mqtt_url,
    probe_broker,
    resolve_broker,
)
from ._config import MqttConfig
from ._payloads import (
    CapturePayload,
    EventPayload,
    ResultPayload,
    SessionPayload,
    State,
    StatusPayload,
    TelemetryPayload,
    dump_json,
    jsonable,
)
from ._version import SOFTWARE_VERSION

__all__ = [
    "EmbeddedBroker", "Publisher", "State", "Topics", "monitor", "parse_mqtt_url", "probe_broker",
    "resolve_broker",
]

log = logging.getLogger("hilrig.mqtt")

_FORBIDDEN_IN_ID = set("/+#\x00")


def _check_id(kind: str, value: str) -> str:
    if not value or _FORBIDDEN_IN_ID & set(value):
        raise ValueError(f"{kind} {value!r} cannot be an MQTT topic level "
                         "(empty, or contains '/', '+', '#' or NUL)")
    return value


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


class Topics:
    """Topic names under ``hilrig/<rig_id>/``."""

    def __init__(self, rig_id: str) -> None:
        self.prefix = f"hilrig/{_check_id('rig_id', rig_id)}"
        self.status = f"{self.prefix}/status"
        self.result_latest = f"{self.prefix}/result/latest"
        self.events = f"{self.prefix}/events"
        self.telemetry = f"{self.prefix}/telemetry"
        self.all = f"{self.prefix}/#"

    def capture(self, capture_id: str) -> str:
        return f"{self.prefix}/capture/{_check_id('capture_id', capture_id)}"

    def result(self, capture_id: str, method: str) -> str:
        return (f"{self.prefix}/result/{_check_id('capture_id', capture_id)}/"
                f"{_check_id('method', method)}")

    def session(self, session_id: str) -> str:
        return f"{self.prefix}/session/{_check_id('session_id', session_id)}"




# Brokers (by url) that refused v5 in this process: reconnects go straight to 3.1.1
# instead of a refused v5 attempt each time (a broker that ignores a v5 CONNECT costs
# connect_timeout_s per attempt).
_V311_ONLY: set[str] = set()


class Publisher:
    """One MQTT connection publishing one rig's status, captures and results.

    Enter it (``async with Publisher(cfg, url=url) as pub``) in the task that owns the
    connection. Entering connects (ConnectionError, one line, if it cannot; the CONNACK
    is awaited cfg.connect_timeout_s, the TCP connect itself up to paho's 5 s; probe
    with resolve_broker first), with a retained "offline" status as last will, then
    publishes a retained "online" status. Leaving publishes a retained "offline" status and
    disconnects. The publish methods return True when the broker acknowledged, False
    (logged, never raised) when it did not in time; see the module docstring for
    what is not yet guaranteed.
    """

    def __init__(self, cfg: MqttConfig, *, url: str | None = None,
                 software_version: str = SOFTWARE_VERSION, source: SourceInfo | None = None,
                 publish_timeout_s: float = 2.0, announce: bool = True,
                 protocol5: bool = True) -> None:
        self.cfg = cfg
        self.url = cfg.url if url is None else url
        self.host, self.port = parse_mqtt_url(self.url)
        self.topics = Topics(cfg.rig_id)
        self.client_id = cfg.client_id or f"hilrig-{cfg.rig_id}"
        self.software_version = software_version
        self.source = source
        self.publish_timeout_s = publish_timeout_s
        self.announce = announce  # False: a side connection that leaves the status alone
        self.protocol5 = protocol5  # MQTT v5 (response topics); 3.1.1 if the broker refuses
        self._client: aiomqtt.Client | None = None

    def _status(self, state: State, **extra: Any) -> StatusPayload:
        extra = _body("hilrig.status/1", extra, rig_id=self.cfg.rig_id)
        extra["software_version"] = extra.get("software_version") or self.software_version
        if self.source is not None:
            extra.setdefault("protocol_version", self.source.protocol_version)
        return StatusPayload(rig_id=self.cfg.rig_id, state=state, source=self.source, **extra)

    async def __aenter__(self) -> Self:
        will = (aiomqtt.Will(self.topics.status, self._status("offline").to_json(),
                             qos=1, retain=True) if self.announce else None)
        client = None
        v5 = self.protocol5 and self.url not in _V311_ONLY
        versions = ([aiomqtt.ProtocolVersion.V5] if v5 else []) + [aiomqtt.ProtocolVersion.V311]
        for version in versions:
            client = aiomqtt.Client(
                self.host, self.port, identifier=self.client_id, will=will,
                keepalive=self.cfg.keepalive_s, timeout=self.cfg.connect_timeout_s,
                protocol=version, logger=logging.getLogger("hilrig.mqtt.client"),
                **client_options(self.cfg, self.url))  # type: ignore[arg-type]
            try:
                await client.__aenter__()
                break
            except aiomqtt.MqttError as exc:
                # a 3.1.1-only broker (the embedded one) refuses or ignores a v5 CONNECT;
                # nothing listening (connection refused) is no reason to try again
                down = "errno 111" in str(exc).lower() or "connection refused" in str(exc).lower()
                if version is aiomqtt.ProtocolVersion.V5 and not down:
                    log.info("broker at %s did not take MQTT v5 (%s); trying 3.1.1", self.url,
                             exc)
                    _V311_ONLY.add(self.url)
                    continue
                _V311_ONLY.discard(self.url)  # next time, ask for v5 again: it may be another broker
                raise ConnectionError(f"cannot connect to MQTT broker at {self.url} "
                                      f"as {self.client_id!r}: {exc}") from None
        self.version = version
        self._client = client
        log.info("connected to %s as %s", self.url, self.client_id)
        if self.announce:
            await self.publish_status("online")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        client, self._client = self._client, None
        if client is None:
            return
        if self.announce:
            await self._publish(client, self.topics.status, self._status("offline").to_json(),
                                retain=True)
        try:
            await client.__aexit__(None, None, None)
        except aiomqtt.MqttError as err:
            log.warning("MQTT disconnect from %s was not clean: %s", self.url, err)

    async def _publish(self, client: aiomqtt.Client | None, topic: str, payload: bytes,
                       *, retain: bool, qos: int = 1, correlation: bytes | None = None) -> bool:
        if client is None:
            log.warning("not connected: dropped %s", topic)
            return False
        try:
            props = None
            if correlation is not None and self.is_v5:
                props = Properties(PacketTypes.PUBLISH)
                props.CorrelationData = correlation
            await client.publish(topic, payload, qos=qos, retain=retain, properties=props,
                                 timeout=self.publish_timeout_s)
        except aiomqtt.MqttError as err:
            log.warning("MQTT publish to %s failed, message dropped: %s", topic, err)
            return False
        return True

    async def publish_status(self, state: State, source: SourceInfo | None = None,
                             **extra: Any) -> bool:
        """Retained ``status``; a given source is remembered for later statuses."""
        if source is not None:
            self.source = source
        payload = self._status(state, **extra).to_json()
        return await self._publish(self._client, self.topics.status, payload, retain=True)

    async def send(self, topic: str, payload: bytes, *, retain: bool, qos: int = 1,
                   correlation: bytes | None = None) -> bool:
        """Publish prepared bytes; True once the broker acknowledged them (QoS 1)."""
        return await self._publish(self._client, topic, payload, retain=retain, qos=qos,
                                   correlation=correlation)

    @property
    def client(self) -> aiomqtt.Client:
        """The connected client (for the courier's subscription to commands)."""
        if self._client is None:
            raise ConnectionError(f"not connected to {self.url}")
        return self._client

    @property
    def is_v5(self) -> bool:
        return getattr(self, "version", None) is aiomqtt.ProtocolVersion.V5

    def telemetry_message(self, body: dict[str, Any]) -> tuple[str, bytes]:
        msg = TelemetryPayload(rig_id=self.cfg.rig_id, software_version=self.software_version,
                               **body)
        return self.topics.telemetry, msg.to_json()

    async def publish_telemetry(self, body: dict[str, Any]) -> bool:
        """``telemetry`` (QoS 0): a block of decimated angles and velocities."""
        return await self.send(*self.telemetry_message(body), retain=False, qos=0)

    def capture_message(self, capture_id: str, summary: dict[str, Any]) -> tuple[str, bytes]:
        """Topic and payload of ``capture/<capture_id>`` (checked, not sent)."""
        body = _body("hilrig.capture/1", summary, rig_id=self.cfg.rig_id, capture_id=capture_id)
        body["software_version"] = body.get("software_version") or self.software_version
        body.setdefault("document", "stop")
        msg = CapturePayload(rig_id=self.cfg.rig_id, capture_id=capture_id, **body)
        return self.topics.capture(capture_id), msg.to_json()

    def event_message(self, level: str, code: str, message: str, **ids: Any) -> tuple[str, bytes]:
        msg = EventPayload(rig_id=self.cfg.rig_id, level=level, code=code, message=message,
                           software_version=self.software_version, **ids)
        return self.topics.events, msg.to_json()

    async def publish_event(self, level: str, code: str, message: str, **ids: Any) -> bool:
        """``events`` (QoS 1): a warning or an error, with the ids that join it."""
        return await self.send(*self.event_message(level, code, message, **ids), retain=False)

    def session_message(self, session_id: str, progress: dict[str, Any]) -> tuple[str, bytes]:
        body = _body("hilrig.session/1", progress, rig_id=self.cfg.rig_id, session_id=session_id)
        body["software_version"] = body.get("software_version") or self.software_version
        msg = SessionPayload(rig_id=self.cfg.rig_id, session_id=session_id, **body)
        return self.topics.session(session_id), msg.to_json()

    def result_message(self, capture_id: str, method: str,
                       result: dict[str, Any] | BaseModel) -> tuple[str, bytes]:
        """``result/<capture_id>/<method>``; the same bytes also go retained to result/latest."""
        topic = self.topics.result(capture_id, method)
        body = _body("hilrig.result/1", result, rig_id=self.cfg.rig_id, capture_id=capture_id,
                     method=method)
        body["software_version"] = body.get("software_version") or self.software_version
        msg = ResultPayload.model_validate(
            {**body, "rig_id": self.cfg.rig_id, "capture_id": capture_id, "method": method,
             "schema": "hilrig.result/1"})
        return topic, dump_json(msg)

    async def publish_capture(self, capture_id: str, summary: dict[str, Any]) -> bool:
        """``capture/<capture_id>`` (QoS 1, not retained)."""
        topic, payload = self.capture_message(capture_id, summary)
        return await self.send(topic, payload, retain=False)

    async def publish_session(self, session_id: str, progress: dict[str, Any]) -> bool:
        """``session/<session_id>``, retained (QoS 1): a dashboard joining late sees it."""
        topic, payload = self.session_message(session_id, progress)
        return await self.send(topic, payload, retain=True)

    async def publish_result(self, capture_id: str, method: str,
                             result: dict[str, Any] | BaseModel) -> bool:
        """``result/<capture_id>/<method>`` and the same payload retained on ``result/latest``."""
        topic, payload = self.result_message(capture_id, method, result)
        sent = await asyncio.gather(self.send(topic, payload, retain=False),
                                    self.send(self.topics.result_latest, payload, retain=True))
        return all(sent)

    @property
    def connected(self) -> bool:
        return self._client is not None


# --- monitor ----------------------------------------------------------------------------

_ENVELOPE = {"schema", "rig_id", "time", "software_version", "capture_id", "method", "msg_id"}


def _num(value: Any, digits: int = 3) -> str:
    if isinstance(value, dict) and "value" in value:  # a ParameterEstimate
        value = value["value"]
    if value is None:
        return "n/i"
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def _fit_text(fit: Any) -> str:
    if isinstance(fit, dict):
        return " ".join(f"{k}={_num(v, 4)}" for k, v in fit.items())
    if isinstance(fit, list):
        return " ".join(f"{name}={_num(v, 4)}" for name, v in zip(("arm", "pendulum"), fit))
    return _num(fit, 4)


def _result_text(msg: dict[str, Any]) -> str:
    """method, capture, fit per joint and the Coulomb/static/viscous coefficients."""
    parts = [f"method={msg.get('method', '?')}", f"capture={msg.get('capture_id', '?')}"]
    for key in ("fit_percent", "fit"):
        if key in msg:
            parts.append(f"fit[{_fit_text(msg[key])}]")
            break
    params: Any = next((msg[k] for k in ("parameters", "friction", "params")
                        if isinstance(msg.get(k), dict)), msg)
    parts += [f"{k}={_num(v)}" for k, v in params.items()
              if k.startswith(("mu_d", "mu_s", "mu_v"))]
    return " ".join(parts)


def _summary_line(topic: str, payload: bytes, retained: bool) -> str:
    head = f"{topic}{' [retained]' if retained else ''}"
    if not payload:
        return f"{head} (cleared)"
    try:
        msg = json.loads(payload)
    except ValueError:
        return f"{head} (not JSON) {payload[:80]!r}"
    if not isinstance(msg, dict):
        return f"{head} (not a JSON object) {payload[:80]!r}"
    schema = str(msg.get("schema", ""))
    if schema.startswith("hilrig.status/"):
        source = msg.get("source") or {}
        text = f"state={msg.get('state')} version={msg.get('software_version')}"
        if source:
            text += f" source={source.get('identity')}"
    elif schema.startswith("hilrig.capture/"):
        scalars = [f"{k}={_num(v)}" for k, v in msg.items()
                   if k not in _ENVELOPE and isinstance(v, (str, int, float, bool))][:6]
        text = " ".join([f"capture={msg.get('capture_id')}", *scalars])
    elif schema.startswith("hilrig.result/"):
        text = _result_text(msg)
    else:
        text = f"schema={schema or '?'} keys={','.join(sorted(msg))[:80]}"
    return f"{head} {text} time={msg.get('time', '?')}"


async def monitor(cfg: MqttConfig, *, url: str | None = None, out: TextIO = sys.stdout,
                  max_messages: int | None = None, timeout_s: float | None = None) -> int:
    """Print one line per message under ``hilrig/<rig_id>/#``; return how many were seen.

    Stops after max_messages messages or timeout_s seconds of listening, whichever
    comes first (neither: until cancelled). Backs ``hilrig monitor``.
    """
    url = cfg.url if url is None else url
    host, port = parse_mqtt_url(url)
    topics = Topics(cfg.rig_id)
    client = aiomqtt.Client(host, port, identifier=f"hilrig-monitor-{os.urandom(4).hex()}",
                            **client_options(cfg, url),  # type: ignore[arg-type]
                            keepalive=cfg.keepalive_s, timeout=cfg.connect_timeout_s,
                            logger=logging.getLogger("hilrig.mqtt.client"))
    seen = 0
    try:
        async with client:
            await client.subscribe(topics.all, qos=1)
            try:
                async with asyncio.timeout(timeout_s):
                    async for message in client.messages:
                        if not message.topic.matches(topics.all):
                            continue  # amqtt 0.12.1 can send retained messages unasked
                        raw = message.payload
                        payload = bytes(raw) if isinstance(raw, (bytes, bytearray)) \
                            else str(raw or "").encode()
                        print(_summary_line(message.topic.value, payload, message.retain),
                              file=out, flush=True)
                        seen += 1
                        if max_messages is not None and seen >= max_messages:
                            break
            except TimeoutError:
                pass
    except aiomqtt.MqttError as exc:
        raise ConnectionError(f"MQTT monitor on {url}: {exc}") from None
    return seen
