"""Serving the page: static files from the package, and config.json, over plain HTTP.

The page is files (daq/dashboard/static: ours, and the vendored MQTT.js and uPlot) plus
one generated answer, ``config.json``; everything live comes from the broker, so the
server is the standard library's threading HTTP server, GET and HEAD only, no directory
listings, every answer with a Content-Security-Policy that lets the page load its own
files and open WebSockets, nothing else.
"""

from __future__ import annotations

import asyncio
import io
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ._page_config import PageConfig

__all__ = ["STATIC_DIR", "DashboardServer", "parse_http_address", "serving"]

log = logging.getLogger("hilrig.dashboard")

STATIC_DIR = Path(__file__).resolve().parent / "static"

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
          ".svg": "image/svg+xml", ".json": "application/json", ".html": "text/html"}


def parse_http_address(text: str) -> tuple[str, int]:
    """'HOST:PORT' -> (host, port) (port 0: any free one); ValueError, one line, otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"--http {text!r}: expected HOST:PORT, e.g. 127.0.0.1:8080")
    return host.strip("[]"), int(port)


class _Handler(SimpleHTTPRequestHandler):
    server: _Server

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(STATIC_DIR), **kwargs)

    def end_headers(self) -> None:
        for name, value in _HEADERS.items():
            self.send_header(name, value)
        super().end_headers()

    def guess_type(self, path: str | Any) -> str:
        return _TYPES.get(Path(str(path)).suffix, None) or super().guess_type(path)

    def send_head(self) -> Any:
        route = self.path.split("?", 1)[0].split("#", 1)[0]
        if route == "/config.json":
            body = self.server.config_json
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)
        return super().send_head()

    def list_directory(self, path: Any) -> None:
        self.send_error(HTTPStatus.NOT_FOUND, "no such file")
        return None

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        log.debug("dashboard %s: " + format, self.address_string(), *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    config_json: bytes = b"{}"


class DashboardServer:
    """The page on http://host:port/ in a thread of its own, as a context manager."""

    def __init__(self, config: PageConfig, host: str = "127.0.0.1", port: int = 8080) -> None:
        self.config, self.host, self.port = config, host, port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}/"

    def start(self) -> DashboardServer:
        if not (STATIC_DIR / "index.html").is_file():
            raise ConnectionError(f"cannot serve the dashboard: its page is missing from "
                                  f"{STATIC_DIR} (a broken install)")
        try:
            server = _Server((self.host, self.port), _Handler)
        except OSError as exc:
            raise ConnectionError(f"--http {self.host}:{self.port}: cannot serve the "
                                  f"dashboard there: {exc.strerror or exc}") from None
        server.config_json = self.config.model_dump_json().encode()
        self.port = int(server.server_address[1])  # port 0: the one picked
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="hilrig-dashboard",
                                        kwargs={"poll_interval": 0.2}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> DashboardServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@asynccontextmanager
async def serving(config: PageConfig, address: str) -> AsyncIterator[DashboardServer]:
    """A DashboardServer on `address` ('HOST:PORT') for the body of an async with."""
    host, port = parse_http_address(address)
    server = DashboardServer(config, host, port).start()
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop)
