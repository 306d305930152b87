"""One serial connection: the port, and its asyncio protocol forwarding to the bridge."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import serial

__all__ = ["Link", "Port"]


class Port(serial.Serial):
    """pyserial's port, which on opening may keep what waits in its input buffer.

    pyserial empties the input buffer whenever it opens a port; a reconnecting bridge
    wants those bytes (the board went on streaming while the port was away).
    """

    def __init__(self, *args: Any, keep_input: bool = False, **kwargs: Any) -> None:
        self._keep_input = keep_input
        super().__init__(*args, **kwargs)  # opens the port
        self._keep_input = False

    def _reset_input_buffer(self) -> None:
        if not self._keep_input:
            super()._reset_input_buffer()


class Link(asyncio.Protocol):
    """Forwards one connection's callbacks, tagged with its generation, to its owner.

    `on_data(gen, data)` says whether that generation is streaming: then reads are
    coalesced, one every `read_interval_s`. `on_lost(gen, exc)` hears the port go.
    """

    def __init__(self, gen: int, on_data: Callable[[int, bytes], bool],
                 on_lost: Callable[[int, Exception | None], None],
                 read_interval_s: float = 0.0) -> None:
        self.gen = gen
        self.on_data = on_data
        self.on_lost = on_lost
        self.read_interval_s = read_interval_s
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.ReadTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)  # a serial transport reads
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        streaming = self.on_data(self.gen, data)
        if streaming and self.read_interval_s > 0 and len(data) < 2048 \
                and self.transport is not None:
            # coalesce reads: one wakeup per read_interval_s takes several frames
            # (about 1 ms each) instead of one wakeup per frame; a backlog (a long
            # read) is drained at full speed
            self.transport.pause_reading()
            asyncio.get_running_loop().call_later(self.read_interval_s, self._resume)

    def _resume(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
        self.on_lost(self.gen, exc)
