"""`hilrig monitor`: one line per message a rig publishes."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from dataclasses import dataclass
from typing import Any, TextIO

import aiomqtt

from ..config import MqttConfig, loads_bounded
from ._broker import client_options, parse_mqtt_url
from ._topics import Topics

__all__ = ["monitor"]


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
              if k.startswith(("mu_d", "mu_s", "mu_v", "Fc", "Fs", "b", "cd"))]
    return " ".join(parts)


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, (int, float)):
        return "?"
    m, sec = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{sec:02d}s"


def _status_text(msg: dict[str, Any]) -> str:
    source = msg.get("source") or {}
    text = f"rig {msg.get('state')}"
    if msg.get("reason"):
        text += f" ({msg['reason']})"
    if msg.get("session_id"):
        text += f", session {msg['session_id']}"
    if source:
        text += f", source {source.get('identity')}"
    link = msg.get("link") or {}
    trouble = {k: v for k, v in link.items() if v and k != "samples"}
    if trouble:
        text += ", link " + " ".join(f"{k}={_num(v)}" for k, v in trouble.items())
    return text


def _capture_text(msg: dict[str, Any]) -> str:
    doc = msg.get("document")
    cid = msg.get("capture_id")
    seq = f" #{msg['seq']}" if msg.get("seq") else ""
    if doc == "start":
        return f"capture {cid}{seq} started (release detected)"
    if doc == "progress":
        return (f"capture {cid}{seq} recording: {_num(msg.get('duration_s'))} s, "
                f"{msg.get('samples')} samples")
    if doc == "stop":
        if msg.get("exit_status") not in (None, "success"):
            return f"capture {cid}{seq} {msg.get('exit_status')}: {msg.get('reason')}"
        facts = [f"{_num(msg['duration_s'])} s" if msg.get("duration_s") is not None else "",
                 f"{msg['samples']} samples" if msg.get("samples") is not None else "",
                 f"{msg['lost_samples']} lost" if msg.get("lost_samples") is not None else "",
                 f"end {msg['end_reason']}" if msg.get("end_reason") else ""]
        return f"capture {cid}{seq} done: " + ", ".join(f for f in facts if f)
    return f"capture {cid} {doc}"


def _session_text(msg: dict[str, Any]) -> str:
    planned = msg.get("planned")
    count = f"{msg.get('done', 0)}/{planned} done" if planned else f"{msg.get('done', 0)} done"
    text = (f"session {msg.get('session_id')} {msg.get('state')}: {count}, "
            f"{msg.get('failed', 0)} failed, {msg.get('in_flight', 0)} identifying")
    if msg.get("current_seq"):
        text += f", capture #{msg['current_seq']}"
    if msg.get("eta_s") is not None:
        text += f", ETA {_duration(msg['eta_s'])}"
    for key in ("prompt", "reason"):
        if msg.get(key):
            text += f"; {msg[key]}"
    return text


def _telemetry_text(msg: dict[str, Any]) -> str:
    last = {k: (msg.get(k) or [None])[-1] for k in ("theta0_deg", "theta1_deg", "omega0_dps",
                                                    "omega1_dps")}
    return (f"telemetry {len(msg.get('t') or [])} samples at {_num(msg.get('rate_hz'))} Hz: "
            f"arm {_num(last['theta0_deg'])} deg {_num(last['omega0_dps'])} deg/s, "
            f"pendulum {_num(last['theta1_deg'])} deg {_num(last['omega1_dps'])} deg/s")


def _summary_line(topic: str, payload: bytes, retained: bool) -> str:
    """What a message means, in one line: a rig's state, a capture's progress, a session's
    state and counts, an event's level, code and message, a result's key figures."""
    head = f"{topic}{' [retained]' if retained else ''}"
    if not payload:
        return f"{head} (cleared)"
    try:
        msg = loads_bounded(payload)
    except ValueError as exc:
        if "bytes, more than" in str(exc):
            return f"{head} ({len(payload)} bytes, too large to show)"
        return f"{head} (not JSON) {payload[:80]!r}"
    if not isinstance(msg, dict):
        return f"{head} (not a JSON object) {payload[:80]!r}"
    schema = str(msg.get("schema", ""))
    kind = schema.split("/")[0].removeprefix("hilrig.")
    if kind == "status":
        text = _status_text(msg)
    elif kind == "capture":
        text = _capture_text(msg)
    elif kind == "result":
        text = "result " + _result_text(msg)
    elif kind == "session":
        text = _session_text(msg)
    elif kind == "event":
        text = f"{str(msg.get('level', '?')).upper()} {msg.get('code')}: {msg.get('message')}"
    elif kind == "telemetry":
        text = _telemetry_text(msg)
    elif kind == "capture_record":
        results = msg.get("results") or {}
        text = (f"session {msg.get('session_id')} capture {msg.get('capture_id')}"
                f" #{msg.get('seq')} {msg.get('status')}"
                + (f": {msg['reason']}" if msg.get("reason") else "")
                + "".join(f"; {m} fit[{_fit_text(r.get('fit_percent'))}]"
                          for m, r in results.items() if isinstance(r, dict)))
    elif kind == "overlay":
        text = (f"overlay {msg.get('method')} of capture {msg.get('capture_id')}: "
                f"{len(msg.get('t_s') or [])} points of {', '.join(msg.get('joints') or [])}")
    elif kind == "reply":
        text = (f"reply to {msg.get('verb')}: " + ("ok" if msg.get("ok") else
                                                   f"refused: {msg.get('error')}"))
    else:
        text = f"schema={schema or '?'} keys={','.join(sorted(msg))[:80]}"
    stamp = str(msg.get("time", "?"))
    return f"{stamp[11:19] if len(stamp) >= 19 else stamp} {text}  [{head}]"


def topic_filters(rig_id: str, patterns: list[str] | None) -> list[str]:
    """The filters `hilrig monitor --topic` subscribes to: each pattern under
    ``hilrig/<rig_id>/`` (MQTT wildcards: + one level, # the rest, last), or everything.
    ValueError naming a pattern that is no filter."""
    topics = Topics(rig_id)
    if not patterns:
        return [topics.all]
    filters = []
    for p in patterns:
        levels = p.split("/")
        if not p or p.startswith("/") or any(
                ("#" in lv and (lv != "#" or k != len(levels) - 1)) or ("+" in lv and lv != "+")
                for k, lv in enumerate(levels)):
            raise ValueError(f"--topic {p!r}: not a topic filter under {topics.prefix}/ (levels "
                             "joined by /, + for one level, # last for the rest)")
        filters.append(f"{topics.prefix}/{p}")
    return filters


#: s between attempts to reach a broker that went away, the last one repeated
_RECONNECT_S = (1.0, 2.0, 5.0)


@dataclass
class _Watch:
    seen: int = 0  # messages printed
    reached: bool = False  # the broker was listened to once
    lost: bool = False  # it went away and is not back yet


async def monitor(cfg: MqttConfig, *, url: str | None = None, out: TextIO | None = None,
                  max_messages: int | None = None, timeout_s: float | None = None,
                  raw: bool = False, topics: list[str] | None = None,
                  err: TextIO | None = None) -> int:
    """Print one line per message under ``hilrig/<rig_id>/#``, or under the `topics`
    patterns there (topic_filters): what it means (raw: its topic and payload as they
    are); return how many were seen.

    Stops after max_messages messages or timeout_s seconds of listening, whichever comes
    first (neither: until cancelled). A broker that goes away once listened to is waited
    for, with a line on `err` when it goes and when it is back (a session's embedded
    broker ends with the session); one never reached is a ConnectionError. Backs
    ``hilrig monitor``.
    """
    out = out if out is not None else sys.stdout  # the ones in use now
    err = err if err is not None else sys.stderr
    url = cfg.url if url is None else url
    filters = topic_filters(cfg.rig_id, topics)
    watch = _Watch()
    try:
        async with asyncio.timeout(timeout_s):
            gone = 0
            while True:
                try:
                    await _listen(cfg, url, filters, out, err, raw, max_messages, watch)
                    return watch.seen
                except aiomqtt.MqttError as exc:
                    if not watch.reached:
                        raise ConnectionError(f"MQTT monitor on {url}: {exc}") from None
                    if not watch.lost:
                        print(f"monitor: broker at {url} went away ({exc}); waiting for it",
                              file=err, flush=True)
                        watch.lost, gone = True, 0
                    await asyncio.sleep(_RECONNECT_S[min(gone, len(_RECONNECT_S) - 1)])
                    gone += 1
    except TimeoutError:
        pass
    return watch.seen


async def _listen(cfg: MqttConfig, url: str, filters: list[str], out: TextIO, err: TextIO,
                  raw: bool, max_messages: int | None, watch: _Watch) -> None:
    """One connection's messages, until max_messages in all (returns) or the broker goes
    (MqttError)."""
    host, port = parse_mqtt_url(url)
    client = aiomqtt.Client(host, port, identifier=f"hilrig-monitor-{os.urandom(4).hex()}",
                            **client_options(cfg, url),
                            keepalive=cfg.keepalive_s, timeout=cfg.connect_timeout_s,
                            logger=logging.getLogger("hilrig.mqtt.client"))
    async with client:
        for f in filters:
            await client.subscribe(f, qos=1)
        if watch.lost:
            print(f"monitor: broker at {url} is back", file=err, flush=True)
        watch.reached, watch.lost = True, False
        async for message in client.messages:
            if not any(message.topic.matches(f) for f in filters):
                continue  # amqtt 0.12.1 can send retained messages unasked
            body = message.payload
            payload = bytes(body) if isinstance(body, (bytes, bytearray)) \
                else str(body or "").encode()
            line = (f"{message.topic.value} {payload.decode(errors='replace')}" if raw else
                    _summary_line(message.topic.value, payload, message.retain))
            print(line, file=out, flush=True)
            watch.seen += 1
            if max_messages is not None and watch.seen >= max_messages:
                return
