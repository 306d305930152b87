"""A session's progress record: what `session status`, the terminal and session/<id> show."""

from __future__ import annotations

from typing import Any

from ..storage import Catalog
from ._plan import SessionPlan

__all__ = ["CAPTURE_STATES", "session_progress"]

#: the capture states a progress record counts
CAPTURE_STATES = ("done", "captured", "failed", "interrupted", "timeout", "recording")


def session_progress(catalog: Catalog, session_id: str, plan: SessionPlan, *, state: str,
                     prompt: str | None, in_flight: int, current_seq: int | None,
                     done_at_start: int, elapsed_s: float, reason: str | None,
                     rss_mb: float) -> dict[str, Any]:
    """Counts by capture state from the catalog, and the ETA from this run's pace.

    `done_at_start`: captures done before this run began (a resumed session); the ETA
    counts only the captures this run did.
    """
    caps = catalog.captures(session_id)
    count = {s: sum(c.status == s for c in caps) for s in CAPTURE_STATES}
    done_now = count["done"] - done_at_start
    planned = plan.captures
    remaining = None if planned is None else max(0, planned - count["done"] - count["failed"])
    eta = elapsed_s / done_now * remaining if done_now and remaining is not None else None
    return {"state": state, "name": plan.name, "planned": planned, **count,
            "in_flight": in_flight, "current_seq": current_seq,
            "elapsed_s": round(elapsed_s, 1), "eta_s": None if eta is None else round(eta, 1),
            "rss_mb": round(rss_mb, 1),
            "until_utc": None if plan.until_utc is None
            else plan.until_utc.isoformat().replace("+00:00", "Z"),
            "reason": reason, "prompt": prompt}
