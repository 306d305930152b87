"""The embedded broker's answer to an MQTT 5 CONNECT: the CONNACK MQTT 5 defines for it.

amqtt speaks 3.1.1 only and misreads a v5 CONNECT (its properties shift the will and the
login): it warned `Will flag set, but will topic/message not present`, or said nothing
until the client's connect timeout. MQTT 5.0 section 3.1.2.2 lets a server refuse a
protocol version it does not speak with CONNACK reason code 0x84 (Unsupported Protocol
Version) and close: a v5 client then knows at once to try 3.1.1. So the TCP listener
reads a CONNECT's header up to its protocol level before amqtt does; a level-5 CONNECT
gets that CONNACK, anything else goes on to amqtt with the bytes already read.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["V5_REFUSAL", "connect_prefix", "prefixed_reader"]

#: CONNACK (v5): session present 0, reason 0x84 Unsupported Protocol Version, no properties
V5_REFUSAL = bytes([0x20, 0x03, 0x00, 0x84, 0x00])
#: how long a new connection may take to send its CONNECT's header
HEADER_TIMEOUT_S = 10.0


async def connect_prefix(reader: asyncio.StreamReader) -> tuple[bytes, int | None]:
    """The first bytes of a connection, up to a CONNECT's protocol level, and that level
    (None: not a CONNECT of the form MQTT 3.1.1 and 5 share; amqtt will say so)."""
    data = bytearray()
    try:
        async with asyncio.timeout(HEADER_TIMEOUT_S):
            data += await reader.readexactly(1)
            if data[0] != 0x10:  # not CONNECT
                return bytes(data), None
            for _ in range(4):  # remaining length: a varint of 1-4 bytes
                data += await reader.readexactly(1)
                if not data[-1] & 0x80:
                    break
            data += await reader.readexactly(7)  # 0x0004 "MQTT" and the protocol level
    except (asyncio.IncompleteReadError, TimeoutError):
        return bytes(data), None
    if data[-7:-1] != b"\x00\x04MQTT":
        return bytes(data), None
    return bytes(data), data[-1]


def prefixed_reader(reader: asyncio.StreamReader, prefix: bytes) -> Any:
    """amqtt's reader adapter of `reader`, giving `prefix` (bytes already read) first."""
    from amqtt.adapters import StreamReaderAdapter  # heavy: only with a broker

    class Prefixed(StreamReaderAdapter):
        def __init__(self) -> None:
            super().__init__(reader)
            self._prefix = prefix

        async def read(self, n: int = -1) -> bytes:
            if not self._prefix:
                return await super().read(n)
            if n == -1:
                head, self._prefix = self._prefix, b""
                return head + await super().read(-1)
            head, self._prefix = self._prefix[:n], self._prefix[n:]
            return head + (await super().read(n - len(head)) if len(head) < n else b"")

    return Prefixed()
