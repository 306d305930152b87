"""A plain run (`hilrig run`): capture after capture until N are finished, or until stopped.

After each capture the trigger is armed again at once, and a rig that holds itself
(the simulated one) is put back at its pose and let go again, as an operator would.
Captures go to ``<storage.directory>/<capture_id>.h5``; with a catalog they are kept in
it as a session's are (no session, numbered within the run), so `captures list`,
`results list` and `reidentify` see them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hilrig.drivers import Holdable, Releasable, Source
from hilrig.identify import IdentificationResult

from ..acquisition import CaptureAborted, CaptureStarted, CaptureTaken
from ..config import Settings
from ..mqtt import CommandRefused, CommandRouter, Courier, Request
from ..storage import Catalog, plain_capture_path
from ._core import RunCore
from ._finisher import CaptureOutcome, RunReport
from ._ledger import CatalogLedger
from .identification import (
    CatalogArchive,
    DirectoryArchive,
    LocalExecutor,
    Reidentifier,
    identified,
)

__all__ = ["PlainRun"]


class PlainRun:
    """Runs acquisition on one source until `captures` captures are finished (or forever).

    Every capture is identified with `method` (default: the configured one), locally or,
    with identify.offload and a courier, by the workers. Without a courier nothing is
    published. `pool`: an identification process to share (else the run has its own).
    """

    def __init__(self, settings: Settings, source: Source, courier: Courier | None, *,
                 captures: int | None = None, method: str | None = None,
                 say: Callable[[str], None] | None = None,
                 pool: LocalExecutor | None = None, catalog: Catalog | None = None,
                 on_status: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.settings = settings
        self.source = source
        self.captures = captures
        self.say = say or (lambda text: None)
        self.directory = Path(settings.storage.directory)
        self.report = RunReport()
        self.core = RunCore(settings, source, courier, self,
                            methods=[method or settings.identify.method], say=self.say,
                            capture_path=lambda cid: plain_capture_path(self.directory, cid),
                            pool=pool, on_status=on_status)
        self.engine = self.core.engine
        self.ledger = CatalogLedger(catalog) if catalog is not None else None
        archive = (CatalogArchive(catalog, self.directory) if catalog is not None
                   else DirectoryArchive(self.directory))
        self.reidentifier = Reidentifier(archive, functools.partial(identified, self.core.pool),
                                         publish=self.core.publication.result, say=self.say)
        self._taken = 0

    async def run(self) -> RunReport:
        """Acquire until done, then wait for every capture to be finished."""
        self.directory.mkdir(parents=True, exist_ok=True)
        async with self.core.running():
            await self.core.drive(self._step)
            await self.core.finisher.wait()
        return self.report

    def _step(self, event: Any) -> bool:
        """Handle one engine event; False ends acquisition."""
        if isinstance(event, CaptureStarted) and self.ledger is not None:
            self.ledger.started(event.capture_id, self._taken + 1,
                                plain_capture_path(self.directory, event.capture_id))
        outcome = self.core.handle(event)
        if isinstance(event, CaptureAborted):
            if self.ledger is not None:
                self.ledger.aborted(event.capture_id)
            self.engine.arm()
        elif isinstance(event, CaptureTaken):
            assert outcome is not None
            self.report.outcomes.append(outcome)
            self.engine.arm()  # watch for the next release as soon as the rig rests
            self._taken += 1
            if self.captures is not None and self._taken >= self.captures:
                return False
            if isinstance(self.source, Holdable):
                sim = self.settings.sim
                self.source.hold(sim.pose_deg, release_in_s=sim.hold_s)
        return True

    # -- Ledger: the catalog, if the run has one; its report in any case -------------------
    def written(self, outcome: CaptureOutcome) -> None:
        if self.ledger is not None:
            self.ledger.written(outcome)

    def result_ready(self, outcome: CaptureOutcome, result: IdentificationResult,
                     key: str | None = None) -> Callable[[], None] | None:
        return None if self.ledger is None else self.ledger.result_ready(outcome, result, key)

    def identified(self, outcome: CaptureOutcome) -> None:
        if self.ledger is not None:
            self.ledger.identified(outcome)

    def failed(self, outcome: CaptureOutcome) -> None:
        if self.ledger is not None:
            self.ledger.failed(outcome)

    # -- commands (hilrig/<rig_id>/cmd/<verb>) ---------------------------------------------
    def register_commands(self, router: CommandRouter) -> None:
        router.register("arm", self._arm)
        router.register("abort", self.core.abort_command)
        router.register("release", self._release)
        router.register("identify", self.reidentifier.command)

    async def _arm(self, request: Request) -> dict[str, Any]:
        if self.engine.recording is not None:
            raise CommandRefused("arm: not allowed now: a capture is recording")
        self.engine.arm()
        return {"trigger": self.engine.trigger_state.value}

    async def _release(self, request: Request) -> dict[str, Any]:
        source = self.source
        if not isinstance(source, Releasable) or not source.can_release:
            raise CommandRefused("release: this rig is released by hand")
        if isinstance(source, Holdable) and not source.held:
            raise CommandRefused("release: not allowed now: the rig is not held")
        index = await source.release()
        return {"released": True, "release_index": index}
