"""`hilrig serve`: the rig's daemon, idle between sessions, driven by MQTT commands.

It holds the open source, the broker connection, the catalog and one identification
process, publishes "idle", and waits: ``cmd/session/start {"plan": {...}}`` starts a
session on the open source (the same plan as `hilrig session start` takes, checked the
same way, released the way it says); while it runs, the session's own commands (stop,
pause, resume, release, abort, identify) apply; when it ends the daemon is idle again.
Idle, ``cmd/identify`` re-identifies any archived capture of the catalog. A unit file
keeps it running (deploy/hilrig.service).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hilrig.drivers import LinkHealth, Pacing, Source

from ..config import Settings
from ..mqtt import CommandRefused, CommandRouter, Courier, Request, SessionStartRequest
from ..storage import Catalog
from ._plan import PlanError, SessionPlan, parse_plan
from ._publication import Publication
from ._releasers import ReleaseUnavailable, releaser_for
from ._session import SessionRun, new_session_id
from .identification import CatalogArchive, LocalExecutor, Reidentifier, identified

__all__ = ["RigDaemon"]

log = logging.getLogger("hilrig.serve")


class RigDaemon:
    """Holds the source, the courier and the catalog; runs one session at a time."""

    def __init__(self, settings: Settings, source: Source, courier: Courier,
                 router: CommandRouter, catalog: Catalog, *,
                 say: Callable[[str], None] = print) -> None:
        self.settings, self.source, self.courier = settings, source, courier
        self.router, self.catalog, self.say = router, catalog, say
        self.session: SessionRun | None = None
        self.publication = Publication(courier, source)
        self.pool = LocalExecutor()
        self.reidentifier = Reidentifier(
            CatalogArchive(catalog, Path(settings.storage.directory)),
            functools.partial(identified, self.pool),
            publish=self.publication.result, say=say)
        self._session_task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._draining: asyncio.Task[None] | None = None
        self._idle_commands()

    # -- idle --------------------------------------------------------------------------------
    def _idle_commands(self) -> None:
        self.router.register("session/start", self._start)
        self.router.register("identify", self.reidentifier.command)
        for verb in ("session/stop", "session/pause", "session/resume", "abort", "release",
                     "arm"):
            self.router.register(verb, self._no_session)

    async def _no_session(self, request: Request) -> dict[str, Any]:
        raise CommandRefused("not allowed now: no session is running")

    def _plan_defaults(self) -> dict[str, Any]:
        """What a plan leaves out is this daemon's rig (its source, port and pacing) and
        its config's identification method."""
        methods = [self.settings.identify.method]
        if isinstance(self.source, LinkHealth):
            return {"source": "serial", "port": self.source.port, "release": "operator",
                    "methods": methods}
        defaults: dict[str, Any] = {"source": "sim", "methods": methods}
        if isinstance(self.source, Pacing):
            defaults["paced"] = self.source.paced
        return defaults

    def _plan(self, request: SessionStartRequest) -> SessionPlan:
        defaults = self._plan_defaults()
        try:
            plan = parse_plan({**defaults, **request.plan}, "session/start: plan")
        except PlanError as exc:
            raise CommandRefused(str(exc)) from None
        if plan.source != defaults["source"]:
            raise CommandRefused(f"session/start: this daemon's rig is {defaults['source']}, "
                                 f"the plan says {plan.source}")
        if plan.source == "serial" and plan.port != defaults["port"]:
            raise CommandRefused(f"session/start: this daemon's bridge is on {defaults['port']}, "
                                 f"the plan says {plan.port}")
        return plan

    async def _start(self, request: SessionStartRequest) -> dict[str, Any]:
        if self._session_task is not None and not self._session_task.done():
            raise CommandRefused("session/start: not allowed now: a session is running")
        plan = self._plan(request)
        try:
            releaser = releaser_for(plan, self.source)
        except ReleaseUnavailable as exc:
            raise CommandRefused(f"session/start: {exc}") from None
        if isinstance(self.source, Pacing):
            self.source.paced = plan.paced
        session_id = new_session_id()
        self.catalog.add_session(session_id, plan.model_dump_json(), name=plan.name)
        await self._stop_draining()
        session = SessionRun(self.settings, self.source, self.courier, plan=plan,
                             catalog=self.catalog, session_id=session_id, releaser=releaser,
                             say=self.say, pool=self.pool)
        session.register_commands(self.router)
        self.session = session
        self._session_task = asyncio.create_task(self._run_session(session))
        return {"session_id": session_id}

    async def _run_session(self, session: SessionRun) -> None:
        try:
            await session.run()
        except Exception:  # noqa: BLE001 - the daemon outlives a failed session
            log.exception("session %s failed", session.session_id)
        finally:
            self.session = None
            self._idle_commands()
            self._start_draining()
            self.publication.status("idle")
            self.say(f"session {session.session_id}: over; idle")

    async def _drain(self) -> None:
        """Idle on a device that streams anyway: read and drop its blocks (no stale backlog)."""
        async for _ in self.source.blocks():
            pass

    def _start_draining(self) -> None:
        if isinstance(self.source, LinkHealth):
            self._draining = asyncio.create_task(self._drain())

    async def _stop_draining(self) -> None:
        task, self._draining = self._draining, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    # -- the daemon ---------------------------------------------------------------------------
    async def run(self) -> None:
        """Until stop(): idle, or running the session started by command."""
        async with self.publication:
            self.publication.status("idle")
            self.pool.start()
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
                self.pool.shutdown()

    def stop(self) -> None:
        self._stop.set()

    async def _announce_when_listening(self) -> None:
        # said only once the broker has the cmd/# subscription: a command sent on seeing
        # this line is heard (before, it could be published before anyone listened)
        try:
            async with asyncio.timeout(self.settings.mqtt.connect_timeout_s):
                await self.courier.listening.wait()
        except TimeoutError:
            self.say(f"hilrig serve: waiting for the MQTT broker at {self.courier.url}; "
                     "commands are heard once it answers")
            await self.courier.listening.wait()
        self.say(f"hilrig serve: idle; rig {self.settings.mqtt.rig_id}, commands on "
                 f"{self.courier.topics.commands}")
