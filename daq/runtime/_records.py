"""A session's captures on MQTT, as the catalog holds them: one retained record each.

A dashboard opened in the morning, or after a broker restart, reads the whole night from
retained topics: ``session/<session_id>/capture/<capture_id>`` (the capture's outcome and
its results' parameters, for the table and the trend) and, per result,
``result/<capture_id>/<method>/overlay`` (measured against identified response). The
catalog is the source: a record is built from its rows and published again only when it
changed, so a resumed session publishes what an earlier run left too.
"""

from __future__ import annotations

import logging
from typing import Any

from hilrig.identify import IdentificationResult

from ..mqtt import Topics
from ..storage import CaptureRow, Catalog, CatalogError
from ._publication import Publication

__all__ = ["PRUNE_BATCH", "CaptureRecords", "capture_record", "prune_retained",
           "result_summary"]

#: sessions past the retention whose topics one new session clears at most (each once:
#: the catalog marks it), so a catalog of many old sessions is cleared over a few starts
PRUNE_BATCH = 20

log = logging.getLogger("hilrig.session")


def result_summary(result: IdentificationResult) -> dict[str, Any]:
    """What a capture record keeps of a result: its parameters, fit and warnings."""
    # only the fields kept: the response (about 40 kB) and the diagnostics stay out
    body = result.model_dump(mode="json", include={"fit_percent", "parameters", "rig"})
    return {"rig_kind": result.rig_kind, "created_utc": result.created_utc,
            "compute_seconds": round(result.compute_seconds, 3),
            "fit_percent": body["fit_percent"], "parameters": body["parameters"],
            "rig": body["rig"],
            "warnings": [str(w) for w in result.diagnostics.get("warnings", [])],
            "overlay": result.response is not None}


def capture_record(row: CaptureRow, results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A capture's record: its catalog row and the summary of its newest result per method."""
    summary = row.summary or {}
    return {"seq": row.seq, "status": row.status, "reason": row.error,
            "started_utc": row.started_utc, "ended_utc": row.ended_utc,
            "duration_s": row.duration_s, "samples": row.samples,
            "lost_samples": row.lost_samples, "gaps": summary.get("gaps"),
            "results": results}


class CaptureRecords:
    """Publishes each capture of one session, and each result's overlay, when it changes.

    A record is compared by its catalog fields and its results' ids, not by its JSON, so
    a long session's update costs one query; a failure here is logged, never raised (a
    consumer must not end acquisition).
    """

    def __init__(self, catalog: Catalog, session_id: str, publication: Publication) -> None:
        self.catalog, self.session_id, self.publication = catalog, session_id, publication
        self._sent: dict[str, tuple[Any, ...]] = {}  # capture id -> what it was published as
        self._results: dict[str, dict[str, dict[str, Any]]] = {}  # capture -> method -> summary
        self._result_ids: dict[str, tuple[int, ...]] = {}  # capture -> ids of its results
        self._last_result = 0  # results are read once each, in the order they were added

    def update(self) -> None:
        """Publish the records (and overlays) that changed since the last call."""
        try:
            self._update()
        except Exception:  # noqa: BLE001 - the session goes on; the next update retries
            log.exception("publishing the capture records of session %s failed",
                          self.session_id)

    def _update(self) -> None:
        for row in self.catalog.results(session_id=self.session_id,
                                        after_id=self._last_result):
            self._last_result = row.result_id  # read once: an unreadable one is not retried
            try:
                result = row.result()
            except CatalogError as exc:
                log.warning("capture record of %s: %s; left out", row.capture_id, exc)
                continue
            self._results.setdefault(row.capture_id, {})[row.method] = result_summary(result)
            self._result_ids[row.capture_id] = (*self._result_ids.get(row.capture_id, ()),
                                                row.result_id)
            if result.response is not None:
                self.publication.overlay(row.capture_id, row.method,
                                         result.response.model_dump(mode="json"),
                                         self.session_id)
        for cap in self.catalog.captures(self.session_id):
            key = (cap.status, cap.error, cap.ended_utc, cap.duration_s, cap.samples,
                   cap.lost_samples, (cap.summary or {}).get("gaps"),
                   self._result_ids.get(cap.capture_id, ()))
            if self._sent.get(cap.capture_id) != key:
                self._sent[cap.capture_id] = key
                self.publication.capture_record(
                    self.session_id, cap.capture_id,
                    capture_record(cap, self._results.get(cap.capture_id, {})))


def prune_retained(catalog: Catalog, publication: Publication, topics: Topics, *,
                   current: str, keep: int) -> list[str]:
    """Clear from the broker the retained topics of the sessions beyond the newest `keep`
    (counting `current`): their progress, answer, capture records and overlays; each once
    (the catalog marks it), at most PRUNE_BATCH per call. The catalog and the files keep
    everything; the broker keeps a bounded window. Returns the sessions cleared."""
    others = sorted((s for s in catalog.sessions() if s.session_id != current),
                    key=lambda s: (s.created_utc, s.session_id), reverse=True)
    old = [s.session_id for s in others[max(0, keep - 1):]
           if s.retained_cleared_utc is None][:PRUNE_BATCH]
    cleared: list[str] = []
    for sid in old:
        cleared += [topics.session(sid), topics.session_result(sid)]
        cleared += [topics.capture_record(sid, c.capture_id) for c in catalog.captures(sid)]
        cleared += [topics.overlay(c, m) for c, m in catalog.result_keys(sid)]
        catalog.mark_retained_cleared(sid)
    publication.clear_retained(cleared)
    return old
