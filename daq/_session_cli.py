"""`hilrig session ...`, `hilrig captures ...`, `hilrig results list`, `hilrig reidentify`.

Everything here reads or writes the catalog in storage.directory; only `session start`
and `session resume` run acquisition (in the foreground: a unit file or tmux keeps
them alive overnight, `session stop` from another terminal ends them cleanly).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import io
import json
import os
import signal
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from identify import METHODS, PARAM_NAMES, IdentificationResult

from ._catalog import Catalog, CatalogError, CaptureRow, ResultRow, SessionRow
from ._config import Settings, load_settings
from ._plan import PlanError, SessionPlan, load_plan, parse_plan

__all__ = ["add_commands"]


class _Usage(Exception):
    """Raised as the CLI's UsageError (exit 2); kept here to avoid importing cli."""


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(args.config)


def _catalog(settings: Settings, create: bool = False) -> Catalog:
    return Catalog.open(Path(settings.storage.directory), create=create)


def _pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _session_row(cat: Catalog, session_id: str | None) -> SessionRow:
    return cat.session(session_id) if session_id else cat.latest_session()


# -- running a session --------------------------------------------------------------------
def _progress_printer(say: Callable[[str], None]) -> Callable[[dict[str, Any]], None]:
    last: list[tuple[Any, ...]] = []

    def show(p: dict[str, Any]) -> None:
        key = (p["state"], p["done"], p["failed"], p["timeout"], p["interrupted"])
        if last and last[-1] == key:
            return
        last[:] = [key]
        planned = p["planned"]
        width = 20
        if planned:
            filled = round(width * min(1.0, (p["done"] + p["failed"]) / planned))
            bar = "[" + "#" * filled + "-" * (width - filled) + f"] {p['done']}/{planned} done"
        else:
            bar = f"{p['done']} done (until {p['until_utc']})"
        eta = "" if p["eta_s"] is None else f", ETA {_duration(p['eta_s'])}"
        say(f"progress {bar}, {p['failed']} failed, {p['timeout']} timed out, "
            f"{p['interrupted']} interrupted, {p['in_flight']} identifying{eta}, "
            f"{p['rss_mb']:.0f} MB ({p['state']})")

    return show


