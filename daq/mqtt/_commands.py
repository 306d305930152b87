"""Commands over MQTT: ``hilrig/<rig_id>/cmd/<verb>`` in, a hilrig.reply/1 out.

A request is a JSON object validated by the verb's pydantic model. The reply goes to
the request's MQTT v5 response topic with its correlation data; an MQTT 3.1.1 client
puts ``"reply_to"`` (a topic under ``hilrig/<rig_id>/reply/``) and ``"correlation_id"``
in the request instead, and without ``reply_to`` the reply goes to
``hilrig/<rig_id>/reply/<verb>``. Anything malformed, unknown or not allowed now gets
``"ok": false`` and a one-line ``"error"``, and changes nothing.

A command runs once: a request that comes again within DUPLICATE_WINDOW_S (a QoS 1
redelivery, a client's retry, a replay) gets the first one's reply again, not a second
execution. It is known again by its ``"command_id"``, or, without one, by its
correlation (v5 correlation data or ``"correlation_id"``) and its body; a request with
neither cannot be told from a new one. (An empty or retained message is never a
command: see the courier.)

Verbs: ping, arm, abort, release, identify, session/start, session/stop, session/pause,
session/resume (docs/mqtt.md says what each does and when it is allowed).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from hilrig.identify import DEFAULT_METHOD

from ..config import MAX_NESTING, first_error, json_nesting, known_method, one_line
from ._topics import Topics

__all__ = ["COMMANDS", "CommandRefused", "CommandRouter", "Request"]


#: a request is a small JSON object: its size and depth are bounded before it is parsed
MAX_REQUEST_BYTES = 65_536
#: how long a command's reply is kept for a duplicate of it, and how many are kept
DUPLICATE_WINDOW_S = 600.0
DUPLICATES_KEPT = 1000


class CommandRefused(Exception):
    """Well-formed but not allowed now (or not possible); the message is the reply's error."""


class Request(BaseModel):
    """Fields every request may carry (3.1.1 clients' reply routing)."""

    model_config = ConfigDict(extra="forbid")
    correlation_id: str | None = Field(None, max_length=200)
    reply_to: str | None = Field(None, max_length=300)
    command_id: str | None = Field(
        None, pattern=r"^[A-Za-z0-9_.:-]{1,100}$",
        description="unique per command: one sent again gets the first reply, not a rerun")


class Empty(Request):
    pass


class IdentifyRequest(Request):
    capture_id: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,100}$",
                            description="an archived capture, by id (never a path)")
    method: str = DEFAULT_METHOD

    @field_validator("method")
    @classmethod
    def _known(cls, value: str) -> str:
        return known_method(value)


class SessionStartRequest(Request):
    plan: dict[str, Any] = Field(description="a session plan, as in session.example.toml")


COMMANDS: dict[str, type[Request]] = {
    "ping": Empty,
    "arm": Empty, "abort": Empty, "release": Empty, "identify": IdentifyRequest,
    "session/start": SessionStartRequest, "session/stop": Empty, "session/pause": Empty,
    "session/resume": Empty,
}

Handler = Callable[[Any], Awaitable[dict[str, Any] | None]]


