"""Commands on the catalog: session status|stop, captures list|show, results list, reidentify.

They read (reidentify: adds to) the catalog in storage.directory; none runs acquisition.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

from hilrig.identify import PARAM_NAMES
from hilrig.identify.results import covariate_unit, percent

from ..config import Settings
from ..storage import (
    CAPTURE_FIELDS,
    Catalog,
    CatalogError,
    SessionRow,
    capture_record,
    capture_records,
    readable_results,
    result_record,
    result_records,
)
from ._usage import UsageError, settings_of

__all__ = ["cmd_captures_list", "cmd_captures_show", "cmd_results_list",
           "cmd_session_status", "cmd_session_stop", "open_catalog", "pid_alive",
           "session_row"]


def open_catalog(settings: Settings, create: bool = False) -> Catalog:
    return Catalog.open(Path(settings.storage.directory), create=create)


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def session_row(cat: Catalog, session_id: str | None) -> SessionRow:
    return cat.session(session_id) if session_id else cat.latest_session()


def cmd_session_stop(args: argparse.Namespace) -> int:
    with open_catalog(settings_of(args)) as cat:
        row = session_row(cat, args.session)
        if row.status in ("done", "stopped"):
            print(f"session {row.session_id} is already {row.status}")
            return 0
        cat.request_stop(row.session_id)
    alive = pid_alive(row.pid)
    print(f"session {row.session_id}: stop requested; "
          + ("it stops after the capture under way and its identification"
             if alive else "no process runs it now, so it will not resume by itself"))
    return 0


def session_summary(cat: Catalog, row: SessionRow) -> dict[str, Any]:
    caps = cat.captures(row.session_id)
    counts: dict[str, int] = {}
    for c in caps:
        counts[c.status] = counts.get(c.status, 0) + 1
    plan = json.loads(row.plan_json)
    alive = pid_alive(row.pid)
    status = row.status
    if status == "running" and not alive:
        status = "running (no process: resume it)"
    errors = cat.errors(session_id=row.session_id)
    return {"session_id": row.session_id, "name": row.name, "status": status,
            "reason": row.reason, "pid": row.pid if alive else None,
            "planned": plan.get("captures"), "until_utc": plan.get("until_utc"),
            "captures": counts, "results": len(cat.results(session_id=row.session_id)),
            "created_utc": row.created_utc, "updated_utc": row.updated_utc,
            "stop_requested": row.stop_requested,
            "last_error": errors[-1].message if errors else None}


def cmd_session_status(args: argparse.Namespace) -> int:
    with open_catalog(settings_of(args)) as cat:
        rows = cat.sessions() if args.all else [session_row(cat, args.session)]
        summaries = [session_summary(cat, r) for r in rows]
    if args.json:
        print(json.dumps(summaries if args.all else summaries[0], indent=2))
        return 0
    for s in summaries:
        counts = ", ".join(f"{v} {k}" for k, v in sorted(s["captures"].items())) or "none"
        planned = s["planned"] if s["planned"] is not None else f"until {s['until_utc']}"
        print(f"session {s['session_id']} {s['name']!r}: {s['status']}"
              + (f" ({s['reason']})" if s["reason"] else "")
              + f"; planned {planned}; captures: {counts}; {s['results']} results; "
              f"updated {s['updated_utc']}"
              + (f"; last error: {s['last_error']}" if s["last_error"] else ""))
    return 0


# -- listing ------------------------------------------------------------------------------
def _emit(records: list[dict[str, Any]], fmt: str, columns: list[str]) -> None:
    if fmt == "json":
        print(json.dumps(records, indent=2))
        return
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(records)
        sys.stdout.write(buf.getvalue())
        return
    widths = {c: max(len(c), *(len(_cell(r.get(c))) for r in records)) if records else len(c)
              for c in columns}
    print("  ".join(c.ljust(widths[c]) for c in columns))
    for r in records:
        print("  ".join(_cell(r.get(c)).ljust(widths[c]) for c in columns))


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


#: what a capture's row can say of it
CAPTURE_STATUSES = ("recording", "captured", "done", "failed", "aborted", "interrupted",
                    "timeout")


def _nothing_matched(what: str, filters: dict[str, str | None]) -> None:
    """An empty listing says why on stderr (the table itself stays empty, exit 0)."""
    given = ", ".join(f"--{k} {v}" for k, v in filters.items() if v)
    print(f"hilrig: no {what}" + (f" match {given}" if given else " yet"), file=sys.stderr)


def cmd_captures_list(args: argparse.Namespace) -> int:
    if args.status is not None and args.status not in CAPTURE_STATUSES:
        raise UsageError(f"--status {args.status!r}: expected one of "
                         f"{', '.join(CAPTURE_STATUSES)}")
    with open_catalog(settings_of(args)) as cat:
        if args.session is not None:
            cat.session(args.session)  # an unknown session is a one-line error
        records = capture_records(cat, args.session, status=args.status)
    if not records:
        _nothing_matched("captures", {"session": args.session, "status": args.status})
    columns = ["capture_id", "session_id", "seq", "status", "duration_s", "samples",
               "lost_samples", "end_reason", "results"]
    if args.format != "table":
        columns = [*CAPTURE_FIELDS, "results", "gaps", "effective_rate_hz",
                   "trigger_latency_ms", "release_error_ms"]
    _emit(records, args.format, columns)
    return 0


def cmd_captures_show(args: argparse.Namespace) -> int:
    with open_catalog(settings_of(args)) as cat:
        c = cat.capture(args.capture_id)
        results = cat.results(capture_id=c.capture_id)
        errors = cat.errors(capture_id=c.capture_id)
    readable = readable_results(results, _left_out)
    rec = {**capture_record(c, len(results)), "pose_deg": c.pose, "summary": c.summary,
           "results": [result_record(r, res, session_id=c.session_id) for r, res in readable],
           "errors": [e.message for e in errors]}
    print(json.dumps(rec, indent=2))
    return 0


def _left_out(exc: CatalogError) -> None:
    print(f"hilrig: warning: {exc}; left out", file=sys.stderr)


def _pooled_records(cat: Catalog, session_id: str | None
                    ) -> tuple[list[dict[str, Any]], list[str]]:
    """One record per session answer kept (verdict, each level's value and trend), and
    the levels the answers test (their rig kind's key parameters)."""
    out = []
    levels: dict[str, None] = {}
    for row in cat.session_results(session_id):
        try:
            answer = row.result()
        except CatalogError as exc:
            _left_out(exc)
            continue
        rec: dict[str, Any] = {
            "session_result_id": row.session_result_id, "session_id": row.session_id,
            "created_utc": row.created_utc, "capture_method": row.capture_method,
            "captures": row.captures, "verdict": row.verdict,
            "moved": " ".join(f"{n}{percent(s.per_unit)}%/{covariate_unit(answer.covariate)}"
                              for n, s in answer.drift.slopes.items() if s.moved) or None,
            "standouts": " ".join(s.capture_id for s in answer.drift.standouts) or None}
        for name, p in answer.parameters.items():
            rec[name] = p.value
            rec[f"{name}_ci95_lo"], rec[f"{name}_ci95_hi"] = p.ci95 or (None, None)
        for name, s in answer.drift.slopes.items():
            rec[f"{name}_per_hour"] = s.per_unit
        levels.update(dict.fromkeys(n for c in answer.captures for n in c.levels))
        out.append(rec)
    return out, list(levels)


def _cmd_pooled_list(args: argparse.Namespace, cat: Catalog) -> int:
    if args.capture is not None or args.method is not None:
        raise UsageError("--pooled lists sessions' answers: --capture and --method do not "
                         "apply (each answer names the method its captures were identified by)")
    records, levels = _pooled_records(cat, args.session)
    if not records:
        _nothing_matched("session answers (hilrig session identify)",
                         {"session": args.session})
    base = ["session_result_id", "session_id", "created_utc", "capture_method", "captures",
            "verdict"]
    if args.format == "table":
        columns = [*base[:2], *base[4:], *levels, "moved", "standouts"]
    else:
        columns = [*base, "moved", "standouts",
                   *dict.fromkeys(k for r in records for k in r if k not in base
                                  and k not in ("moved", "standouts"))]
    _emit(records, args.format, columns)
    return 0


def cmd_results_list(args: argparse.Namespace) -> int:
    with open_catalog(settings_of(args)) as cat:
        if args.session is not None:
            cat.session(args.session)
        if args.pooled:
            return _cmd_pooled_list(args, cat)
        listed = result_records(cat, _left_out, session_id=args.session,
                                capture_id=args.capture, method=args.method)
        kinds = [res for res, _ in listed]
        records = [rec for _, rec in listed]
    # the table shows each kind's key parameters (a chain rig's torques, the Furuta rig's
    # coefficients), CSV every parameter of every kind listed
    if not listed:
        _nothing_matched("results", {"session": args.session, "capture": args.capture,
                                     "method": args.method})
    key = list(dict.fromkeys(n for res in kinds for n in res.key_parameters()))
    names = list(dict.fromkeys([*(PARAM_NAMES if not kinds else []),
                                *(n for res in kinds for n in res.parameters)]))
    rig = list(dict.fromkeys(n for res in kinds for n in res.rig))
    extra = list(dict.fromkeys(n for res in kinds for n in res.diagnostics.get("extra_terms", {})
                               if n in res.rig))
    base = ["result_id", "capture_id", "session_id", "seq", "method", "rig_kind", "fit_arm",
            "fit_pendulum", "compute_seconds"]
    if args.format == "table":  # each kind's joints by their names (arm, theta1...)
        fits = list(dict.fromkeys(f"fit_{j}" for res in kinds for j in res.fit_percent))
        columns = [*base[:2], *base[3:6], *(fits or base[6:8]), "compute_seconds",
                   *(key or ["mu_d0", "mu_v0", "mu_d1", "mu_v1"]),
                   *(f"rig.{n}" for n in extra)]
    else:
        columns = [*base, "normalized_compute_time", "created_utc", "software_version",
                   *[f"{n}{s}" for n in names for s in ("", "_ci95_lo", "_ci95_hi")],
                   *[f"rig.{n}{s}" for n in rig for s in ("", "_ci95_lo", "_ci95_hi")],
                   "path"]
    _emit(records, args.format, columns)
    return 0