def _duration(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"


def _source_and_releaser(plan: SessionPlan, settings: Settings) -> tuple[Any, Any]:
    from drivers import SimulatedRig

    from ._release import LatchReleaser, OperatorReleaser, SimReleaser

    if plan.source == "serial":
        from drivers import SerialBridge

        rate = settings.sample_rate_hz
        if rate != int(rate):
            raise _Usage(f"sample_rate_hz must be a whole number of Hz for the bridge, got {rate}")
        bridge = SerialBridge(plan.port or "", rate_hz=int(rate))
        if plan.release == "latch":
            return bridge, LatchReleaser(bridge, plan.hold_s, plan.pulse_ms)
        return bridge, OperatorReleaser()
    sim = settings.sim
    rig = SimulatedRig(rig=settings.rig, friction=sim.friction, pose_deg=plan.pose(1),
                       rate_hz=settings.sample_rate_hz, counts_per_rev=settings.counts_per_rev,
                       block_size=sim.block_size, paced=plan.paced, auto_release=False)
    releaser = OperatorReleaser() if plan.release == "operator" else SimReleaser(rig, plan.hold_s)
    return rig, releaser


async def _run(settings: Settings, session_id: str, say: Callable[[str], None]) -> int:
    from ._commands import CommandRouter
    from ._courier import Courier
    from ._mqtt import resolve_broker
    from ._outbox import Outbox
    from ._session import SessionRunner

    with _catalog(settings) as cat:
        plan = SessionPlan.model_validate_json(cat.session(session_id).plan_json)
        source, releaser = _source_and_releaser(plan, settings)
        async with contextlib.AsyncExitStack() as stack:
            await stack.enter_async_context(source)  # serial: handshake before anything
            if plan.release == "latch" and not source.can_release:
                raise ConnectionError(f"serial {plan.port}: the bridge has no release output "
                                      "(INFO capabilities; firmware 1.1 with a release pin)")
            url = await stack.enter_async_context(resolve_broker(settings.mqtt))
            say(f"hilrig: session {session_id}, rig {settings.mqtt.rig_id}, source "
                f"{source.info.identity}, broker {url}, topics hilrig/{settings.mqtt.rig_id}/#")
            outbox = Outbox(Path(settings.storage.directory))
            stack.callback(outbox.close)
            router = CommandRouter(settings.mqtt.rig_id)
            pub = await stack.enter_async_context(
                Courier(settings.mqtt, outbox, url=url, source=source.info, commands=router,
                        on_delivered=lambda topic: say(f"published {topic}")))
            runner = SessionRunner(settings, source, pub, plan=plan, catalog=cat,
                                   session_id=session_id, releaser=releaser, on_event=say,
                                   on_progress=_progress_printer(say))
            runner.register_commands(router)
            await runner.run()
        row = cat.session(session_id)
    if row.status == "stopped":
        say(f"session {session_id} stopped ({row.reason}); `hilrig session resume "
            f"{session_id}` continues it")
    return 1 if row.status == "stopped" and row.reason != "stop requested" else 0


def _run_foreground(settings: Settings, session_id: str) -> int:
    def say(text: str) -> None:
        print(text, flush=True)

    async def main() -> int:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()
        assert task is not None
        # systemd's stop: end now; the session stays resumable (as after a crash)
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
        return await _run(settings, session_id, say)

    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        say(f"session {session_id} interrupted; `hilrig session resume {session_id}` "
            "continues it")
        return 130


def cmd_session_start(args: argparse.Namespace) -> int:
    settings = _settings(args)
    overrides: dict[str, Any] = {}
    if args.captures is not None:
        overrides["captures"] = args.captures
    if args.until is not None:
        overrides["until_utc"] = args.until
    if args.sim:
        overrides["source"] = "sim"
    if args.port:
        overrides.update(source="serial", port=args.port,
                         release="latch" if args.latch else "operator")
    if args.unpaced:
        overrides["paced"] = False
    if args.method:
        overrides["methods"] = args.method
    if args.pose:
        overrides["poses_deg"] = [tuple(p) for p in args.pose]
    if args.name is not None:
        overrides["name"] = args.name
    if args.sim and args.port:
        raise _Usage("session start: choose one source: --sim or --port PATH")
    plan = (load_plan(Path(args.plan), overrides) if args.plan
            else parse_plan(overrides, "session start"))
    from ._session import new_session_id

    with _catalog(settings, create=True) as cat:
        session_id = new_session_id()
        cat.add_session(session_id, plan.model_dump_json(), name=plan.name)
    print(f"session {session_id} created", flush=True)
    return _run_foreground(settings, session_id)


def cmd_session_resume(args: argparse.Namespace) -> int:
    settings = _settings(args)
    with _catalog(settings) as cat:
        row = _session_row(cat, args.session)
        if row.status == "done":
            raise _Usage(f"session {row.session_id} is complete; nothing to resume")
        if row.status == "running" and _pid_alive(row.pid) and row.pid != os.getpid():
            raise _Usage(f"session {row.session_id} is running (process {row.pid})")
    print(f"session {row.session_id} resumed", flush=True)
    return _run_foreground(settings, row.session_id)


def cmd_session_stop(args: argparse.Namespace) -> int:
    with _catalog(_settings(args)) as cat:
        row = _session_row(cat, args.session)
        if row.status in ("done", "stopped"):
            print(f"session {row.session_id} is already {row.status}")
            return 0
        cat.request_stop(row.session_id)
    alive = _pid_alive(row.pid)
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
    alive = _pid_alive(row.pid)
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
    with _catalog(_settings(args)) as cat:
        rows = cat.sessions() if args.all else [_session_row(cat, args.session)]
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
_CAPTURE_FIELDS = ("capture_id", "session_id", "seq", "status", "samples", "lost_samples",
                   "duration_s", "end_reason", "started_utc", "ended_utc", "path", "error")


def _capture_record(c: CaptureRow, n_results: int) -> dict[str, Any]:
    rec = {k: getattr(c, k) for k in _CAPTURE_FIELDS}
    rec["results"] = n_results
    s = c.summary or {}
    for key in ("gaps", "effective_rate_hz", "trigger_latency_ms", "release_error_ms"):
        rec[key] = s.get(key)
    return rec


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


def cmd_captures_list(args: argparse.Namespace) -> int:
    with _catalog(_settings(args)) as cat:
        caps = cat.captures(args.session, status=args.status)
        n = {}
        for r in cat.results(session_id=args.session):
            n[r.capture_id] = n.get(r.capture_id, 0) + 1
        records = [_capture_record(c, n.get(c.capture_id, 0)) for c in caps]
    columns = ["capture_id", "session_id", "seq", "status", "duration_s", "samples",
               "lost_samples", "end_reason", "results"]
    if args.format != "table":
        columns = [*_CAPTURE_FIELDS, "results", "gaps", "effective_rate_hz",
                   "trigger_latency_ms", "release_error_ms"]
    _emit(records, args.format, columns)
    return 0


def cmd_captures_show(args: argparse.Namespace) -> int:
    with _catalog(_settings(args)) as cat:
        c = cat.capture(args.capture_id)
        results = cat.results(capture_id=c.capture_id)
        errors = cat.errors(capture_id=c.capture_id)
    rec = {**_capture_record(c, len(results)), "pose_deg": c.pose, "summary": c.summary,
           "results": [_result_record(r, None) for r in results],
           "errors": [e.message for e in errors]}
    print(json.dumps(rec, indent=2))
    return 0


def _result_record(r: ResultRow, seq: int | None) -> dict[str, Any]:
    res = r.result()
    rec: dict[str, Any] = {"result_id": r.result_id, "capture_id": r.capture_id, "seq": seq,
                           "method": r.method, "created_utc": r.created_utc,
                           "fit_arm": r.fit_arm, "fit_pendulum": r.fit_pendulum,
                           "compute_seconds": r.compute_seconds,
                           "normalized_compute_time": res.normalized_compute_time,
                           "software_version": r.software_version, "path": r.path}
    for name in PARAM_NAMES:
        p = res.parameters.get(name)
        rec[name] = None if p is None else p.value
        rec[f"{name}_ci95_lo"] = None if p is None or p.ci95 is None else p.ci95[0]
        rec[f"{name}_ci95_hi"] = None if p is None or p.ci95 is None else p.ci95[1]
    return rec


def cmd_results_list(args: argparse.Namespace) -> int:
    with _catalog(_settings(args)) as cat:
        rows = cat.results(session_id=args.session, capture_id=args.capture, method=args.method)
        seqs = {c.capture_id: c.seq for c in cat.captures(args.session)}
        records = [_result_record(r, seqs.get(r.capture_id)) for r in rows]
    base = ["result_id", "capture_id", "seq", "method", "fit_arm", "fit_pendulum",
            "compute_seconds"]
    if args.format == "table":
        columns = [*base, "mu_d0", "mu_v0", "mu_d1", "mu_v1"]
    else:
        columns = [*base, "normalized_compute_time", "created_utc", "software_version",
                   *[f"{n}{s}" for n in PARAM_NAMES for s in ("", "_ci95_lo", "_ci95_hi")],
                   "path"]
    _emit(records, args.format, columns)
    return 0


# -- re-identification --------------------------------------------------------------------
def cmd_reidentify(args: argparse.Namespace) -> int:
    from ._capture_file import read_capture, write_text_atomic
    from ._convert import measurement_from_capture
    from ._progress import ProgressBar
    from ._service import result_line

    settings = _settings(args)
    with _catalog(settings) as cat:
        c = cat.capture(args.capture_id)
        if c.status not in ("captured", "done", "failed") or not c.path:
            raise _Usage(f"capture {c.capture_id} has no archived file (status {c.status})")
        from identify import identify

        capture = read_capture(c.path)
        bar = ProgressBar(f"identify {args.method}")
        try:
            result = identify(measurement_from_capture(capture), method=args.method,
                              progress=bar)
        finally:
            bar.close()
        row = cat.add_result(result, capture_id=c.capture_id)
        path = Path(c.path).with_name(f"{result.method}-{row.result_id}.json")
        write_text_atomic(path, result.to_json(indent=2))
        cat.set_result_path(row.result_id, str(path))
    print(f"{result_line(result)}; result {row.result_id} -> {path}")
    published = asyncio.run(_publish_one(settings, c.capture_id, result))
    print(f"published hilrig/{settings.mqtt.rig_id}/result/{c.capture_id}/{result.method}"
          if published else "not published: no MQTT broker answered (the catalog has it)")
    return 0


async def _publish_one(settings: Settings, capture_id: str, result: IdentificationResult) -> bool:
    from ._mqtt import Publisher, parse_mqtt_url, probe_broker

    cfg = settings.mqtt
    if not await probe_broker(*parse_mqtt_url(cfg.url), cfg.connect_timeout_s):
        return False
    cfg = cfg.model_copy(update={"client_id": f"hilrig-{cfg.rig_id}-reidentify-{os.getpid()}"})
    try:
        async with Publisher(cfg, announce=False) as pub:
            return await pub.publish_result(capture_id, result.method, result)
    except ConnectionError:
        return False


# -- parser -------------------------------------------------------------------------------
def _utc_arg(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} needs a time zone, e.g. 2026-11-23T07:00Z")
    return value


def add_commands(sub: Any) -> None:
    """Register session, captures, results and reidentify on the hilrig parser."""
    fmt = {"choices": ("table", "csv", "json"), "default": "table"}

    s = sub.add_parser("session", help="unattended capture sessions")
    ss = s.add_subparsers(dest="session_command", required=True, parser_class=type(s))
    st = ss.add_parser("start", help="start a session from a plan (runs in the foreground)")
    st.add_argument("plan", nargs="?", help="PLAN.toml ([session] table or top level)")
    st.add_argument("--captures", type=int, help="captures to complete")
    st.add_argument("--until", type=_utc_arg, help="no release after this UTC time")
    st.add_argument("--sim", action="store_true", help="the simulated rig (default)")
    st.add_argument("--port", metavar="PATH", help="the serial bridge (operator release)")
    st.add_argument("--latch", action="store_true",
                    help="with --port: the bridge opens its release latch (else an operator)")
    st.add_argument("--unpaced", action="store_true", help="simulate as fast as possible")
    st.add_argument("--method", action="append", choices=sorted(METHODS),
                    help="identification method (repeat for several)")
    st.add_argument("--pose", type=float, nargs=2, action="append", metavar=("ARM", "PEND"),
                    help="release pose in degrees (repeat to cycle through several)")
    st.add_argument("--name", help="free text shown with the session")
    st.set_defaults(func=cmd_session_start)
    for verb, func, text in (("resume", cmd_session_resume, "continue a session"),
                             ("stop", cmd_session_stop, "ask a running session to stop"),
                             ("status", cmd_session_status, "where a session stands")):
        p = ss.add_parser(verb, help=text)
        p.add_argument("session", nargs="?", help="session id (default: the latest)")
        p.set_defaults(func=func)
        if verb == "status":
            p.add_argument("--json", action="store_true")
            p.add_argument("--all", action="store_true", help="every session")

    c = sub.add_parser("captures", help="captures in the catalog")
    cs = c.add_subparsers(dest="captures_command", required=True, parser_class=type(c))
    cl = cs.add_parser("list", help="one line per capture")
    cl.add_argument("--session")
    cl.add_argument("--status")
    cl.add_argument("--format", **fmt)
    cl.set_defaults(func=cmd_captures_list)
    cw = cs.add_parser("show", help="one capture with its summary, results and errors (JSON)")
    cw.add_argument("capture_id")
    cw.set_defaults(func=cmd_captures_show)

    r = sub.add_parser("results", help="identification results in the catalog")
    rs = r.add_subparsers(dest="results_command", required=True, parser_class=type(r))
    rl = rs.add_parser("list", help="one line per result, with parameters, fit, compute time")
    rl.add_argument("--session")
    rl.add_argument("--capture")
    rl.add_argument("--method", choices=sorted(METHODS))
    rl.add_argument("--format", **fmt)
    rl.set_defaults(func=cmd_results_list)

    ri = sub.add_parser("reidentify", help="identify an archived capture again (adds a result)")
    ri.add_argument("capture_id")
    ri.add_argument("--method", required=True, choices=sorted(METHODS))
    ri.set_defaults(func=cmd_reidentify)


ERRORS: tuple[type[Exception], ...] = (_Usage, CatalogError, PlanError)
