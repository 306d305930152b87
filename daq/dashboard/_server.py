"""Serving the page: its files from memory, and config.json, over plain HTTP/1.1.

The page is files (daq/dashboard/static: ours, and the vendored MQTT.js and uPlot) plus
one generated answer, ``config.json``; everything live comes from the broker. So the
server is small and holds little: the files are read once at start (a request never
touches the file system, so no path can leave them), GET and HEAD only, no request body,
a request head of at most 8 KiB, and every answer with a Content-Security-Policy that
lets the page load its own files and open WebSockets, nothing else.

It runs an event loop in a thread of its own (acquisition never waits for a browser)
and holds at most `max_connections` connections, each closed after `idle_timeout_s`
without a request: a connection over the bound is answered 503 and closed at once, so
idle or slow clients cannot take the descriptors the service needs to write captures.

With the embedded broker, `gate` (its PageGate) learns the origins the page is served
from, and config.json carries the page's broker login, to a request whose Host is a
loopback address only (a page of another origin cannot read config.json, and a
DNS-rebinding name for 127.0.0.1 gets no login).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass
from email.utils import formatdate
from http import HTTPStatus
from pathlib import Path
from urllib.parse import unquote

from ..mqtt import ConnectionBound, PageGate, loopback_host
from ._page_config import PageConfig

__all__ = ["MAX_CONNECTIONS", "STATIC_DIR", "DashboardServer", "parse_http_address", "serving"]

log = logging.getLogger("hilrig.dashboard")

STATIC_DIR = Path(__file__).resolve().parent / "static"
#: connections held at once (a browser opens about 6 per page)
MAX_CONNECTIONS = 64
#: a connection without a (complete) request for this long is closed
IDLE_TIMEOUT_S = 10.0
_MAX_HEAD = 8192

_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
        "connect-src 'self' ws: wss:; object-src 'none'; base-uri 'none'; "
        "frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # the page is small; a new version must show at the next load
    "Cache-Control": "no-cache",
}
_TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css",
          ".svg": "image/svg+xml", ".json": "application/json", ".html": "text/html",
          ".txt": "text/plain; charset=utf-8"}


def parse_http_address(text: str) -> tuple[str, int]:
    """'HOST:PORT' -> (host, port) (port 0: any free one); ValueError, one line, otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    return host.strip("[]"), int(port)


def _page_files() -> dict[str, tuple[bytes, str]]:
    """URL path -> (body, content type) of every file of the page."""
    files: dict[str, tuple[bytes, str]] = {}
    for path in sorted(STATIC_DIR.rglob("*")):
        if path.is_file():
            kind = _TYPES.get(path.suffix, "application/octet-stream")
            files["/" + path.relative_to(STATIC_DIR).as_posix()] = (path.read_bytes(), kind)
    files["/"] = files["/index.html"]
    return files


@dataclass
class _Response:
    status: HTTPStatus
    body: bytes = b""
    kind: str = "text/plain; charset=utf-8"
    close: bool = False
    allow: bool = False  # an Allow header (405)


