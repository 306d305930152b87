"""The courier: one task owns the MQTT connection, reconnects, and delivers from the outbox.

What the service publishes falls in three classes, each with its own rule:

- **durable** (capture records, results): written to the `Outbox` on disk first and
  deleted only after the broker's PUBACK; never dropped, delivered in order after a
  broker outage or a restart of the service. Each carries a `msg_id`. Events too, except
  on a full disk: an event the outbox refuses (most often the one saying the disk is
  full) is kept in memory and sent first, since waiting for room would hide it until
  nobody needs it; it is lost only if the service dies before the broker has it.
- **latest** (status, session progress, capture records, overlays): retained topics;
  only the newest payload per topic is kept in memory, older ones are superseded, never
  queued, and all of them are published again on every new connection (a broker
  restarted without its retained messages shows the state again at once).
- **telemetry** (QoS 0): a bounded queue in memory (`telemetry_queue` blocks); when
  it is full (a slow or absent broker) the oldest block is dropped and counted; the
  count goes out with the next block ("dropped").

The connection: connect (with a retained "offline" last will), publish "online",
then the newest status, then the outbox; on any failed publish or lost connection,
reconnect with exponential backoff (`backoff` = first and longest delay) and go on
where it stopped. The publish_* methods never block acquisition: they return True
once the message is accepted for delivery (durable ones: on disk).

Leaving waits up to `drain_timeout_s` for the outbox to empty, then publishes a
retained "offline" and disconnects; what could not be delivered stays on disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import deque
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel

from hilrig.drivers import SourceInfo
from hilrig.identify import SOFTWARE_VERSION

from ..config import MqttConfig
from ..storage import Outbox, disk_full
from ._commands import CommandRouter
from ._messages import MessageBuilder
from ._payloads import CommandReply, State, jsonable
from ._publisher import Publisher

__all__ = ["Courier"]

log = logging.getLogger("hilrig.mqtt")

#: retained (latest-class) messages sent before the outbox and telemetry get a turn
LATEST_BATCH = 50


class _Lost(Exception):
    """A publish was not acknowledged: reconnect."""


class Courier:
    """Publisher-compatible, reconnecting, with a durable outbox (see module docstring)."""

    def __init__(self, cfg: MqttConfig, outbox: Outbox, *, url: str | None = None,
                 source: SourceInfo | None = None, software_version: str = SOFTWARE_VERSION,
                 publish_timeout_s: float = 5.0, backoff: tuple[float, float] = (0.5, 8.0),
                 drain_timeout_s: float = 10.0,
                 on_delivered: Callable[[str], None] | None = None,
                 telemetry_queue: int = 100, commands: CommandRouter | None = None,
                 announce: bool = True) -> None:
        self.cfg = cfg
        self.outbox = outbox
        self.url = cfg.url if url is None else url
        self.publish_timeout_s = publish_timeout_s
        self.backoff = backoff
        self.drain_timeout_s = drain_timeout_s
        self.on_delivered = on_delivered  # told the topic of each durable message acked
        self._builder = MessageBuilder.of(cfg, software_version, source)
        self.topics = self._builder.topics
        # False: a side connection (a CLI's re-identification) that leaves the status alone
        self.announce = announce
        self._latest: dict[str, tuple[bytes, bool]] = {}
        # what the broker must retain, kept to publish again on every new connection (a
        # restarted broker that kept nothing is filled again), by group (a session's id)
        self._retained: dict[str, tuple[bytes, str | None]] = {}
        self._wake = asyncio.Event()
        self._closing = False
        self._task: asyncio.Task[None] | None = None
        self.connected = False
        # set once connected and subscribed (commands are heard); cleared when the link drops
        self.listening = asyncio.Event()
        self._link_lost: str | None = None  # set by the reader when the broker goes away
        self._boot = secrets.token_hex(4)  # event ids are unique per process
        self._events = 0
        self.commands = commands  # cmd/# is subscribed on every connection when given
        # other subscriptions (topic filter -> handler of each message), renewed likewise
        self._subscriptions: dict[str, Callable[[Any], Coroutine[Any, Any, None]]] = {}
        self._pub: Publisher | None = None
        self._replies: deque[tuple[str, bytes, bytes | None]] = deque(maxlen=1000)
        self._undurable: deque[tuple[str, bytes]] = deque(maxlen=1000)  # events, disk full
        self._running: set[asyncio.Task[None]] = set()
        self._telemetry: deque[dict[str, Any]] = deque(maxlen=telemetry_queue)
        self._new_durable = False  # put since the outbox was last read
        self.telemetry_dropped = 0
        self.delivered = 0
        self.reconnects = 0

    # -- the Publisher interface the service uses -------------------------------------------
    @property
    def source(self) -> SourceInfo | None:
        return self._builder.source

    async def publish_status(self, state: State, source: SourceInfo | None = None,
                             **extra: Any) -> bool:
        if source is not None:
            self._builder.source = source
        self._set_latest(*self._builder.status(state, **extra))
        return True

    async def publish_session(self, session_id: str, progress: dict[str, Any]) -> bool:
        self._set_latest(*self._builder.session(session_id, progress), group=session_id)
        return True

    def put_session_result(self, session_id: str, result: BaseModel) -> None:
        """``session/<session_id>/result``, retained (latest class): the newest answer."""
        self._set_latest(*self._builder.session_result(session_id, result), group=session_id)

    def put_campaign(self, campaign_id: str, progress: dict[str, Any]) -> None:
        """``campaign/<campaign_id>``, retained (latest class): only the newest counts."""
        self._set_latest(*self._builder.campaign(campaign_id, progress), group=campaign_id)

    async def publish_capture(self, capture_id: str, summary: dict[str, Any]) -> bool:
        doc = summary.get("document", "stop")
        msg_id = f"capture/{capture_id}/{doc}" + (
            f"/{summary['doc_n']}" if doc == "progress" else "")
        topic, payload = self._builder.capture(capture_id, {**summary, "msg_id": msg_id})
        self._durable(msg_id, topic, payload)
        return True

    async def publish_event(self, level: str, code: str, message: str, **ids: Any) -> bool:
        self._events += 1
        msg_id = f"event/{self._boot}/{self._events}"
        topic, payload = self._builder.event(level, code, message, msg_id=msg_id, **ids)
        try:
            self._durable(msg_id, topic, payload)
        except Exception as exc:
            if not disk_full(exc):
                raise
            self._undurable.append((topic, payload))
            self._wake.set()
        return True

    async def publish_job(self, msg_id: str, topic: str, payload: bytes) -> bool:
        """An identification job (durable, QoS 1): see _jobs.py."""
        self._durable(msg_id, topic, payload)
        return True

    def _durable(self, msg_id: str, topic: str, payload: bytes, retain: bool = False) -> None:
        self.outbox.put(msg_id, topic, payload, retain=retain)
        self._new_durable = True
        self._wake.set()

    async def publish_result(self, capture_id: str, method: str,
                             result: dict[str, Any] | BaseModel) -> bool:
        self.put_result(capture_id, method, result)
        return True

    def put_result(self, capture_id: str, method: str,
                   result: dict[str, Any] | BaseModel) -> None:
        """A result into the outbox (and retained on result/latest); never waits."""
        body = jsonable(result)
        stamp = body.get("created_utc") or body.get("time") or ""
        msg_id = f"result/{capture_id}/{method}/{stamp}"
        topic, payload = self._builder.result(capture_id, method, body, msg_id=msg_id)
        self._durable(msg_id, topic, payload)
        self._durable(msg_id + "/latest", self.topics.result_latest, payload, retain=True)

    async def publish_telemetry(self, body: dict[str, Any]) -> bool:
        if len(self._telemetry) == self._telemetry.maxlen:
            self.telemetry_dropped += 1  # the deque drops the oldest
        self._telemetry.append(body)
        self._wake.set()
        return True

    async def publish_capture_record(self, session_id: str, capture_id: str,
                                     record: dict[str, Any]) -> bool:
        """``session/<session_id>/capture/<capture_id>``, retained (latest class)."""
        self._set_latest(*self._builder.capture_record(session_id, capture_id, record),
                         group=session_id)
        return True

    async def publish_overlay(self, capture_id: str, method: str, response: dict[str, Any],
                              session_id: str | None = None) -> bool:
        """``result/<capture_id>/<method>/overlay``, retained (latest class)."""
        self._set_latest(*self._builder.overlay(capture_id, method, response, session_id),
                         group=session_id)
        return True

    def clear_retained(self, topics: list[str]) -> None:
        """Delete retained messages from the broker (an empty retained payload each)."""
        for topic in topics:
            self._retained.pop(topic, None)
            self._latest[topic] = (b"", True)
        if topics:
            self._wake.set()

    def forget_retained(self, keep_group: str | None) -> None:
        """Stop re-publishing the retained topics of every group but `keep_group` (the
        broker keeps them; a new session need not carry the last one's in memory)."""
        self._retained = {t: v for t, v in self._retained.items()
                          if v[1] is None or v[1] == keep_group}

    def _set_latest(self, topic: str, payload: bytes, group: str | None = None) -> None:
        self._latest[topic] = (payload, True)
        self._retained[topic] = (payload, group)
        self._wake.set()

    @property
    def pending(self) -> int:
        """Durable messages not yet acknowledged by the broker."""
        return len(self.outbox)

    # -- the connection -------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        self._closing = False
        self._task = asyncio.create_task(self._run(), name="hilrig-courier")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self._closing = True
        self._wake.set()
        assert self._task is not None
        try:
            await asyncio.wait_for(asyncio.shield(self._task), self.drain_timeout_s)
        except TimeoutError:
            left = self.pending
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError, _Lost):
                await self._task
            log.warning("MQTT: %d message(s) not delivered; they stay in %s for the next "
                        "start", left, self.outbox.path)

    async def _run(self) -> None:
        delay = self.backoff[0]
        warned = False
        while True:
            try:
                async with Publisher(self.cfg, url=self.url, source=self._builder.source,
                                     software_version=self._builder.software_version,
                                     publish_timeout_s=self.publish_timeout_s,
                                     announce=self.announce) as pub:
                    self.connected = True
                    if warned:
                        log.info("MQTT: reconnected to %s; %d message(s) waiting", self.url,
                                 self.pending)
                    warned, delay = False, self.backoff[0]
                    self._pub = pub
                    # a new connection: everything retained goes out again, newest kept
                    for topic, (payload, _) in self._retained.items():
                        self._latest.setdefault(topic, (payload, True))
                    reader = None
                    if self.commands is not None:
                        await pub.client.subscribe(self.topics.commands, qos=1)
                    for topic_filter in self._subscriptions:
                        await pub.client.subscribe(topic_filter, qos=1)
                    self._link_lost = None
                    reader = asyncio.create_task(self._read_commands(pub))
                    self.listening.set()
                    try:
                        await self._deliver(pub)
                    finally:
                        self.listening.clear()
                        self._pub = None
                        if reader is not None:
                            reader.cancel()
                            with contextlib.suppress(asyncio.CancelledError, Exception):
                                await reader
                    self.connected = False
                    return  # closing and drained: leaving publishes "offline"
            except (ConnectionError, _Lost) as exc:
                self.connected = False
                self.listening.clear()
                if not warned:
                    log.warning("MQTT: connection to %s lost (%s); retrying with backoff, "
                                "messages wait in %s", self.url, exc or "no ack", self.outbox.path)
                    warned = True
                self.reconnects += 1
            await asyncio.sleep(delay)
            delay = min(2 * delay, self.backoff[1])

    # -- commands -------------------------------------------------------------------------
    def subscribe(self, topic_filter: str,
                  handler: Callable[[Any], Coroutine[Any, Any, None]]) -> None:
        """Hand every message on topic_filter to handler; renewed on every connection."""
        new = topic_filter not in self._subscriptions
        self._subscriptions[topic_filter] = handler
        pub = self._pub
        if new and pub is not None:  # connected already: subscribe now as well
            task = asyncio.get_running_loop().create_task(self._subscribe(pub, topic_filter))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    @staticmethod
    async def _subscribe(pub: Publisher, topic_filter: str) -> None:
        await pub.client.subscribe(topic_filter, qos=1)

    async def _read_commands(self, pub: Publisher) -> None:
        # An idle courier publishes nothing, so only this reader sees the broker go away; it
        # wakes the delivery loop, which reconnects and subscribes again (commands heard).
        try:
            await self._read(pub)
        except Exception as exc:  # noqa: BLE001 - any end of the stream is a lost link
            self._link_lost = str(exc) or type(exc).__name__
        else:
            self._link_lost = "the broker ended the message stream"
        self._wake.set()

    async def _read(self, pub: Publisher) -> None:
        async for message in pub.client.messages:
            work: Coroutine[Any, Any, None]
            if self.commands is not None and message.topic.matches(self.topics.commands):
                work = self._command(message)
            else:
                handler = next((h for f, h in self._subscriptions.items()
                                if message.topic.matches(f)), None)
                if handler is None:
                    continue
                work = handler(message)
            task = asyncio.create_task(work)  # a slow one blocks no other
            self._running.add(task)
            task.add_done_callback(self._handled)

    def _handled(self, task: asyncio.Task[None]) -> None:
        """A message's work is over: a failure is logged, never left unretrieved."""
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("MQTT: handling a message failed: %s", task.exception())

    async def _command(self, message: Any) -> None:
        """Every command gets a reply, whatever its payload or its handler does.

        Not commands: an empty message (how MQTT deletes a retained one) and a retained
        one (left on the broker, it would run again at every start of the service): the
        latter is told as a warning and deleted from the broker, and gets no reply.
        """
        assert self.commands is not None
        topic = message.topic.value
        verb = self.commands.topics.verb_of(topic)
        raw = message.payload if isinstance(message.payload, (bytes, bytearray)) else b""
        if not raw:
            return
        if getattr(message, "retain", False):
            text = (f"retained command on {topic} ignored (a command runs when it is sent, "
                    "never from the broker's memory); deleted from the broker")
            log.warning("%s", text)
            await self.publish_event("warning", "command.retained", text)
            self.clear_retained([topic])
            return
        props = getattr(message, "properties", None)
        response = getattr(props, "ResponseTopic", None) if props is not None else None
        correlation = getattr(props, "CorrelationData", None) if props is not None else None
        data: dict[str, Any] | None = None
        try:
            verb, data, error = self.commands.parse(topic, bytes(raw))
            fields = await self.commands.handle(
                verb, data, error, correlation=bytes(correlation) if correlation else None)
        except Exception as exc:  # noqa: BLE001 - a bug is the reply, never a lost one
            log.exception("command %s failed", verb)
            fields = {"verb": verb, "ok": False, "error": f"internal error: {exc}",
                      "correlation_id": None}
        if response and self.commands.allowed_response_topic(response):
            topic = response
        else:
            topic = self.commands.reply_topic(verb, data)
        reply = CommandReply(rig_id=self.cfg.rig_id, **fields)
        log.info("command %s: %s", verb, "ok" if fields["ok"] else fields.get("error"))
        self._replies.append((topic, reply.to_json(), correlation))
        self._wake.set()

    async def _deliver(self, pub: Publisher) -> None:
        while True:
            if self._link_lost is not None:
                raise _Lost(self._link_lost)
            while self._replies:
                topic, payload, correlation = self._replies[0]
                if not await pub.send(topic, payload, retain=False, correlation=correlation):
                    raise _Lost(f"no ack for {topic}")
                self._replies.popleft()
            while self._undurable:
                topic, payload = self._undurable[0]
                if not await pub.send(topic, payload, retain=False):
                    raise _Lost(f"no ack for {topic}")
                self._undurable.popleft()
            # a batch at a time: after a reconnection (all retained topics again) or a
            # clean-up of old sessions, replies, results and telemetry still go between
            for topic, (payload, retain) in list(self._latest.items())[:LATEST_BATCH]:
                if not await pub.send(topic, payload, retain=retain):
                    raise _Lost(f"no ack for {topic}")
                if self._latest.get(topic, (None,))[0] is payload:
                    del self._latest[topic]  # unless superseded meanwhile
            self._new_durable = False  # whatever is put from here on is fetched next pass
            rows = self.outbox.pending(100)
            for row in rows:
                if not await pub.send(row.topic, row.payload, retain=row.retain):
                    raise _Lost(f"no ack for {row.topic}")
                self.outbox.done(row.seq)
                self.delivered += 1
                if self.on_delivered is not None and not row.retain:
                    self.on_delivered(row.topic)
            while self._telemetry and not self._closing:
                body = self._telemetry.popleft()
                topic, payload = self._builder.telemetry(
                    {**body, "dropped": self.telemetry_dropped})
                if not await pub.send(topic, payload, retain=False, qos=0):
                    raise _Lost(f"cannot send {topic}")
                if self._latest or self._new_durable:
                    break  # what must not be lost goes first
            if rows or self._latest or self._replies or self._undurable:
                continue
            if self._closing:
                return
            if self._link_lost is not None:  # the reader may have ended during a send above
                continue
            self._wake.clear()
            await self._wake.wait()
