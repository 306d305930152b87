"""The embedded broker: amqtt in this process, on 127.0.0.1, behind listeners of our own.

A fallback for a bench machine with no Mosquitto. It speaks MQTT 3.1.1 only (an MQTT 5
CONNECT gets the CONNACK MQTT 5 defines for a version not spoken: _connect_version.py),
keeps retained messages in memory only (lost when the service stops), and has no users:
TCP clients on 127.0.0.1 come in anonymously.

Both listeners are ours, handed to amqtt as "external" ones, so that each holds a bounded
number of connections (one over the bound is closed at once: a flood of idle clients
cannot take the descriptors the service needs to write captures; amqtt's own bound
queues them with their descriptors open) and so that the websockets listener, opened
only when this process serves the dashboard, lets in the page of this process alone
(_page_gate.py: Origin and Host at the handshake, the page's login, its role's topics).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
from types import TracebackType
from typing import Any, Self

from ._bounds import ConnectionBound
from ._connect_version import V5_REFUSAL, connect_prefix, prefixed_reader
from ._page_gate import PAGE_PEER, PageGate

__all__ = ["LOCALHOST", "MAX_CONNECTIONS", "V311_ONLY", "WEBSOCKETS", "WS_PORT",
           "EmbeddedBroker", "format_url"]

log = logging.getLogger("hilrig.mqtt")

LOCALHOST = "127.0.0.1"
#: the websockets port an embedded broker tries first (Mosquitto's usual one)
WS_PORT = 9001
#: connections each listener holds at most (TCP: the service, workers, monitors;
#: websockets: open dashboard pages)
MAX_CONNECTIONS = {"tcp": 200, "ws": 50}
#: Loggers of the embedded broker and its state machine, held at WARNING unless set.
_QUIET_LOGGERS = ("amqtt", "transitions", "websockets")
#: Broker urls known to speak MQTT 3.1.1 only (the embedded broker, brokers that refused
#: v5 in this process): clients connect with 3.1.1 straight away instead of a v5 CONNECT
#: that such a broker ignores until the connect timeout
V311_ONLY: set[str] = set()
#: the websockets listener of an embedded broker, by its MQTT url: its address and the
#: gate of the page that may use it (the dashboard server of this process asks here)
WEBSOCKETS: dict[str, tuple[str, PageGate]] = {}


def format_url(host: str, port: int) -> str:
    return f"mqtt://[{host}]:{port}" if ":" in host else f"mqtt://{host}:{port}"


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio.start_server
        try:
            s.bind((LOCALHOST, port))
        except OSError:
            return False
        return True


@functools.cache
def _page_writer() -> type:
    """amqtt's websockets writer, telling the page's address marked as the page's (the
    plugins let such a client in only with the page's login: _embedded_plugins.py)."""
    from amqtt.adapters import WebSocketsWriter

    class PageWriter(WebSocketsWriter):
        def __init__(self, connection: Any) -> None:
            super().__init__(connection)
            self.connection = connection

        def get_peer_info(self) -> tuple[str, int] | None:
            host, port = self.connection.remote_address[:2]
            return f"{PAGE_PEER}{host}", int(port)

    return PageWriter


