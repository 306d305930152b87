"""The embedded broker's plugins: the page's login and its role's topics (see _page_gate.py).

amqtt loads plugins by dotted name, with a `Config` dataclass; the PageGate of the broker
that loads them is handed over in it. A client is the page's when its address carries
PAGE_PEER (the websockets listener marks it so); any other (TCP on 127.0.0.1) passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from amqtt.plugins.base import BaseAuthPlugin, BaseTopicPlugin

from ._page_gate import PAGE_PEER, PageGate

__all__ = ["PageAuthPlugin", "PageTopicPlugin"]


def _page_session(session: Any) -> bool:
    return str(getattr(session, "remote_address", "") or "").startswith(PAGE_PEER)


@dataclass
class _GateConfig:
    gate: Any = None  # the PageGate


def _gate(plugin: Any) -> PageGate:
    gate = plugin.context.config.gate
    assert isinstance(gate, PageGate)
    return gate


class PageAuthPlugin(BaseAuthPlugin):
    """Websocket clients log in as the page; TCP clients on 127.0.0.1 as before."""

    Config = _GateConfig

    async def authenticate(self, *, session: Any) -> bool:
        if not _page_session(session):
            return True
        return _gate(self).admits(session.client_id, session.username, session.password)


class PageTopicPlugin(BaseTopicPlugin):
    """Websocket clients keep to their role's topics."""

    Config = _GateConfig

    async def topic_filtering(self, *, session: Any = None, topic: str | None = None,
                              action: Any = None) -> bool:
        if session is None or not _page_session(session):
            return True
        return topic is not None and _gate(self).may(str(action), topic)
