"""Commands that run a live rig: run, serve, session start|resume; and the tools beside them:
worker, monitor, cmd.

Every live rig is built and wired in _wiring.py; failures while running exit with 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from hilrig.identify.model import compile_in_background

from ..config import MAX_NESTING, Settings, json_nesting
from ..mqtt import COMMANDS, monitor, parse_mqtt_url, send_command, topic_filters
from ..runtime import (
    Held,
    PlainRun,
    RigDaemon,
    SessionPlan,
    SessionRun,
    holding,
    load_plan,
    new_session_id,
    parse_plan,
    releaser_for,
    run_worker,
    stored_plan,
)
from ..storage import Catalog, SessionRow
from ._catalog import open_catalog, pid_alive
from ._progress import session_progress_printer
from ._status import StatusLine, rig_status_text
from ._usage import Stopped, UsageError, quiet, settings_of
from ._wiring import bridge_source, http_of, sim_source, wired

__all__ = ["cmd_cmd", "cmd_monitor", "cmd_run", "cmd_serve",
           "cmd_session_resume", "cmd_session_start", "cmd_worker"]


_STATUS: list[StatusLine] = []


def _status(fresh: bool = False) -> StatusLine:
    """The terminal's status display (a live line on a TTY, none with --quiet); fresh: a
    new one for a command starting (main may run several in one process)."""
    if fresh or not _STATUS:
        _STATUS[:] = [StatusLine(tty=False) if quiet() else StatusLine()]
    return _STATUS[0]


def say(text: str) -> None:
    # --quiet keeps what a lab reads the next morning: results, failures, how a session ended
    if quiet() and not text.startswith(("result ", "session ")) and "fail" not in text:
        return
    _status().say(text)


def _show_rig(status: dict[str, Any]) -> None:
    _status().show("rig", rig_status_text(status))


@contextmanager
def _held(settings: Settings, port: str | None, doing: str) -> Iterator[None]:
    """Hold the archive, the rig and the port for this process (runtime.holding), before
    anything is created; held by another: a usage error naming it."""
    with ExitStack() as stack:
        try:
            stack.enter_context(holding(Path(settings.storage.directory),
                                        settings.mqtt.rig_id, port, doing))
        except Held as exc:
            raise UsageError(str(exc)) from None
        yield


# -- run ----------------------------------------------------------------------------------
def cmd_run(args: argparse.Namespace) -> int:
    if args.sim == bool(args.port):
        raise UsageError("run: choose one source: --sim or --port PATH")
    if args.captures is not None and args.captures < 1:
        raise UsageError(f"--captures must be >= 1, got {args.captures}")
    settings = settings_of(args)
    with _held(settings, args.port, "run"):
        source = (bridge_source(settings, args.port) if args.port
                  else sim_source(settings, paced=not args.unpaced))
        _status(fresh=True)
        return asyncio.run(_run(settings, source, args))


async def _run(settings: Settings, source: Any, args: argparse.Namespace) -> int:
    async with wired(settings, source, say, http=http_of(args, settings)) as rig:
        with Catalog.open(Path(settings.storage.directory)) as catalog:
            run = PlainRun(settings, rig.source, rig.courier, captures=args.captures,
                           method=args.method, say=say, catalog=catalog, on_status=_show_rig)
            run.register_commands(rig.router)
            try:
                report = await run.run()
            finally:
                _status().close()
    return 1 if report.failed else 0


# -- serve ----------------------------------------------------------------------------------
def cmd_serve(args: argparse.Namespace) -> int:
    if args.sim == bool(args.port):
        raise UsageError("serve: choose one source: --sim or --port PATH")
    settings = settings_of(args)
    with _held(settings, args.port, "serve"):
        source = (bridge_source(settings, args.port) if args.port
                  else sim_source(settings, paced=not args.unpaced, auto_release=False))
        return asyncio.run(_serve(settings, source, http_of(args, settings)))


async def _serve(settings: Settings, source: Any, http: str | None) -> int:
    async with wired(settings, source, say, http=http) as rig:
        with Catalog.open(Path(settings.storage.directory)) as catalog:
            daemon = RigDaemon(settings, rig.source, rig.courier, rig.router, catalog, say=say)
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, daemon.stop)
            await daemon.run()
    return 0


# -- sessions -----------------------------------------------------------------------------
def _plan_of(args: argparse.Namespace, settings: Settings) -> SessionPlan:
    """The plan file (if any) with the command line's overrides, checked; the config's
    identify.method where neither names the methods."""
    if args.sim and args.port:
        raise UsageError("session start: choose one source: --sim or --port PATH")
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
    plan = (load_plan(Path(args.plan), overrides) if args.plan
            else parse_plan(overrides, "session start"))
    if "methods" not in plan.model_fields_set:
        plan = plan.model_copy(update={"methods": [settings.identify.method]})
    return plan


def cmd_session_start(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    plan = _plan_of(args, settings)
    http = http_of(args, settings)  # a bad address creates no session
    _check_linger(args, http)
    with _held(settings, plan.port, "session start"):  # nor does a rig held elsewhere
        with open_catalog(settings, create=True) as cat:
            session_id = new_session_id()
            cat.add_session(session_id, plan.model_dump_json(), name=plan.name)
        say(f"session {session_id} created")
        return _run_session_foreground(settings, session_id, http, args.linger)


def _check_linger(args: argparse.Namespace, http: str | None) -> None:
    if args.linger and http is None:
        raise UsageError("--linger keeps the dashboard page after the session: give --http "
                         "too")


async def _until_interrupted() -> None:
    """Until Ctrl-C or a service manager's stop: the end of a lingering page, not of a
    session (which has ended), so neither is an interruption."""
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, done.set)
    try:
        await done.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def cmd_session_resume(args: argparse.Namespace) -> int:
    import os

    settings = settings_of(args)
    with open_catalog(settings) as cat:
        row = cat.session(args.session) if args.session else _needs_resuming(cat)
        if row.status == "done":
            raise UsageError(f"session {row.session_id} is complete; nothing to resume")
        if row.status == "running" and pid_alive(row.pid) and row.pid != os.getpid():
            raise UsageError(f"session {row.session_id} is running (process {row.pid})")
        port = stored_plan(row).port
    with _held(settings, port, f"session resume {row.session_id}"):
        say(f"session {row.session_id} resumed")
        http = http_of(args, settings)
        _check_linger(args, http)
        return _run_session_foreground(settings, row.session_id, http, args.linger)


def _needs_resuming(cat: Catalog) -> SessionRow:
    """The one session that waits to be resumed (not done, no live process), or the
    newest if none does; several: a usage error listing them."""
    waiting = [r for r in cat.sessions()
               if r.status != "done" and not (r.status == "running" and pid_alive(r.pid))]
    if len(waiting) > 1:
        raise UsageError("several sessions can be resumed; name one: " + ", ".join(
            f"{r.session_id} ({r.status})" for r in waiting))
    return waiting[0] if waiting else cat.latest_session()


def _run_session_foreground(settings: Settings, session_id: str, http: str | None,
                            linger: bool = False) -> int:
    stopped: list[bool] = []
    _status(fresh=True)

    async def main() -> int:
        task = asyncio.current_task()
        assert task is not None

        def stop() -> None:
            stopped.append(True)
            task.cancel()

        # a service manager's stop: end now; the session stays resumable (as after a crash)
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop)
        return await _session(settings, session_id, http, linger)

    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        say(f"session {session_id} interrupted; `hilrig session resume {session_id}` "
            "continues it")
        raise (Stopped() if stopped else KeyboardInterrupt()) from None


async def _session(settings: Settings, session_id: str, http: str | None,
                   linger: bool = False) -> int:
    with open_catalog(settings) as cat:
        plan = stored_plan(cat.session(session_id))
        source = (bridge_source(settings, plan.port or "") if plan.source == "serial"
                  else sim_source(settings, paced=plan.paced, pose_deg=plan.pose(1),
                                  auto_release=False))
        async with wired(settings, source, say, banner=f"hilrig: session {session_id},",
                         http=http) as rig:
            status = _status()
            # on a terminal the session's progress is part of the live line; piped, a line
            # per change
            progress = session_progress_printer(
                say, live=(lambda text: status.show("session", text)) if status.tty else None)
            session = SessionRun(settings, rig.source, rig.courier, plan=plan, catalog=cat,
                                 session_id=session_id, releaser=releaser_for(plan, rig.source),
                                 say=say, on_progress=progress, on_status=_show_rig)
            session.register_commands(rig.router)
            try:
                await session.run()
            finally:
                status.close()
            if linger:
                say(f"session {session_id} is {cat.session(session_id).status}; the dashboard "
                    "page and the broker's retained state stay until Ctrl-C")
                await _until_interrupted()
        row = cat.session(session_id)
    if row.status in ("stopped", "failed"):
        say(f"session {session_id} {row.status} ({row.reason}); `hilrig session resume "
            f"{session_id}` continues it")
    return 0 if row.status == "done" or row.reason == "stop requested" else 1


# -- tools beside a live rig --------------------------------------------------------------
def _check_url(url: str | None) -> None:
    """A given --url must be mqtt://host[:port] (a usage error otherwise)."""
    if url is not None:
        try:
            parse_mqtt_url(url)
        except ValueError as exc:
            raise UsageError(f"--url: {exc}") from None


