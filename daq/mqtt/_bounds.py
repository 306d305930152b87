"""How many connections a listener holds, and what it turns away: a flood of idle clients
must not take the descriptors the service needs to write captures."""

from __future__ import annotations

import logging

__all__ = ["ConnectionBound"]

log = logging.getLogger("hilrig.mqtt")


class ConnectionBound:
    """At most `limit` connections at once; one over it is turned away (the caller closes
    it at once) and said in the log at the 1st, 10th, 100th, 1,000th, then every
    10,000th time, never once a connection."""

    def __init__(self, name: str, limit: int) -> None:
        self.name, self.limit = name, limit
        self.active = 0  # connections held now
        self.refused = 0  # turned away since start

    def full(self) -> bool:
        """Whether a new connection must be turned away (counted if so)."""
        if self.active < self.limit:
            return False
        self.refused += 1
        if self.refused in (1, 10, 100, 1000) or self.refused % 10_000 == 0:
            log.warning("%s: %d connections held, the most it serves; %d turned away so far",
                        self.name, self.limit, self.refused)
        return True
