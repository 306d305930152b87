"""The client side of commands (`hilrig cmd`): a request over MQTT v5, its reply by correlation."""

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
from ._topics import Topics

__all__ = ["send_command"]


async def send_command(cfg: MqttConfig, verb: str, body: dict[str, Any], *, url: str | None = None,
                       timeout_s: float = 30.0) -> dict[str, Any]:
    """The client side (`hilrig cmd`): request over MQTT v5, the reply by correlation data."""
    host, port = parse_mqtt_url(url or cfg.url)
    token = os.urandom(6).hex()
    topics = Topics(cfg.rig_id)
    response = topics.reply(f"cli-{token}")
    props = Properties(PacketTypes.PUBLISH)
    props.ResponseTopic = response
    props.CorrelationData = token.encode()
    try:
        async with aiomqtt.Client(host, port, identifier=f"hilrig-cmd-{token}",
                                  protocol=aiomqtt.ProtocolVersion.V5,
                                  timeout=cfg.connect_timeout_s,
                                  **client_options(cfg, url)) as client:
            await client.subscribe(response, qos=1)
            # an id of its own: a redelivered message is not run twice (_commands.py)
            request = {"command_id": f"cli-{token}", **body}
            await client.publish(topics.command(verb), json.dumps(request), qos=1,
                                 properties=props)
            async with asyncio.timeout(timeout_s):
                async for message in client.messages:
                    got = getattr(message.properties, "CorrelationData", None)
                    if message.topic.value == response and got == token.encode():
                        reply: dict[str, Any] = loads_bounded(message.payload)
                        return reply
    except TimeoutError:
        raise ConnectionError(f"cmd {verb}: no reply from rig {cfg.rig_id} within "
                              f"{timeout_s:g} s (is the service running?)") from None
    except aiomqtt.MqttError as exc:
        raise ConnectionError(f"cmd {verb}: MQTT broker at {url or cfg.url}: {exc}") from None
    raise ConnectionError(f"cmd {verb}: the connection closed before the reply")
