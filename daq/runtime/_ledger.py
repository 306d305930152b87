"""Every step of finishing a capture, kept in the catalog: one record for a session's
captures and a plain run's alike, so `captures list`, `results list` and `reidentify`
see everything acquired."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hilrig.identify import IdentificationResult, utc_now

from ..storage import Catalog, store_result
from ._finisher import CaptureOutcome

__all__ = ["CatalogLedger"]


class CatalogLedger:
    """The catalog rows of captures being finished (session_id None: a plain run's)."""

    def __init__(self, catalog: Catalog, session_id: str | None = None) -> None:
        self.catalog, self.session_id = catalog, session_id

    def started(self, capture_id: str, seq: int | None, path: Path,
                pose: list[float] | None = None) -> None:
        self.catalog.add_capture(capture_id, session_id=self.session_id, seq=seq, pose=pose,
                                 status="recording", path=str(path))

    def aborted(self, capture_id: str) -> None:
        self.catalog.update_capture(capture_id, status="aborted", error="aborted by command",
                                    ended_utc=utc_now())

    def written(self, outcome: CaptureOutcome) -> None:
        s = outcome.summary
        self.catalog.update_capture(
            outcome.capture_id, status="captured", samples=s["samples"],
            lost_samples=s["lost_samples"], duration_s=s["duration_s"],
            end_reason=s["end_reason"], summary=s)

    def result_ready(self, outcome: CaptureOutcome, result: IdentificationResult,
                     key: str | None = None) -> Callable[[], None] | None:
        row = store_result(self.catalog, outcome.capture_id, outcome.path, result, key)
        return lambda: self.catalog.mark_result_queued(row.result_id)

    def identified(self, outcome: CaptureOutcome) -> None:
        self.catalog.update_capture(outcome.capture_id, status="done", ended_utc=utc_now())

    def failed(self, outcome: CaptureOutcome) -> None:
        self.catalog.update_capture(outcome.capture_id, status="failed", error=outcome.error,
                                    ended_utc=utc_now())
        self.catalog.add_error(outcome.error or "failed", session_id=self.session_id,
                               capture_id=outcome.capture_id)