def cmd_cmd(args: argparse.Namespace) -> int:
    if args.verb not in COMMANDS:
        raise UsageError(f"cmd: unknown verb {args.verb!r}; verbs: {', '.join(COMMANDS)}")
    if args.body and json_nesting(args.body.encode()) > MAX_NESTING:
        # the service would refuse it; and the parser would overflow the stack first
        raise UsageError(f"cmd: the request is nested too deeply (more than {MAX_NESTING} "
                         "levels)")
    try:
        body = json.loads(args.body) if args.body else {}
    except json.JSONDecodeError as exc:
        raise UsageError(f"cmd: the request is not valid JSON: {exc.msg} at column "
                         f"{exc.colno}") from None
    if not isinstance(body, dict):
        raise UsageError("cmd: the request must be a JSON object")
    _check_url(args.url)
    settings = settings_of(args)
    reply = asyncio.run(send_command(settings.mqtt, args.verb, body, url=args.url,
                                     timeout_s=args.timeout))
    print(json.dumps(reply, indent=2))
    return 0 if reply.get("ok") else 1


def cmd_worker(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    _check_url(args.url)
    if args.max_jobs is not None and args.max_jobs < 1:
        raise UsageError(f"--max-jobs must be >= 1, got {args.max_jobs}")
    compile_in_background("furuta", "chain")  # a worker is sent captures of either kind
    asyncio.run(run_worker(settings.mqtt, url=args.url, max_jobs=args.max_jobs, say=say))
    return 0


def cmd_monitor(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    _check_url(args.url)
    try:
        topic_filters(settings.mqtt.rig_id, args.topic)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    seen = asyncio.run(monitor(settings.mqtt, url=args.url, max_messages=args.count,
                               timeout_s=args.timeout, raw=args.json, topics=args.topic))
    return 0 if seen or args.count is None else 1
