"""Who may use the embedded broker's websockets listener: the page this process serves.

Any web page open in a browser on the lab PC can open a websocket to 127.0.0.1, so the
embedded broker (no users of its own) lets a websocket in only when all of these hold:

- the handshake's ``Origin`` is one the dashboard server of this process serves the page
  from, and its ``Host`` names the listener by a loopback address (a page of another
  origin, or a DNS-rebinding name for 127.0.0.1, gets HTTP 403 before any MQTT);
- the CONNECT logs in as the page: the role as user name, a random token made when the
  broker starts as password (the dashboard server hands it to a page loaded from a
  loopback address only, in config.json, which a page of another origin cannot read),
  and a client id of the page's own (``hilrig-dash-...``: a page cannot take over the
  service's connection);
- every subscription, publish and delivery keeps to the role's topics: the deployed ACL's
  rules for that role (deploy/mosquitto/hilrig.acl): a ``dashboard`` reads what the rig
  says of itself; an ``operator`` also sends commands and reads their replies.

Clients over TCP (127.0.0.1 only: the service itself, ``hilrig cmd``, ``hilrig monitor``)
are let in as before: whoever can run a program on the lab PC can command the rig anyway.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Literal
from urllib.parse import urlsplit

__all__ = ["PAGE_CLIENT_PREFIX", "PAGE_PEER", "ROLE_RULES", "PageGate", "Role",
           "filter_within", "loopback_host", "topic_matches"]

Role = Literal["operator", "dashboard"]

#: how a websocket client's address is marked for the broker's plugins (see _embedded_broker)
PAGE_PEER = "page+"
#: the page's MQTT client ids begin so (daq/dashboard/static/js/connection.js)
PAGE_CLIENT_PREFIX = "hilrig-dash-"

_DASHBOARD_READ = ("hilrig/+/status", "hilrig/+/telemetry", "hilrig/+/events",
                   "hilrig/+/capture/#", "hilrig/+/session/#", "hilrig/+/result/#")
#: (reads, writes) of each role, as deploy/mosquitto/hilrig.acl says (a test compares them)
ROLE_RULES: dict[Role, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "dashboard": (_DASHBOARD_READ, ()),
    "operator": (_DASHBOARD_READ + ("hilrig/+/reply/#", "replies/#"),
                 ("hilrig/+/cmd/#", "replies/#")),
}
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def loopback_host(host: str | None) -> bool:
    """Whether an HTTP Host header (``name[:port]``) names this machine by a loopback
    address: a DNS name that resolves to 127.0.0.1 (rebinding) does not."""
    return bool(host) and (urlsplit(f"//{host}").hostname or "") in _LOOPBACK


def topic_matches(pattern: str, topic: str) -> bool:
    """Whether the topic filter `pattern` (``+``, ``#``) matches the topic name `topic`."""
    p, t = pattern.split("/"), topic.split("/")
    for i, level in enumerate(p):
        if level == "#":
            return True
        if i >= len(t) or (level != "+" and level != t[i]):
            return False
    return len(p) == len(t)


def filter_within(sub: str, pattern: str) -> bool:
    """Whether every topic the subscription filter `sub` can match is matched by
    `pattern`: as a broker's ACL judges a SUBSCRIBE (``hilrig/+/#`` is not within
    ``hilrig/+/status``; ``hilrig/r1/session/+`` is within ``hilrig/+/session/#``)."""
    s, p = sub.split("/"), pattern.split("/")
    for i, level in enumerate(p):
        if level == "#":
            return True
        if i >= len(s) or s[i] == "#":
            return False
        if level != "+" and (s[i] == "+" or s[i] != level):
            return False
    return len(s) == len(p)


class PageGate:
    """The page's credentials, the origins it is served from, and its role's topic rules."""

    def __init__(self, role: Role = "operator", token: str | None = None) -> None:
        self.role: Role = role
        self.token = token or secrets.token_urlsafe(24)
        self._origins: set[str] = set()

    # -- the websocket handshake --------------------------------------------------------
    def serve_from(self, origin: str) -> None:
        """The dashboard server of this process serves the page from `origin`."""
        self._origins.add(_origin(origin))

    def withdraw(self, origin: str) -> None:
        self._origins.discard(_origin(origin))

    def refuses_handshake(self, origin: str | None, host: str | None) -> str | None:
        """Why a websocket handshake is refused (None: let in)."""
        if not origin or _origin(origin) not in self._origins:
            return f"origin {origin or '(none)'} is not this service's dashboard"
        if not loopback_host(host):
            return f"host {host or '(none)'} is not a loopback address"
        return None

    # -- MQTT ------------------------------------------------------------------------------
    @property
    def credentials(self) -> dict[str, str]:
        """What the page logs in with (config.json, for a page loaded from this machine)."""
        return {"username": self.role, "password": self.token}

    def admits(self, client_id: str | None, username: str | None,
               password: str | None) -> bool:
        """A CONNECT over the websocket: the page's login and a client id of its own."""
        return (username == self.role and password is not None
                and hmac.compare_digest(password.encode(), self.token.encode())
                and (client_id or "").startswith(PAGE_CLIENT_PREFIX))

    def may(self, action: str, topic: str) -> bool:
        """Whether the page's role may ``subscribe`` to (a filter), ``publish`` to, or
        ``receive`` (a topic name) `topic`; any other action is refused."""
        reads, writes = ROLE_RULES[self.role]
        if action == "subscribe":
            return any(filter_within(topic, p) for p in reads)
        rules = {"publish": writes, "receive": reads}.get(action, ())
        return any(topic_matches(p, topic) for p in rules)


def _origin(text: str) -> str:
    """scheme://host:port, lower case, the port explicit (an Origin header's form)."""
    parts = urlsplit(text.strip().lower())
    try:
        port = parts.port
    except ValueError:
        return text
    port = port if port is not None else {"http": 80, "https": 443}.get(parts.scheme, 0)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}:{port}"
