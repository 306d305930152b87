"""One MQTT connection publishing one rig's messages (built by _messages.py).

A `Publisher` is one connection and nothing more: a publish that the broker does not
acknowledge within ``publish_timeout_s`` returns False (logged). The service never
uses it directly: the `Courier` owns one at a time, reconnects, and keeps what must
not be lost in the outbox on disk until it is acknowledged.
"""

from __future__ import annotations

import asyncio
import logging
from types import TracebackType
from typing import Any, Self

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from pydantic import BaseModel

from hilrig.drivers import SourceInfo
from hilrig.identify import SOFTWARE_VERSION

from ..config import MqttConfig
from ._broker import client_options, parse_mqtt_url
from ._client_version import enter_client
from ._messages import MessageBuilder
from ._payloads import State

__all__ = ["Publisher"]

log = logging.getLogger("hilrig.mqtt")




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
        self.messages = MessageBuilder.of(cfg, software_version, source)
        self.topics = self.messages.topics
        self.client_id = cfg.client_id or f"hilrig-{cfg.rig_id}"
        self.publish_timeout_s = publish_timeout_s
        self.announce = announce  # False: a side connection that leaves the status alone
        self.protocol5 = protocol5  # MQTT v5 (response topics); 3.1.1 if the broker refuses
        self._client: aiomqtt.Client | None = None

    async def __aenter__(self) -> Self:
        will = (aiomqtt.Will(self.topics.status, self.messages.status("offline")[1],
                             qos=1, retain=True) if self.announce else None)

        def make(version: aiomqtt.ProtocolVersion) -> aiomqtt.Client:
            return aiomqtt.Client(
                self.host, self.port, identifier=self.client_id, will=will,
                keepalive=self.cfg.keepalive_s, timeout=self.cfg.connect_timeout_s,
                protocol=version, logger=logging.getLogger("hilrig.mqtt.client"),
                **client_options(self.cfg, self.url))

        try:
            client, version = await enter_client(self.url, make, v5=self.protocol5)
        except aiomqtt.MqttError as exc:
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
            await self._publish(client, self.topics.status, self.messages.status("offline")[1],
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
            self.messages.source = source
        topic, payload = self.messages.status(state, **extra)
        return await self._publish(self._client, topic, payload, retain=True)

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

    async def publish_telemetry(self, body: dict[str, Any]) -> bool:
        """``telemetry`` (QoS 0): a block of decimated angles and velocities."""
        return await self.send(*self.messages.telemetry(body), retain=False, qos=0)

    async def publish_event(self, level: str, code: str, message: str, **ids: Any) -> bool:
        """``events`` (QoS 1): a warning or an error, with the ids that join it."""
        return await self.send(*self.messages.event(level, code, message, **ids), retain=False)

    async def publish_capture(self, capture_id: str, summary: dict[str, Any]) -> bool:
        """``capture/<capture_id>`` (QoS 1, not retained)."""
        topic, payload = self.messages.capture(capture_id, summary)
        return await self.send(topic, payload, retain=False)

    async def publish_session(self, session_id: str, progress: dict[str, Any]) -> bool:
        """``session/<session_id>``, retained (QoS 1): a dashboard joining late sees it."""
        topic, payload = self.messages.session(session_id, progress)
        return await self.send(topic, payload, retain=True)

    async def publish_result(self, capture_id: str, method: str,
                             result: dict[str, Any] | BaseModel) -> bool:
        """``result/<capture_id>/<method>`` and the same payload retained on ``result/latest``."""
        topic, payload = self.messages.result(capture_id, method, result)
        sent = await asyncio.gather(self.send(topic, payload, retain=False),
                                    self.send(self.topics.result_latest, payload, retain=True))
        return all(sent)

    @property
    def connected(self) -> bool:
        return self._client is not None
