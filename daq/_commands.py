"""Commands over MQTT: ``hilrig/<rig_id>/cmd/<verb>`` in, a hilrig.reply/1 out.

A request is a JSON object (an empty payload is ``{}``) validated by the verb's
pydantic model. The reply goes to the request's MQTT v5 response topic with its
correlation data; an MQTT 3.1.1 client puts ``"reply_to"`` (a topic under
``hilrig/<rig_id>/reply/``) and ``"correlation_id"`` in the request instead, and
without ``reply_to`` the reply goes to ``hilrig/<rig_id>/reply/<verb>``. Anything
malformed, unknown or not allowed now gets ``"ok": false`` and a one-line ``"error"``,
and changes nothing.

Verbs: arm, abort, release, identify, session/start, session/stop, session/pause,
session/resume (docs/mqtt.md says what each does and when it is allowed).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from identify import METHODS

from ._errors import first_error, one_line

__all__ = ["COMMANDS", "CommandRefused", "CommandRouter", "Request", "send_command"]


class CommandRefused(Exception):
    """Well-formed but not allowed now (or not possible); the message is the reply's error."""


class Request(BaseModel):
    """Fields every request may carry (3.1.1 clients' reply routing)."""

    model_config = ConfigDict(extra="forbid")
    correlation_id: str | None = Field(None, max_length=200)
    reply_to: str | None = Field(None, max_length=300)


class Empty(Request):
    pass


class IdentifyRequest(Request):
    capture_id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$",
                            description="an archived capture, by id (never a path)")
    method: str = "grey-box"

    @field_validator("method")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in METHODS:
            raise ValueError(f"unknown method {value!r} (known: {', '.join(sorted(METHODS))})")
        return value


class SessionStartRequest(Request):
    plan: dict[str, Any] = Field(description="a session plan, as in session.example.toml")


COMMANDS: dict[str, type[Request]] = {
    "arm": Empty, "abort": Empty, "release": Empty, "identify": IdentifyRequest,
    "session/start": SessionStartRequest, "session/stop": Empty, "session/pause": Empty,
    "session/resume": Empty,
}

Handler = Callable[[Any], Awaitable[dict[str, Any] | None]]


class CommandRouter:
    """Verb -> async handler; `handle` turns any request into (reply fields)."""

    def __init__(self, rig_id: str) -> None:
        self.rig_id = rig_id
        self.prefix = f"hilrig/{rig_id}/"
        self._handlers: dict[str, Handler] = {}

    def register(self, verb: str, handler: Handler) -> None:
        if verb not in COMMANDS:
            raise ValueError(f"unknown verb {verb!r}")
        self._handlers[verb] = handler

    def parse(self, topic: str, payload: bytes) -> tuple[str, dict[str, Any] | None, str | None]:
        """(verb, request fields or None, error) of a message on cmd/#."""
        verb = topic.removeprefix(self.prefix + "cmd/")
        try:
            data = json.loads(payload or b"{}")
        except (ValueError, UnicodeDecodeError) as exc:
            return verb, None, f"not valid JSON: {exc}"
        if not isinstance(data, dict):
            return verb, None, "the request must be a JSON object"
        return verb, data, None

    def allowed_response_topic(self, topic: str) -> bool:
        """A v5 response topic: no wildcards, and nothing of this tree but reply/."""
        if not topic or set("+#\x00") & set(topic):
            return False
        return not topic.startswith("hilrig/") or topic.startswith(self.prefix + "reply/")

    def reply_topic(self, verb: str, data: dict[str, Any] | None) -> str:
        """Where a 3.1.1 client's reply goes: its reply_to if under reply/, else reply/<verb>."""
        asked = (data or {}).get("reply_to")
        if isinstance(asked, str) and asked.startswith(self.prefix + "reply/") \
                and not set("+#\x00") & set(asked):
            return asked
        return self.prefix + "reply/" + verb.replace("/", "-")

    async def handle(self, verb: str, data: dict[str, Any] | None, error: str | None
                     ) -> dict[str, Any]:
        """The reply's fields: verb, ok, error or result, correlation_id."""
        reply = await self._handle(verb, data, error)
        if "error" in reply:
            reply["error"] = one_line(reply["error"])
        return reply

    async def _handle(self, verb: str, data: dict[str, Any] | None, error: str | None
                      ) -> dict[str, Any]:
        correlation = (data or {}).get("correlation_id")
        correlation = correlation if isinstance(correlation, str) else None
        reply: dict[str, Any] = {"verb": verb, "ok": False, "correlation_id": correlation}
        if error is not None:
            return {**reply, "error": error}
        model = COMMANDS.get(verb)
        if model is None:
            return {**reply, "error": f"unknown verb {verb!r} (known: {', '.join(COMMANDS)})"}
        try:
            request = model.model_validate(data)
        except ValidationError as exc:
            return {**reply, "error": first_error(exc, "request")}
        handler = self._handlers.get(verb)
        if handler is None:
            return {**reply, "error": f"{verb}: not available in this service"}
        try:
            result = await handler(request)
        except CommandRefused as exc:
            return {**reply, "error": str(exc)}
        return {**reply, "ok": True, "result": result}


async def send_command(cfg: Any, verb: str, body: dict[str, Any], *, url: str | None = None,
                       timeout_s: float = 30.0) -> dict[str, Any]:
    """The client side (`hilrig cmd`): request over MQTT v5, the reply by correlation data."""
    import asyncio
    import os

    import aiomqtt
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    from ._broker import client_options, parse_mqtt_url

    host, port = parse_mqtt_url(url or cfg.url)
    token = os.urandom(6).hex()
    response = f"hilrig/{cfg.rig_id}/reply/cli-{token}"
    props = Properties(PacketTypes.PUBLISH)
    props.ResponseTopic = response
    props.CorrelationData = token.encode()
    try:
        async with aiomqtt.Client(host, port, identifier=f"hilrig-cmd-{token}",
                                  protocol=aiomqtt.ProtocolVersion.V5,
                                  timeout=cfg.connect_timeout_s,
                                  **client_options(cfg, url)) as client:  # type: ignore[arg-type]
            await client.subscribe(response, qos=1)
            await client.publish(f"hilrig/{cfg.rig_id}/cmd/{verb}", json.dumps(body), qos=1,
                                 properties=props)
            async with asyncio.timeout(timeout_s):
                async for message in client.messages:
                    got = getattr(message.properties, "CorrelationData", None)
                    if message.topic.value == response and got == token.encode():
                        return json.loads(message.payload)
    except TimeoutError:
        raise ConnectionError(f"cmd {verb}: no reply from rig {cfg.rig_id} within "
                              f"{timeout_s:g} s (is the service running?)") from None
    except aiomqtt.MqttError as exc:
        raise ConnectionError(f"cmd {verb}: MQTT broker at {url or cfg.url}: {exc}") from None
    raise ConnectionError(f"cmd {verb}: the connection closed before the reply")
