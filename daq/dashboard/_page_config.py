"""What the page is told at load (``config.json``): the rig and where its broker listens.

The page is a plain MQTT subscriber: it needs the topic prefix and the broker's
MQTT-over-WebSockets endpoint, nothing of the service's own credentials. With a secured
broker it asks the person for a broker user (`login`). With this process's embedded
broker the server adds the page's own login (a token made when the broker started,
good for that broker's websockets listener only) to a page loaded from this machine.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field

from hilrig.identify import SOFTWARE_VERSION

from ..config import Settings
from ..mqtt import WEBSOCKETS, PageGate, Topics

__all__ = ["BrokerEndpoint", "PageConfig", "WSS_PORT", "WS_PORT", "page_config", "page_gate"]

#: the websockets ports of deploy/mosquitto/hilrig.conf (wss) and of a plain listener
WS_PORT = 9001
WSS_PORT = 8081


class BrokerEndpoint(BaseModel):
    """Where the browser connects: ``scheme://host:port path`` (host None: the page's host)."""

    model_config = ConfigDict(extra="forbid")

    scheme: str = Field(pattern=r"^wss?$")
    host: str | None = None
    port: int = Field(ge=1, le=65535)
    path: str = "/"
    login: bool = Field(description="ask the person for a broker user and password")
    protocol: int | None = Field(None, description="MQTT 5 or 4 (3.1.1); None: try 5, then 4")
    username: str | None = Field(None, description="the page's login to this process's "
                                 "embedded broker (a page loaded from a loopback address only)")
    password: str | None = None


class PageConfig(BaseModel):
    """The body of config.json."""

    model_config = ConfigDict(extra="forbid")

    rig_id: str
    prefix: str
    software_version: str = SOFTWARE_VERSION
    broker: BrokerEndpoint


def _endpoint_of_url(url: str, login: bool, protocol: int | None) -> BrokerEndpoint:
    parts = urlsplit(url)
    secure = parts.scheme == "wss"
    return BrokerEndpoint(scheme=parts.scheme, host=parts.hostname,
                          port=parts.port or (WSS_PORT if secure else WS_PORT),
                          path=parts.path or "/", login=login, protocol=protocol)


def page_config(settings: Settings, broker_url: str | None = None) -> PageConfig:
    """The page's configuration for this rig; `broker_url`: the broker the service uses
    (an embedded one serves websockets at a url of its own, MQTT 3.1.1 only)."""
    cfg, dash = settings.mqtt, settings.dashboard
    login = dash.login if dash.login is not None else cfg.username is not None
    embedded = WEBSOCKETS.get(broker_url or "")
    if embedded is not None:  # the broker this process runs is the one with the data
        broker = _endpoint_of_url(embedded[0], login=False, protocol=4)
    elif dash.ws_url is not None:
        broker = _endpoint_of_url(dash.ws_url, login=login, protocol=None)
    else:
        # a broker with users is deploy/mosquitto/hilrig.conf's: wss only (a password never
        # crosses the network in clear)
        secure = cfg.tls or cfg.url.startswith("mqtts://") or login
        broker = BrokerEndpoint(scheme="wss" if secure else "ws", host=None,
                                port=WSS_PORT if secure else WS_PORT, login=login)
    topics = Topics(cfg.rig_id)
    return PageConfig(rig_id=cfg.rig_id, prefix=topics.prefix, broker=broker)


def page_gate(broker_url: str | None) -> PageGate | None:
    """The gate of this process's embedded broker at `broker_url` (None: another broker)."""
    embedded = WEBSOCKETS.get(broker_url or "")
    return embedded[1] if embedded is not None else None
