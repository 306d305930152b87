"""Resuming a session: finish what an earlier run left when it was killed.

Every step of a session is committed before the next, so whatever moment a kill hit,
the catalog says what is left: a capture that was recording is kept (its file had
reached its final name) or marked interrupted (its number is captured again); a result
kept but never handed to the outbox is published (and its JSON file written, if the kill
came before); an archived capture not yet identified is identified. Every capture's
document stream ends with a stop: `success`, or `interrupted`. A stop document may reach
a subscriber twice after a kill (the same msg_id), never not at all.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from hilrig.identify import utc_now

from ..acquisition import capture_summary
from ..storage import (
    CaptureFileError,
    CaptureRow,
    Catalog,
    CatalogError,
    read_capture,
    result_path,
    write_text_atomic,
)
from ._finisher import CaptureOutcome
from ._publication import Publication
from ._statistics import capture_statistics

__all__ = ["Resumable", "finish_earlier_run"]


class Resumable(Protocol):
    """What finishing an earlier run needs of the session that resumes it."""

    catalog: Catalog
    session_id: str
    publication: Publication
    say: Callable[[str], None]

    @property
    def methods(self) -> list[str]:
        """The methods the plan identifies each capture with."""

    def register_capture(self, capture_id: str, seq: int) -> None:
        """An archived capture this run finishes, numbered as it was."""

    def identify_archived(self, outcome: CaptureOutcome, methods: list[str]) -> None:
        """Identify an archived capture with the methods it still lacks."""

    def identified(self, outcome: CaptureOutcome) -> None:
        """An archived capture that has every result already."""

    def tell_progress(self) -> None: ...

INTERRUPTED = "the service stopped while it was recording"


async def finish_earlier_run(s: Resumable) -> None:
    """Recover recordings, publish unpublished results, identify what is archived."""
    for row in s.catalog.captures(s.session_id, status="recording"):
        _recover_recording(s, row)
    _publish_unqueued_results(s)
    for row in s.catalog.captures(s.session_id, status="captured"):
        _identify_archived(s, row)
    s.tell_progress()


def _recover_recording(s: Resumable, row: CaptureRow) -> None:
    """A capture the earlier run was recording when it died: archived, or interrupted."""
    try:
        capture = read_capture(row.path or "")
    except (CaptureFileError, OSError):
        s.catalog.update_capture(row.capture_id, status="interrupted", error=INTERRUPTED,
                                 ended_utc=utc_now())
        s.say(f"capture {row.capture_id}: interrupted ({INTERRUPTED}); capture {row.seq} "
              "is taken again")
        s.publication.capture(row.capture_id, {"seq": row.seq, "document": "stop",
                                               "exit_status": "interrupted",
                                               "reason": INTERRUPTED})
        return
    # the file reached its final name before the catalog heard of it: keep it
    summary = capture_summary(capture, Path(row.path or ""))
    summary.update(session_id=s.session_id, seq=row.seq,
                   **capture_statistics(capture, release_index=None))
    s.catalog.update_capture(row.capture_id, status="captured", samples=summary["samples"],
                             lost_samples=summary["lost_samples"],
                             duration_s=summary["duration_s"],
                             end_reason=summary["end_reason"], summary=summary)
    s.say(f"capture {row.capture_id}: its file was archived before the service stopped; "
          "kept")


def _publish_unqueued_results(s: Resumable) -> None:
    """Results kept before a kill but never handed to the outbox: their file, then MQTT."""
    for row in s.catalog.results(session_id=s.session_id, unqueued=True):
        try:
            result = row.result()
        except CatalogError as exc:
            s.say(f"capture {row.capture_id}: {exc}; not published")
            continue
        if row.path is None:
            capture = s.catalog.capture(row.capture_id)
            out = result_path(Path(capture.path or ""), row.method, row.result_id)
            write_text_atomic(out, result.to_json(indent=2), overwrite=True)
            s.catalog.set_result_path(row.result_id, str(out))
        s.say(f"capture {row.capture_id}: result {row.result_id} ({row.method}) was kept "
              "but not published; publishing it")
        s.publication.result(row.capture_id, result,
                             queued=functools.partial(s.catalog.mark_result_queued, row.result_id))


def _identify_archived(s: Resumable, row: CaptureRow) -> None:
    """An archived capture: its stop document (again), then what it still lacks."""
    outcome = CaptureOutcome(row.capture_id, Path(row.path or ""), row.summary or {})
    s.register_capture(row.capture_id, row.seq or 0)
    s.publication.capture(row.capture_id, {**outcome.summary, "document": "stop",
                                           "exit_status": "success"})
    have = {r.method for r in s.catalog.results(capture_id=row.capture_id)}
    missing = [m for m in s.methods if m not in have]
    if missing:
        s.say(f"capture {row.capture_id}: archived but not identified; identifying "
              f"({', '.join(missing)})")
        s.identify_archived(outcome, missing)
    else:
        s.identified(outcome)
