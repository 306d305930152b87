"""`hilrig monitor`: one line per message a rig publishes."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
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


def _summary_line(topic: str, payload: bytes, retained: bool) -> str:
    head = f"{topic}{' [retained]' if retained else ''}"
    if not payload:
        return f"{head} (cleared)"
    try:
        msg = loads_bounded(payload)
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
                            **client_options(cfg, url),
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