class CommandRouter:
    """Verb -> async handler; `handle` turns any request into (reply fields)."""

    def __init__(self, rig_id: str) -> None:
        self.rig_id = rig_id
        self.topics = Topics(rig_id)
        # ping: a client (a dashboard) asks whether it may command; it changes nothing
        self._handlers: dict[str, Handler] = {"ping": self._pong}
        # key -> (when it came, its body's digest, its reply once there)
        self._seen: OrderedDict[tuple[str, ...], tuple[float, str, asyncio.Future[Any]]] = \
            OrderedDict()

    @staticmethod
    async def _pong(request: Request) -> dict[str, Any]:
        return {"pong": True}

    def register(self, verb: str, handler: Handler) -> None:
        if verb not in COMMANDS:
            raise ValueError(f"unknown verb {verb!r}")
        self._handlers[verb] = handler

    def parse(self, topic: str, payload: bytes) -> tuple[str, dict[str, Any] | None, str | None]:
        """(verb, request fields or None, error) of a message on cmd/#."""
        verb = self.topics.verb_of(topic)
        if len(payload) > MAX_REQUEST_BYTES:
            return verb, None, f"the request is larger than {MAX_REQUEST_BYTES} bytes"
        if json_nesting(payload) > MAX_NESTING:
            return verb, None, (f"the request is nested too deeply (more than {MAX_NESTING} "
                                "levels)")
        try:
            data = json.loads(payload or b"{}")
        except (ValueError, UnicodeDecodeError) as exc:
            return verb, None, f"not valid JSON: {exc}"
        except RecursionError:
            return verb, None, "the request is nested too deeply"
        if not isinstance(data, dict):
            return verb, None, "the request must be a JSON object"
        return verb, data, None

    def allowed_response_topic(self, topic: str) -> bool:
        """A v5 response topic: no wildcards, and nothing of this tree but reply/."""
        if not topic or set("+#\x00") & set(topic):
            return False
        return not Topics.is_ours(topic) or self.topics.is_reply(topic)

    def reply_topic(self, verb: str, data: dict[str, Any] | None) -> str:
        """Where a 3.1.1 client's reply goes: its reply_to if under reply/, else reply/<verb>."""
        asked = (data or {}).get("reply_to")
        if isinstance(asked, str) and self.topics.is_reply(asked) \
                and not set("+#\x00") & set(asked):
            return asked
        return self.topics.reply(verb.replace("/", "-"))

    async def handle(self, verb: str, data: dict[str, Any] | None, error: str | None,
                     correlation: bytes | None = None) -> dict[str, Any]:
        """The reply's fields: verb, ok, error or result, correlation_id. A duplicate
        (`correlation`: the v5 correlation data) gets the first one's reply."""
        key, digest = self._key(verb, data, correlation)
        now = time.monotonic()
        while self._seen and (next(iter(self._seen.values()))[0] < now - DUPLICATE_WINDOW_S
                              or len(self._seen) > DUPLICATES_KEPT):
            self._seen.popitem(last=False)
        if key is not None and key in self._seen:
            _, first_digest, first = self._seen[key]
            if first_digest != digest:
                return {"verb": verb, "ok": False, "correlation_id": _correlation(data),
                        "error": f"command_id {key[-1]!r} was used for another request"}
            return dict(await asyncio.shield(first))
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if key is not None:
            self._seen[key] = (now, digest, done)
        try:
            reply = await self._handle(verb, data, error)
            if "error" in reply:
                reply["error"] = one_line(reply["error"])
        except BaseException as exc:
            if key is not None:
                self._seen.pop(key, None)  # a bug or a stop: a retry may run it
            done.set_exception(exc)
            done.exception()  # retrieved: nobody else may be waiting
            raise
        done.set_result(reply)
        return dict(reply)

    @staticmethod
    def _key(verb: str, data: dict[str, Any] | None, correlation: bytes | None
             ) -> tuple[tuple[str, ...] | None, str]:
        """What tells a request again (None: nothing does), and its body's digest."""
        body = json.dumps(data, sort_keys=True, default=str) if data is not None else ""
        digest = hashlib.sha256(body.encode()).hexdigest()
        command_id = (data or {}).get("command_id")
        if isinstance(command_id, str) and command_id:
            return ("id", command_id), digest
        corr = correlation.hex() if correlation else _correlation(data)
        if corr:
            return ("correlation", verb, corr, digest), digest
        return None, digest

    async def _handle(self, verb: str, data: dict[str, Any] | None, error: str | None
                      ) -> dict[str, Any]:
        reply: dict[str, Any] = {"verb": verb, "ok": False,
                                 "correlation_id": _correlation(data)}
        command_id = (data or {}).get("command_id")
        if isinstance(command_id, str):
            reply["command_id"] = command_id
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


def _correlation(data: dict[str, Any] | None) -> str | None:
    correlation = (data or {}).get("correlation_id")
    return correlation if isinstance(correlation, str) else None