class DashboardServer:
    """The page on http://host:port/ in a thread of its own, as a context manager."""

    def __init__(self, config: PageConfig, host: str = "127.0.0.1", port: int = 8080, *,
                 gate: PageGate | None = None, max_connections: int = MAX_CONNECTIONS,
                 idle_timeout_s: float = IDLE_TIMEOUT_S) -> None:
        self.config, self.host, self.port, self.gate = config, host, port, gate
        self.idle_timeout_s = idle_timeout_s
        self.bound = ConnectionBound("dashboard", max_connections)
        self._files: dict[str, tuple[bytes, str]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopping: asyncio.Event | None = None

    @property
    def refused(self) -> int:
        """Connections turned away (the bound) since start."""
        return self.bound.refused

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("", "0.0.0.0", "::") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"

    def _origins(self) -> list[str]:
        """Where a browser on this machine loads the page from."""
        return [f"http://{h}:{self.port}" for h in ("127.0.0.1", "localhost", "[::1]")]

    # -- start and stop -------------------------------------------------------------------
    def start(self) -> DashboardServer:
        if not (STATIC_DIR / "index.html").is_file():
            raise ConnectionError(f"cannot serve the dashboard: its page is missing from "
                                  f"{STATIC_DIR} (a broken install)")
        self._files = _page_files()
        ready: list[BaseException | None] = []
        started = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready, started),
                                        name="hilrig-dashboard", daemon=True)
        self._thread.start()
        started.wait()
        if ready and ready[0] is not None:
            self._thread.join()
            exc = ready[0]
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise ConnectionError(f"--http {self.host}:{self.port}: cannot serve the "
                                  f"dashboard there: {reason}") from None
        if self.gate is not None:
            for origin in self._origins():
                self.gate.serve_from(origin)
        return self

    def _run(self, ready: list[BaseException | None], started: threading.Event) -> None:
        async def main() -> None:
            self._stopping = asyncio.Event()
            try:
                server = await asyncio.start_server(self._connection, self.host or None,
                                                    self.port, limit=_MAX_HEAD,
                                                    reuse_address=True)
            except OSError as exc:
                ready.append(exc)
                started.set()
                return
            self.port = int(server.sockets[0].getsockname()[1])  # port 0: the one picked
            self._loop = asyncio.get_running_loop()
            ready.append(None)
            started.set()
            async with server:
                await self._stopping.wait()
                server.close()
                # connections still open end now (a browser's keep-alive would hold them)
                for task in asyncio.all_tasks() - {asyncio.current_task()}:
                    task.cancel()

        asyncio.run(main())

    def stop(self) -> None:
        loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if self.gate is not None:
            for origin in self._origins():
                self.gate.withdraw(origin)
        if loop is not None and self._stopping is not None:
            with suppress(RuntimeError):  # the loop ended already
                loop.call_soon_threadsafe(self._stopping.set)
        if thread is not None:
            thread.join(timeout=10)

    def __enter__(self) -> DashboardServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- connections ----------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        if self.bound.full():
            with suppress(OSError):
                writer.write(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\n"
                             b"Connection: close\r\nContent-Length: 0\r\n\r\n")
            writer.close()
            return
        self.bound.active += 1
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"),
                                                  self.idle_timeout_s)
                except asyncio.LimitOverrunError:
                    await self._send(writer, _Response(
                        HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, b"request head too large\n",
                        close=True), head=False)
                    return
                except (TimeoutError, asyncio.IncompleteReadError, OSError):
                    return  # idle, or gone
                response, is_head = self._answer(head)
                await self._send(writer, response, head=is_head)
                if response.close:
                    return
        except (OSError, TimeoutError, asyncio.CancelledError):
            return  # gone, too slow to read its answer, or the server stops
        finally:
            self.bound.active -= 1
            writer.close()

    def _answer(self, head: bytes) -> tuple[_Response, bool]:
        """The response to one request head; whether it was a HEAD request."""
        try:
            lines = head.decode("latin-1").split("\r\n")
            method, target, version = lines[0].split(" ")
            headers = {}
            for line in lines[1:]:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
        except ValueError:
            return _Response(HTTPStatus.BAD_REQUEST, b"bad request\n", close=True), False
        if version not in ("HTTP/1.1", "HTTP/1.0"):
            return _Response(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, close=True), False
        close = version == "HTTP/1.0" or headers.get("connection", "").lower() == "close"
        if method not in ("GET", "HEAD"):
            return _Response(HTTPStatus.METHOD_NOT_ALLOWED, b"GET and HEAD only\n",
                             close=True, allow=True), False
        if headers.get("content-length", "0") != "0" or "transfer-encoding" in headers:
            return _Response(HTTPStatus.BAD_REQUEST, b"no request body\n", close=True), False
        path = unquote(target.split("?", 1)[0].split("#", 1)[0], errors="replace")
        if path == "/config.json":
            body = self._config_json(headers.get("host", ""))
            return _Response(HTTPStatus.OK, body, "application/json", close), method == "HEAD"
        found = self._files.get(path)
        if found is None:
            return _Response(HTTPStatus.NOT_FOUND, b"no such file\n", close=close), \
                method == "HEAD"
        return _Response(HTTPStatus.OK, found[0], found[1], close), method == "HEAD"

    def _config_json(self, host: str) -> bytes:
        """The page's configuration; the embedded broker's login only for a loopback Host."""
        config = self.config
        if self.gate is not None and loopback_host(host):
            config = config.model_copy(update={"broker": config.broker.model_copy(
                update=self.gate.credentials)})
        return config.model_dump_json().encode()

    async def _send(self, writer: asyncio.StreamWriter, r: _Response, head: bool) -> None:
        lines = [f"HTTP/1.1 {r.status.value} {r.status.phrase}",
                 f"Date: {formatdate(usegmt=True)}", f"Content-Type: {r.kind}",
                 f"Content-Length: {len(r.body)}",
                 *(f"{k}: {v}" for k, v in _HEADERS.items())]
        if r.allow:
            lines.append("Allow: GET, HEAD")
        if r.close:
            lines.append("Connection: close")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        if not head:
            writer.write(r.body)
        await asyncio.wait_for(writer.drain(), self.idle_timeout_s)


@asynccontextmanager
async def serving(config: PageConfig, address: str,
                  gate: PageGate | None = None) -> AsyncIterator[DashboardServer]:
    """A DashboardServer on `address` ('HOST:PORT') for the body of an async with."""
    host, port = parse_http_address(address)
    server = DashboardServer(config, host, port, gate=gate).start()
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop)
