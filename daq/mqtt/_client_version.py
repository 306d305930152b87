"""A client's connection in MQTT 5 where the broker speaks it, else 3.1.1.

Mosquitto speaks both; the embedded broker (amqtt) 3.1.1 only, and refuses a v5 CONNECT
with CONNACK 0x84 (_connect_version.py). Every hilrig client that prefers v5 (the
service's courier for response topics, `hilrig cmd`, `hilrig worker` for its one job in
flight) connects through `enter_client`: v5 first, 3.1.1 when the broker refuses it, and
straight to 3.1.1 for a url this process already knows as 3.1.1 only (V311_ONLY).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import aiomqtt

from ._embedded_broker import V311_ONLY

__all__ = ["connected", "enter_client"]

log = logging.getLogger("hilrig.mqtt")

MakeClient = Callable[[aiomqtt.ProtocolVersion], aiomqtt.Client]


def _refused_at_once(exc: aiomqtt.MqttError) -> bool:
    """Nothing listens there: no reason to try another version."""
    text = str(exc).lower()
    return "errno 111" in text or "connection refused" in text


async def enter_client(url: str, make: MakeClient, *, v5: bool = True
                       ) -> tuple[aiomqtt.Client, aiomqtt.ProtocolVersion]:
    """The client `make(version)` makes, connected (its __aenter__ done), and its version.
    The last MqttError propagates when no version connects."""
    versions = (([aiomqtt.ProtocolVersion.V5] if v5 and url not in V311_ONLY else [])
                + [aiomqtt.ProtocolVersion.V311])
    for version in versions:
        client = make(version)
        try:
            await client.__aenter__()
        except aiomqtt.MqttError as exc:
            if version is aiomqtt.ProtocolVersion.V5 and not _refused_at_once(exc):
                log.info("broker at %s did not take MQTT v5 (%s); trying 3.1.1", url, exc)
                V311_ONLY.add(url)
                continue
            V311_ONLY.discard(url)  # next time, ask for v5 again: it may be another broker
            raise
        return client, version
    raise AssertionError("unreachable: 3.1.1 is always tried last")


@asynccontextmanager
async def connected(url: str, make: MakeClient, *, v5: bool = True
                    ) -> AsyncIterator[tuple[aiomqtt.Client, aiomqtt.ProtocolVersion]]:
    """enter_client as a context: the client disconnects on leaving."""
    client, version = await enter_client(url, make, v5=v5)
    try:
        yield client, version
    finally:
        await client.__aexit__(None, None, None)
