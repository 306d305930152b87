"""Catalog rows as flat records (name -> value): what `captures list`, `results list`
(table, CSV, JSON) and the notebook API's DataFrames show, built in one place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hilrig.identify import PARAM_NAMES, IdentificationResult

from ._catalog import CaptureRow, Catalog, CatalogError, ResultRow

__all__ = ["CAPTURE_FIELDS", "capture_record", "capture_records", "readable_results",
           "result_record", "result_records"]

#: a capture's own columns, before its result count and its summary's figures
CAPTURE_FIELDS = ("capture_id", "session_id", "seq", "status", "samples", "lost_samples",
                  "duration_s", "end_reason", "started_utc", "ended_utc", "path", "error")


def capture_record(c: CaptureRow, n_results: int) -> dict[str, Any]:
    """A capture's row, the number of its results, and its summary's timing figures."""
    rec = {k: getattr(c, k) for k in CAPTURE_FIELDS}
    rec["results"] = n_results
    s = c.summary or {}
    for key in ("gaps", "effective_rate_hz", "trigger_latency_ms", "release_error_ms"):
        rec[key] = s.get(key)
    return rec


def result_record(r: ResultRow, res: IdentificationResult, *, seq: int | None = None,
                  session_id: str | None = None) -> dict[str, Any]:
    """A result's row: its ids, fit and time, every parameter with `_ci95_lo`/`_ci95_hi`
    (the Furuta rig's ten always, as columns to fill), and every rig quantity and extra
    term as `rig.NAME` likewise."""
    rec: dict[str, Any] = {"result_id": r.result_id, "capture_id": r.capture_id,
                           "session_id": session_id, "seq": seq,
                           "method": r.method, "rig_kind": res.rig_kind,
                           "created_utc": r.created_utc,
                           "fit_arm": r.fit_arm, "fit_pendulum": r.fit_pendulum,
                           "compute_seconds": r.compute_seconds,
                           "normalized_compute_time": res.normalized_compute_time,
                           "software_version": r.software_version, "path": r.path}
    rec.update({f"fit_{joint}": fit for joint, fit in res.fit_percent.items()})
    for name in [*PARAM_NAMES, *(n for n in res.parameters if n not in PARAM_NAMES)]:
        p = res.parameters.get(name)
        rec[name] = None if p is None else p.value
        rec[f"{name}_ci95_lo"] = None if p is None or p.ci95 is None else p.ci95[0]
        rec[f"{name}_ci95_hi"] = None if p is None or p.ci95 is None else p.ci95[1]
    for name, p in res.rig.items():
        rec[f"rig.{name}"] = p.value
        rec[f"rig.{name}_ci95_lo"] = None if p.ci95 is None else p.ci95[0]
        rec[f"rig.{name}_ci95_hi"] = None if p.ci95 is None else p.ci95[1]
    return rec


def capture_records(cat: Catalog, session_id: str | None = None,
                    status: str | None = None) -> list[dict[str, Any]]:
    """capture_record of each capture the filters select, with its number of results."""
    n: dict[str, int] = {}
    for r in cat.results(session_id=session_id):
        n[r.capture_id] = n.get(r.capture_id, 0) + 1
    return [capture_record(c, n.get(c.capture_id, 0))
            for c in cat.captures(session_id, status=status)]


def result_records(cat: Catalog, unreadable: Callable[[CatalogError], None], *,
                   session_id: str | None = None, capture_id: str | None = None,
                   method: str | None = None
                   ) -> list[tuple[IdentificationResult, dict[str, Any]]]:
    """Each result the filters select with its result_record (its capture's sequence and
    session filled in); one that no longer reads is told to `unreadable` and left out."""
    ids = {c.capture_id: (c.seq, c.session_id) for c in cat.captures(session_id)}
    rows = cat.results(session_id=session_id, capture_id=capture_id, method=method)
    out = []
    for row, res in readable_results(rows, unreadable):
        seq, sid = ids.get(row.capture_id, (None, None))
        out.append((res, result_record(row, res, seq=seq, session_id=sid)))
    return out


def readable_results(rows: list[ResultRow], unreadable: Callable[[CatalogError], None]
                     ) -> list[tuple[ResultRow, IdentificationResult]]:
    """Each row with its result; one that no longer reads is told to `unreadable` and
    left out."""
    out = []
    for row in rows:
        try:
            out.append((row, row.result()))
        except CatalogError as exc:
            unreadable(exc)
    return out
