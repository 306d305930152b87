"""A library that repeats itself fills no disk: a few lines a minute from each place, one
line each; hilrig's own lines untouched."""

from __future__ import annotations

import asyncio
import io
import logging
import time

import pytest

from hilrig.daq.cli._log_limits import LibraryLogLimit
from hilrig.daq.mqtt import EmbeddedBroker


def _handler(limit: LibraryLogLimit) -> tuple[logging.Handler, io.StringIO]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    handler.addFilter(limit)
    return handler, out


def test_one_place_in_a_library_shows_a_few_lines_a_window_and_counts_the_rest():
    limit = LibraryLogLimit(burst=3, window_s=0.2)
    handler, out = _handler(limit)
    lib, ours = logging.getLogger("amqtt.broker.test"), logging.getLogger("hilrig.test")
    for logger in (lib, ours):
        logger.addHandler(handler)
        logger.propagate = False

    def fail() -> None:  # one place in the library's code
        try:
            raise RuntimeError("a client\nthat never acknowledges")
        except RuntimeError:
            lib.exception("Task failed and will be skipped")

    try:
        for _ in range(500):
            fail()
        ours.warning("ours %d", 1)
        ours.warning("ours %d", 2)
        time.sleep(0.25)
        fail()
    finally:
        for logger in (lib, ours):
            logger.removeHandler(handler)
            logger.propagate = True
    lines = out.getvalue().splitlines()
    lib_lines = [line for line in lines if line.startswith("amqtt")]
    assert len(lib_lines) == 4, lines  # 3 in the first window, 1 in the next
    assert all("Traceback" not in line for line in lines)
    assert "RuntimeError: a client\\nthat never acknowledges" in lib_lines[0]
    assert "are counted, not shown" in lib_lines[2]
    assert "(497 more like this not shown)" in lib_lines[3]
    assert [line for line in lines if line.startswith("hilrig")] == [
        "hilrig.test: ours 1", "hilrig.test: ours 2"]


@pytest.mark.fault(injected="bad input: a client of the embedded broker subscribes with QoS 1 "
                            "to '#' and never acknowledges, for 10 s of 100 messages a second",
                   expected="a handful of one-line log lines, no traceback (1,835 lines, 917 "
                            "tracebacks in 15 s before)")
@pytest.mark.timeout(120)
async def test_a_client_that_never_acknowledges_leaves_a_handful_of_log_lines():
    import aiomqtt

    handler, out = _handler(LibraryLogLimit())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        async with EmbeddedBroker(None) as broker:
            reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
            body = b"\x00\x04MQTT\x04\x02\x00\x3c" + b"\x00\x05noack"  # CONNECT, 3.1.1
            writer.write(bytes([0x10, len(body)]) + body)
            await reader.readexactly(4)
            writer.write(b"\x82\x06\x00\x01\x00\x01#\x01")  # SUBSCRIBE '#' at QoS 1
            await reader.readexactly(5)
            async with aiomqtt.Client("127.0.0.1", broker.port,
                                      protocol=aiomqtt.ProtocolVersion.V311) as client:
                t0 = time.monotonic()
                while time.monotonic() - t0 < 10.0:
                    await client.publish("hilrig/r/telemetry", b"x" * 100, qos=1)
                    await asyncio.sleep(0.01)
            writer.close()
    finally:
        root.removeHandler(handler)
    lines = [line for line in out.getvalue().splitlines() if line.startswith(
        ("amqtt", "asyncio", "transitions", "websockets"))]
    assert len(lines) <= 30, "\n".join(lines[:40])
    assert "Traceback" not in out.getvalue()