class EmbeddedBroker:
    """An in-process amqtt broker on 127.0.0.1, as an async context manager.

    ``port`` is tried first when given and free; otherwise a free port is picked.
    ``url`` is set once entered. With ``websockets`` (a process that serves the
    dashboard) a websockets listener for the page too (WS_PORT when free), guarded by
    ``gate`` (a new PageGate with the operator's role when not given).
    """

    def __init__(self, port: int | None = None, *, websockets: bool = False,
                 ws_port: int | None = WS_PORT, gate: PageGate | None = None) -> None:
        self._wanted_port = port
        self._websockets = websockets
        self._wanted_ws_port = ws_port
        self.gate = gate or PageGate()
        self._broker: Any = None  # amqtt.broker.Broker (untyped), imported lazily
        self._servers: list[Any] = []
        self._tcp = ConnectionBound("embedded broker, tcp", MAX_CONNECTIONS["tcp"])
        self._ws = ConnectionBound("embedded broker, websockets", MAX_CONNECTIONS["ws"])
        self.port: int | None = None
        self.ws_port: int | None = None

    @property
    def ws_url(self) -> str:
        """MQTT over WebSockets, for the page this process serves."""
        if self.ws_port is None:
            raise RuntimeError("EmbeddedBroker is not running")
        return f"ws://{LOCALHOST}:{self.ws_port}/"

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("EmbeddedBroker is not running")
        return format_url(LOCALHOST, self.port)

    async def __aenter__(self) -> Self:
        for name in _QUIET_LOGGERS:
            logger = logging.getLogger(name)
            if logger.level == logging.NOTSET:
                logger.setLevel(logging.WARNING)
        from amqtt.broker import Broker  # heavy import, only when needed

        # the listeners are ours ("external"); amqtt wants a bind address it never uses
        listeners: dict[str, Any] = {"default": {"type": "external", "bind": f"{LOCALHOST}:0"}}
        if self._websockets:
            listeners["ws"] = {"type": "external", "bind": f"{LOCALHOST}:0"}
        plugin = {"gate": self.gate}
        broker = Broker({"listeners": listeners, "plugins": {
            f"{__package__}._embedded_plugins.PageAuthPlugin": plugin,
            f"{__package__}._embedded_plugins.PageTopicPlugin": plugin}})
        await broker.start()
        self._broker = broker
        try:
            await self._listen()
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        V311_ONLY.add(self.url)
        if self.ws_port is not None:
            WEBSOCKETS[self.url] = (self.ws_url, self.gate)
        self._quiet_handler(asyncio.get_running_loop())
        return self

    async def _listen(self) -> None:
        """Bind the TCP listener (the wanted port if free, else any) and the websockets one."""
        port = self._wanted_port if self._wanted_port and _port_is_free(self._wanted_port) else 0
        try:
            tcp = await asyncio.start_server(self._on_tcp, LOCALHOST, port, reuse_address=True)
        except OSError:  # taken since it was found free: any port will do
            tcp = await asyncio.start_server(self._on_tcp, LOCALHOST, 0, reuse_address=True)
        self._servers.append(tcp)
        self.port = int(tcp.sockets[0].getsockname()[1])
        if not self._websockets:
            return
        from websockets import Subprotocol  # amqtt's dependency
        from websockets.asyncio.server import serve

        wanted = self._wanted_ws_port
        for ws_port in ([wanted] if wanted and _port_is_free(wanted) else []) + [0]:
            try:
                ws = await serve(self._on_ws, LOCALHOST, ws_port,
                                 subprotocols=[Subprotocol("mqtt")],
                                 process_request=self._handshake, open_timeout=10,
                                 max_size=1 << 20)
                break
            except OSError:  # taken since it was found free: any port will do
                if ws_port == 0:
                    raise
        self._servers.append(ws)
        self.ws_port = int(next(iter(ws.sockets)).getsockname()[1])

    async def _on_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._tcp.full():
            writer.close()
            return
        from amqtt.adapters import StreamWriterAdapter

        self._tcp.active += 1
        try:
            prefix, level = await connect_prefix(reader)
            if level == 5:  # refused as MQTT 5 says, before amqtt misreads it
                writer.write(V5_REFUSAL)
                await writer.drain()
                return
            await self._broker.external_connected(prefixed_reader(reader, prefix),
                                                  StreamWriterAdapter(writer), "default")
        except Exception as exc:  # noqa: BLE001 - one client's end is not the broker's
            log.debug("embedded broker: a TCP client ended: %s", exc)
        finally:
            self._tcp.active -= 1
            writer.close()

    def _handshake(self, connection: Any, request: Any) -> Any:
        """A websocket is opened only for the page of this process (see _page_gate.py)."""
        if self._ws.full():
            return connection.respond(503, "the embedded broker holds enough pages\n")
        why = self.gate.refuses_handshake(request.headers.get("Origin"),
                                          request.headers.get("Host"))
        if why is not None:
            log.info("embedded broker: websocket refused: %s", why)
            return connection.respond(403, "not this service's dashboard\n")
        return None

    async def _on_ws(self, connection: Any) -> None:
        from amqtt.adapters import WebSocketsReader

        self._ws.active += 1
        try:
            await self._broker.external_connected(WebSocketsReader(connection),
                                                  _page_writer()(connection), "ws")
        except Exception as exc:  # noqa: BLE001
            log.debug("embedded broker: a websocket client ended: %s", exc)
        finally:
            self._ws.active -= 1

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.port is not None:
            V311_ONLY.discard(self.url)
            WEBSOCKETS.pop(self.url, None)
        servers, self._servers = self._servers, []
        for server in servers:
            server.close()
        broker, self._broker, self.port, self.ws_port = self._broker, None, None, None
        if broker is not None:
            await broker.shutdown()
        for server in servers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 5.0)

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
