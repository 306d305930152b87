"""`hilrig serve`: the rig's daemon, idle between sessions, driven by MQTT commands.

It opens the source and the broker connection once, publishes "idle", and waits:
``cmd/session/start {"plan": {...}}`` starts a session on the open source (the same
plan as `hilrig session start` takes, checked the same way); while it runs, the
session's own commands (stop, pause, resume, release, abort, identify) apply; when it
ends the daemon is idle again. Idle, ``cmd/identify`` re-identifies any archived
capture of the catalog. A unit file keeps it running (deploy/hilrig.service).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from identify import IdentificationResult

from ._capture_file import write_text_atomic
from ._catalog import Catalog, CatalogError
from ._commands import CommandRefused, CommandRouter
from ._config import Settings
from ._courier import Courier
from ._plan import PlanError, SessionPlan, parse_plan
from ._release import OperatorReleaser, SimReleaser
from ._service import result_line
from ._session import SessionRunner, new_session_id
from ._worker import identification_pool, identify_file

__all__ = ["RigDaemon"]

log = logging.getLogger("hilrig.serve")


class RigDaemon:
    """Holds the source, the courier and the catalog; runs one session at a time."""

    def __init__(self, settings: Settings, source: Any, courier: Courier, router: CommandRouter,
                 catalog: Catalog, *, say: Callable[[str], None] = print,
                 releaser: Any = None) -> None:
        self.settings, self.source, self.courier = settings, source, courier
        self.router, self.catalog, self.say = router, catalog, say
        self.releaser = releaser
        self.runner: SessionRunner | None = None
        self._session_task: asyncio.Task[Any] | None = None
        self._stop = asyncio.Event()
        self._pool = identification_pool()
        self._draining: asyncio.Task[None] | None = None
        self._idle_commands()

    # -- idle --------------------------------------------------------------------------------
    def _idle_commands(self) -> None:
        self.router.register("session/start", self._start)
        self.router.register("identify", self._identify)
        for verb in ("session/stop", "session/pause", "session/resume", "abort", "release",
                     "arm"):
            self.router.register(verb, self._no_session)

    async def _no_session(self, request: Any) -> dict[str, Any]:
        raise CommandRefused("not allowed now: no session is running")

    async def _identify(self, request: Any) -> dict[str, Any]:
        try:
            row = self.catalog.capture(request.capture_id)
        except CatalogError:
            raise CommandRefused(f"identify: no capture {request.capture_id!r} in the catalog"
                                 ) from None
        root = Path(self.settings.storage.directory).resolve()
        path = Path(row.path or "")
        if not path.is_file() or root not in path.resolve().parents:
            raise CommandRefused(f"identify: capture {request.capture_id} has no archived file")
        text = await asyncio.get_running_loop().run_in_executor(
            self._pool, identify_file, str(path), request.method)
        result = IdentificationResult.model_validate_json(text)
        stored = self.catalog.add_result(result, capture_id=row.capture_id)
        out = path.with_name(f"{result.method}-{stored.result_id}.json")
        write_text_atomic(out, result.to_json(indent=2))
        self.catalog.set_result_path(stored.result_id, str(out))
        await self.courier.publish_result(row.capture_id, result.method, result)
        self.say(result_line(result))
        return {"capture_id": row.capture_id, "method": result.method,
                "result_id": stored.result_id, "fit_percent": result.fit_percent}

    async def _start(self, request: Any) -> dict[str, Any]:
        if self._session_task is not None and not self._session_task.done():
            raise CommandRefused("session/start: not allowed now: a session is running")
        kind = "serial" if getattr(self.source.info, "kind", "") == "serial" else "sim"
        defaults: dict[str, Any] = {"source": kind}
        if kind == "serial":
            defaults.update(port=getattr(self.source, "port", None), release="operator")
        try:
            plan = parse_plan({**defaults, **request.plan}, "session/start: plan")
        except PlanError as exc:
            raise CommandRefused(str(exc)) from None
        if plan.source != kind:
            raise CommandRefused(f"session/start: this daemon's rig is {kind}, the plan says "
                                 f"{plan.source}")
        session_id = new_session_id()
        self.catalog.add_session(session_id, plan.model_dump_json(), name=plan.name)
        await self._stop_draining()
        self._session_task = asyncio.create_task(self._run_session(session_id, plan))
        return {"session_id": session_id}

    async def _drain(self) -> None:
        """Idle on the bridge: read and drop its blocks, so no stale backlog builds up."""
        async for _ in self.source.blocks():
            pass

    def _start_draining(self) -> None:
        if getattr(self.source.info, "kind", "") == "serial":
            self._draining = asyncio.create_task(self._drain())

    async def _stop_draining(self) -> None:
        task, self._draining = self._draining, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run_session(self, session_id: str, plan: SessionPlan) -> None:
        releaser = self.releaser
        if releaser is None:
            releaser = (SimReleaser(self.source, plan.hold_s) if plan.release == "self"
                        else OperatorReleaser())
        runner = SessionRunner(self.settings, self.source, self.courier, plan=plan,
                               catalog=self.catalog, session_id=session_id, releaser=releaser,
                               on_event=self.say)
        runner.register_commands(self.router)
        self.runner = runner
        try:
            await runner.run()
        except Exception:  # noqa: BLE001 - the daemon outlives a failed session
            log.exception("session %s failed", session_id)
        finally:
            self.runner = None
            self._idle_commands()
            self._start_draining()
            await self.courier.publish_status("idle", source=self.source.info)
            self.say(f"session {session_id}: over; idle")

    # -- the daemon ---------------------------------------------------------------------------
    async def run(self) -> None:
        await self.courier.publish_status("idle", source=self.source.info)
        announce = asyncio.create_task(self._announce_when_listening())
        self._start_draining()
        try:
            await self._stop.wait()
        finally:
            announce.cancel()
            await self._stop_draining()
            if self._session_task is not None:
                self._session_task.cancel()
                await asyncio.gather(self._session_task, return_exceptions=True)
            self._pool.shutdown(wait=False, cancel_futures=True)

    def stop(self) -> None:
        self._stop.set()

    async def _announce_when_listening(self) -> None:
        # said only once the broker has the cmd/# subscription: a command sent on seeing
        # this line is heard (before, it could be published before anyone listened)
        rig = self.settings.mqtt.rig_id
        try:
            async with asyncio.timeout(self.settings.mqtt.connect_timeout_s):
                await self.courier.listening.wait()
        except TimeoutError:
            self.say(f"hilrig serve: waiting for the MQTT broker at {self.courier.url}; "
                     "commands are heard once it answers")
            await self.courier.listening.wait()
        self.say(f"hilrig serve: idle; rig {rig}, commands on hilrig/{rig}/cmd/#")

