"""Finding an MQTT broker: probe the configured one, else start an embedded amqtt broker.

The embedded broker is a fallback for a bench machine with no Mosquitto. It runs in
this process, listens on 127.0.0.1 only (never 0.0.0.0), over TCP and, when this process
serves the dashboard, over WebSockets (port 9001 when free), speaks MQTT 3.1.1 only (amqtt
rejects MQTT 5 and 3.1 CONNECTs), keeps retained messages in memory only (lost when
the service stops) and has no authentication. Retained messages and the last will
(retained) work on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

from ..config import MqttConfig

log = logging.getLogger("hilrig.mqtt")

DEFAULT_PORT = 1883
TLS_PORT = 8883
LOCALHOST = "127.0.0.1"
#: Loggers of the embedded broker and its state machine, held at WARNING unless set.
_QUIET_LOGGERS = ("amqtt", "transitions")
#: Broker urls known to speak MQTT 3.1.1 only (the embedded broker, brokers that refused
#: v5 in this process): clients connect with 3.1.1 straight away instead of a v5 CONNECT
#: that such a broker ignores until the connect timeout
V311_ONLY: set[str] = set()
#: the MQTT-over-WebSockets url of an embedded broker, by its MQTT url: where the
#: dashboard's page connects when this process runs the broker
WEBSOCKETS: dict[str, str] = {}
#: the websockets port an embedded broker tries first (Mosquitto's usual one)
WS_PORT = 9001


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


def _format_url(host: str, port: int) -> str:
    return f"mqtt://[{host}]:{port}" if ":" in host else f"mqtt://{host}:{port}"


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
                            _format_url(host, port), connack[3])
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


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio.start_server
        try:
            s.bind((LOCALHOST, port))
        except OSError:
            return False
        return True


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOCALHOST, 0))
        return int(s.getsockname()[1])


class EmbeddedBroker:
    """An in-process amqtt broker on 127.0.0.1, as an async context manager.

    ``port`` is tried first when given and free; otherwise a free port is picked.
    ``url`` is set once entered. Anonymous clients are allowed; no $SYS topics.
    """

    def __init__(self, port: int | None = None, *, websockets: bool = False,
                 ws_port: int | None = WS_PORT) -> None:
        self._wanted_port = port
        # MQTT over WebSockets only when this process serves the dashboard: any web page
        # open in a browser on this machine can reach a localhost websocket, and the
        # embedded broker has no users
        self._websockets = websockets
        self._wanted_ws_port = ws_port
        self._broker: Any = None  # amqtt.broker.Broker (untyped), imported lazily
        self.port: int | None = None
        self.ws_port: int | None = None

    @property
    def ws_url(self) -> str:
        """MQTT over WebSockets, for a browser on this machine."""
        if self.ws_port is None:
            raise RuntimeError("EmbeddedBroker is not running")
        return f"ws://{LOCALHOST}:{self.ws_port}/"

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("EmbeddedBroker is not running")
        return _format_url(LOCALHOST, self.port)

    async def __aenter__(self) -> Self:
        for name in _QUIET_LOGGERS:
            logger = logging.getLogger(name)
            if logger.level == logging.NOTSET:
                logger.setLevel(logging.WARNING)
        from amqtt.broker import Broker, BrokerError  # heavy import, only when needed

        candidates: list[int] = []
        if self._wanted_port and _port_is_free(self._wanted_port):
            candidates.append(self._wanted_port)
        candidates += [_free_port() for _ in range(3)]  # a picked port can be taken meanwhile
        ws_candidates = [self._wanted_ws_port] if self._wanted_ws_port and _port_is_free(
            self._wanted_ws_port) else []
        last_error: Exception | None = None
        for port in candidates:
            listeners: dict[str, Any] = {"default": {"type": "tcp",
                                                     "bind": f"{LOCALHOST}:{port}"}}
            ws_port = None
            if self._websockets:  # for the dashboard's page, on 127.0.0.1 only too
                ws_port = ws_candidates.pop() if ws_candidates else _free_port()
                listeners["ws"] = {"type": "ws", "bind": f"{LOCALHOST}:{ws_port}"}
            broker = Broker({
                "listeners": listeners,
                "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin":
                            {"allow_anonymous": True}},
            })
            try:
                await broker.start()
            except (BrokerError, OSError) as exc:
                last_error = exc
                with contextlib.suppress(Exception):  # a listener it opened is let go
                    await broker.shutdown()
                continue
            self._broker, self.port, self.ws_port = broker, port, ws_port
            V311_ONLY.add(self.url)
            if ws_port is not None:
                WEBSOCKETS[self.url] = self.ws_url
            self._quiet_handler(asyncio.get_running_loop())
            return self
        raise RuntimeError(f"could not start the embedded MQTT broker on {LOCALHOST}: "
                           f"{last_error}")

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.port is not None:
            V311_ONLY.discard(self.url)
            WEBSOCKETS.pop(self.url, None)
        broker, self._broker, self.port, self.ws_port = self._broker, None, None, None
        if broker is not None:
            await broker.shutdown()

    @staticmethod
    def _quiet_handler(loop: asyncio.AbstractEventLoop) -> None:
        """amqtt cancels a client's handler task when the client hangs up early, and the
        stream callback then reports the cancellation as an error with a traceback; that
        report, and only that, is logged at DEBUG instead."""
        previous = loop.get_exception_handler()

        def handler(lp: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
            exc = context.get("exception")
            if isinstance(exc, asyncio.CancelledError) and "connection_made" in str(
                    context.get("message", "")) + repr(context.get("handle", "")):
                log.debug("embedded broker: a client hung up during its connection")
                return
            if previous is not None:
                previous(lp, context)
            else:
                lp.default_exception_handler(context)

        loop.set_exception_handler(handler)


@asynccontextmanager
async def resolve_broker(cfg: MqttConfig, *, websockets: bool = False) -> AsyncIterator[str]:
    """Yield the url of a broker to use: cfg.url if a broker answers there in time.

    If nothing answers within cfg.connect_timeout_s and cfg.embedded_fallback is set,
    start an EmbeddedBroker on 127.0.0.1 (on cfg.url's port if free, else a free port;
    with a websockets listener when `websockets`: a process serving the dashboard), log
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
    async with EmbeddedBroker(port, websockets=websockets) as broker:
        log.warning("no MQTT broker answers at %s: started an embedded broker at %s%s "
                    "(listening on %s only; retained messages kept in memory)", cfg.url,
                    broker.url, f", websockets for dashboards at {broker.ws_url}"
                    if broker.ws_port is not None else "", LOCALHOST)
        yield broker.url
