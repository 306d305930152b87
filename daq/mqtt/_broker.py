"""Finding an MQTT broker: probe the configured one, else start an embedded amqtt broker.

The embedded broker (_embedded_broker.py) is a fallback for a bench machine with no
Mosquitto: in this process, on 127.0.0.1 only, over TCP and, when this process serves
the dashboard, over WebSockets for that page alone.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from ..config import MqttConfig
from ._embedded_broker import LOCALHOST, EmbeddedBroker, format_url
from ._page_gate import PageGate, Role

log = logging.getLogger("hilrig.mqtt")

DEFAULT_PORT = 1883
TLS_PORT = 8883


def parse_mqtt_url(url: str) -> tuple[str, int]:
    """``mqtt://host[:port]`` (1883) or ``mqtts://host[:port]`` (TLS, 8883) -> (host, port).

    Raises ValueError, with a one-line message naming the url, for anything else
    (other schemes such as ws://, no host, a path, a bad port, credentials in the url:
    they belong in mqtt.username / mqtt.password_file, never in a url that is logged).
    """
    expected = "expected mqtt://host[:port] or mqtts://host[:port]"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"invalid MQTT url {url!r}: {exc}; {expected}") from None
    if parts.scheme not in ("mqtt", "mqtts"):
        raise ValueError(f"unsupported MQTT url {url!r}: scheme must be mqtt:// or mqtts://; "
                         f"{expected}")
    if not parts.hostname or parts.path not in ("", "/") or parts.query or parts.fragment \
            or parts.username or parts.password:
        raise ValueError(f"invalid MQTT url {url!r}: {expected}")
    default = TLS_PORT if parts.scheme == "mqtts" else DEFAULT_PORT
    return parts.hostname, port if port is not None else default


def uses_tls(cfg: MqttConfig, url: str | None = None) -> bool:
    return (url or cfg.url).startswith("mqtts://") or cfg.tls


def client_options(cfg: MqttConfig, url: str | None = None) -> dict[str, Any]:
    """Credentials and TLS for an aiomqtt.Client, from the config (never logged)."""
    import ssl

    opts: dict[str, Any] = {}
    if cfg.username is not None:
        opts["username"] = cfg.username
        opts["password"] = cfg.secret()
    if uses_tls(cfg, url):
        ctx = ssl.create_default_context(cafile=str(cfg.tls_ca_file) if cfg.tls_ca_file
                                         else None)
        if cfg.tls_cert_file is not None:
            ctx.load_cert_chain(str(cfg.tls_cert_file),
                                str(cfg.tls_key_file) if cfg.tls_key_file else None)
        opts["tls_context"] = ctx
    return opts


async def probe_broker(host: str, port: int, timeout_s: float) -> bool:
    """True if an MQTT broker at host:port answers a CONNECT with a CONNACK in time.

    Speaks just enough MQTT 3.1.1 by hand (CONNECT, CONNACK, DISCONNECT) that the probe
    can be cancelled cleanly, unlike a paho connect running in a thread. A refused
    CONNACK (bad credentials, ...) still counts as "a broker answers": the caller then
    gets a clear error from the real connection instead of a silent second broker.
    """
    client_id = f"hilrig-probe-{os.urandom(4).hex()}".encode()
    variable = b"\x00\x04MQTT\x04\x02\x00\x0a"  # MQTT 3.1.1, clean session, keepalive 10 s
    body = variable + len(client_id).to_bytes(2, "big") + client_id
    connect = bytes([0x10, len(body)]) + body  # remaining length < 128: one byte
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(connect)
            await writer.drain()
            connack = await reader.readexactly(4)
            if connack[0] != 0x20 or connack[1] != 0x02:
                return False
            if connack[3] != 0:
                log.warning("MQTT broker at %s refused the probe's connection (CONNACK %d)",
                            format_url(host, port), connack[3])
            writer.write(b"\xe0\x00")  # DISCONNECT
            await writer.drain()
            return True
    except (OSError, TimeoutError, asyncio.IncompleteReadError):
        return False
    finally:
        if writer is not None:
            writer.close()
            try:
                await writer.wait_closed()
            except OSError:
                pass


@asynccontextmanager
async def resolve_broker(cfg: MqttConfig, *, websockets: bool = False,
                         page_role: Role = "operator") -> AsyncIterator[str]:
    """Yield the url of a broker to use: cfg.url if a broker answers there in time.

    If nothing answers within cfg.connect_timeout_s and cfg.embedded_fallback is set,
    start an EmbeddedBroker on 127.0.0.1 (on cfg.url's port if free, else a free port;
    with a websockets listener when `websockets`: a process serving the dashboard, for
    that page alone, with the broker role `page_role`; see _page_gate.py), log
    a WARNING saying where, yield its url and shut it down on exit. Without the
    fallback, raise ConnectionError. Only the start is checked: a broker that goes away
    later is not replaced.
    """
    host, port = parse_mqtt_url(cfg.url)
    if uses_tls(cfg) or cfg.username is not None:
        # a secured broker is never replaced by the embedded one (no TLS, no users); the
        # connection itself says what is wrong, and the courier keeps retrying
        yield cfg.url
        return
    if await probe_broker(host, port, cfg.connect_timeout_s):
        yield cfg.url
        return
    if not cfg.embedded_fallback:
        raise ConnectionError(f"no MQTT broker answers at {cfg.url} within "
                              f"{cfg.connect_timeout_s:g} s (mqtt.embedded_fallback is off)")
    async with EmbeddedBroker(port, websockets=websockets,
                              gate=PageGate(page_role)) as broker:
        log.warning("no MQTT broker answers at %s: started an embedded broker at %s%s "
                    "(listening on %s only; retained messages kept in memory)", cfg.url,
                    broker.url, f", websockets for this process's dashboard at {broker.ws_url}"
                    if broker.ws_port is not None else "", LOCALHOST)
        yield broker.url
