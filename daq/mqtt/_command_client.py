"""The client side of commands (`hilrig cmd`): a request, its reply by correlation.

Over MQTT v5 the reply topic and the correlation ride as the request's properties; on a
3.1.1-only broker (the embedded one of another hilrig process) as its `reply_to` and
`correlation_id` fields, which the service's router answers the same way (_commands.py).
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from ..config import MqttConfig, loads_bounded
from ._broker import client_options, parse_mqtt_url
from ._client_version import connected
from ._topics import Topics

__all__ = ["send_command"]


async def send_command(cfg: MqttConfig, verb: str, body: dict[str, Any], *, url: str | None = None,
                       timeout_s: float = 30.0) -> dict[str, Any]:
    """The client side (`hilrig cmd`): the request, and its reply matched by correlation
    (v5 correlation data, or a 3.1.1 broker's correlation_id)."""
    host, port = parse_mqtt_url(url or cfg.url)
    token = os.urandom(6).hex()
    topics = Topics(cfg.rig_id)
    response = topics.reply(f"cli-{token}")
    props = Properties(PacketTypes.PUBLISH)
    props.ResponseTopic = response
    props.CorrelationData = token.encode()

    def make(version: aiomqtt.ProtocolVersion) -> aiomqtt.Client:
        return aiomqtt.Client(host, port, identifier=f"hilrig-cmd-{token}", protocol=version,
                              timeout=cfg.connect_timeout_s, **client_options(cfg, url))

    try:
        async with connected(url or cfg.url, make) as (client, version):
            v5 = version is aiomqtt.ProtocolVersion.V5
            await client.subscribe(response, qos=1)
            # an id of its own: a redelivered message is not run twice (_commands.py)
            request = {"command_id": f"cli-{token}", **body}
            if not v5:
                request.update(reply_to=response, correlation_id=token)
            await client.publish(topics.command(verb), json.dumps(request), qos=1,
                                 properties=props if v5 else None)
            async with asyncio.timeout(timeout_s):
                async for message in client.messages:
                    if message.topic.value != response:
                        continue
                    try:
                        reply: dict[str, Any] = loads_bounded(message.payload)
                    except ValueError:
                        continue  # not a reply: the topic is this request's own
                    got = (getattr(message.properties, "CorrelationData", None) if v5
                           else str(reply.get("correlation_id", "")).encode())
                    if got == token.encode():
                        return reply
    except TimeoutError:
        raise ConnectionError(f"cmd {verb}: no reply from rig {cfg.rig_id} within "
                              f"{timeout_s:g} s (is the service running?)") from None
    except aiomqtt.MqttError as exc:
        raise ConnectionError(f"cmd {verb}: MQTT broker at {url or cfg.url}: {exc}") from None
    raise ConnectionError(f"cmd {verb}: the connection closed before the reply")
