"""Finishing a capture beside acquisition: write its file, identify it, keep and publish results.

Each capture the engine hands out is finished in a task of its own: the file is
written in a thread, identification runs on the run's identification executor (this
machine's identification process or, offloaded, the workers), so the stream is never
stalled, and whatever fails is reported, never
raised into acquisition. What a run keeps of its captures (a plain run: a report; a
session: the catalog) is its `Ledger`.

A step that fails on a full disk (the file, the ledger's record, a result) is held with
its capture and run again from where it stopped once there is room (_space_wait.py);
`waiting_for_space` says why meanwhile. Any other failure fails that capture.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hilrig.identify import IdentificationResult, result_problems

from ..acquisition import Capture
from ..config import one_line
from ..storage import disk_full, write_capture_h5
from ._publication import Publication
from ._space_wait import SpaceWait, Step
from .identification import IdentificationExecutor, IdentifyTask, TaskOutcome, result_line

__all__ = ["CaptureFinisher", "CaptureOutcome", "Ledger", "RunReport"]

log = logging.getLogger("hilrig.service")


@dataclass
class CaptureOutcome:
    """A capture being finished: its file, its record, its last result or its error."""

    capture_id: str
    path: Path
    summary: dict[str, Any]
    result: IdentificationResult | None = None
    error: str | None = None
    # how far finishing got, so that a step held on a full disk goes on from there
    file_written: bool = False
    recorded: bool = False
    computed: dict[str, IdentificationResult] = field(default_factory=dict)
    keys: dict[str, str | None] = field(default_factory=dict)  # a result's key, if it has one
    kept: set[str] = field(default_factory=set)


@dataclass
class RunReport:
    """The captures a plain run finished (a session's are in the catalog)."""

    outcomes: list[CaptureOutcome] = field(default_factory=list)

    @property
    def failed(self) -> list[CaptureOutcome]:
        return [o for o in self.outcomes if o.error]


class Ledger(Protocol):
    """What a run keeps of its captures, told at each step of finishing one."""

    def written(self, outcome: CaptureOutcome) -> None:
        """The capture file is archived."""

    def result_ready(self, outcome: CaptureOutcome, result: IdentificationResult,
                     key: str | None = None) -> Callable[[], None] | None:
        """A result (`key`: its delivery id when a worker sent it, to keep it once).

        Returns what to do once the result is in the outbox (a session marks it there,
        so a resume after a kill publishes what never got that far), or None.
        """

    def identified(self, outcome: CaptureOutcome) -> None:
        """Every method has its result."""

    def failed(self, outcome: CaptureOutcome) -> None:
        """The file could not be written or a method failed (`outcome.error` says)."""


class CaptureFinisher:
    """Writes, identifies (on `executor`), keeps and publishes each capture in a task
    beside acquisition."""

    def __init__(self, publication: Publication, ledger: Ledger, *, methods: list[str],
                 executor: IdentificationExecutor, say: Callable[[str], None]) -> None:
        self.publication = publication
        self.ledger = ledger
        self.methods = list(methods)
        self.executor = executor
        self.say = say
        self.space = SpaceWait(say)
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def waiting_for_space(self) -> str | None:
        """Why captures wait to be kept (a full disk), or None."""
        return self.space.reason

    def finish(self, capture: Capture, path: Path, summary: dict[str, Any]) -> CaptureOutcome:
        """Start finishing a capture; returns its outcome, filled in as finishing goes on."""
        outcome = CaptureOutcome(capture.capture_id, path, summary)
        self._start(lambda: self._finish(capture, outcome), outcome)
        return outcome

    def _start(self, step: Step, outcome: CaptureOutcome) -> None:
        self._track(asyncio.create_task(self._guarded(step, outcome)))

    def _track(self, task: asyncio.Task[None] | None) -> None:
        if task is not None:
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _guarded(self, step: Step, outcome: CaptureOutcome) -> None:
        """Run a finishing step: on a full disk it is held until there is room, any other
        failure fails the capture; nothing escapes into acquisition."""
        try:
            await step()
        except Exception as exc:  # noqa: BLE001 - reported here, acquisition goes on
            if disk_full(exc):
                self._track(self.space.hold(f"capture {outcome.capture_id}", outcome.path,
                                            lambda: self._guarded(step, outcome), exc))
            else:
                log.debug("finishing %s failed", outcome.capture_id, exc_info=exc)
                self._failed(outcome, f"{outcome.path}: finishing failed: {exc}",
                             "capture.finish_failed")

    async def wait(self) -> None:
        """Until every capture handed over is finished (offloaded ones answered too, or
        taken back and identified here; held ones kept once there is room)."""
        while self._tasks:
            await asyncio.gather(*self._tasks)

    def identify_archived(self, outcome: CaptureOutcome, methods: list[str]) -> None:
        """Start identifying a capture already archived (an earlier run's) with `methods`."""
        self._start(lambda: self.identify(outcome, methods), outcome)

    async def _finish(self, capture: Capture, outcome: CaptureOutcome) -> None:
        path, summary = outcome.path, outcome.summary
        if not outcome.file_written:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                await asyncio.to_thread(write_capture_h5, path, capture)
            except Exception as exc:  # noqa: BLE001 - reported, acquisition goes on
                if disk_full(exc):
                    raise  # held until there is room
                error = f"{path}: capture file not written: {exc}"
                self._failed(outcome, error, "capture.write_failed", stop={
                    **summary, "document": "stop", "exit_status": "failed", "reason": error,
                    "file": None})
                return
            outcome.file_written = True
            self.say(f"capture {capture.capture_id}: {summary['duration_s']:.1f} s, "
                     f"{summary['samples']} samples, {summary['lost_samples']} lost, end: "
                     f"{summary['end_reason']} -> {path}")
        if not outcome.recorded:
            self.ledger.written(outcome)
            outcome.recorded = True
            self.publication.capture(capture.capture_id,
                                     {**summary, "document": "stop", "exit_status": "success"})
        await self.identify(outcome)

    async def identify(self, outcome: CaptureOutcome, methods: list[str] | None = None) -> None:
        """Identify a written capture with each method, all submitted at once (offloaded:
        one job); every result is kept and published as it comes (a result computed before
        a full disk held it is kept, not computed again)."""
        wanted = [m for m in (methods if methods is not None else self.methods)
                  if m not in outcome.kept]
        asked = {m: self.executor.submit(IdentifyTask.of_file(outcome.capture_id,
                                                              outcome.path, m))
                 for m in wanted if m not in outcome.computed}
        try:
            for method in wanted:
                if method not in outcome.computed:
                    try:
                        done = await asked[method]
                    except Exception as exc:  # noqa: BLE001 - the backend failed: told as the fit's
                        done = TaskOutcome(capture_id=outcome.capture_id, method=method,
                                           error=one_line(str(exc) or type(exc).__name__))
                    if not self._computed(outcome, method, done):
                        return
                self._keep(outcome, outcome.computed[method])
        finally:
            for future in asked.values():
                future.cancel()  # a failure (or a full disk) ends the capture's other tasks
        self.ledger.identified(outcome)

    def _computed(self, outcome: CaptureOutcome, method: str, done: TaskOutcome) -> bool:
        """A task's outcome noted on the capture (said, then kept); False: the capture failed."""
        result = done.result
        if result is None:
            self._failed(outcome, f"{outcome.path}: identification ({method}) failed: "
                         f"{done.error}", "identify.failed")
            return False
        problems = result_problems(result)
        if problems:  # stored, it could not be read back; published, it would mislead
            self._failed(outcome, f"{outcome.path}: identification ({method}) gave a result "
                         f"unfit to keep: {'; '.join(problems)}", "identify.failed")
            return False
        outcome.computed[method] = result
        outcome.keys[method] = done.key
        self.say(result_line(result) + (" (worker)" if done.worker else ""))
        return True

    def _keep(self, outcome: CaptureOutcome, result: IdentificationResult) -> None:
        """A result into the ledger (may raise on a full disk), then out to be published.

        Kept by a key (a worker's job's, or this result's own), so that keeping it again
        after a full disk stopped it halfway finds the row already added."""
        key = (outcome.keys.get(result.method)
               or f"local/{outcome.capture_id}/{result.method}/{result.created_utc}")
        queued = self.ledger.result_ready(outcome, result, key)
        outcome.kept.add(result.method)
        outcome.result = result
        self.publication.result(outcome.capture_id, result, queued=queued)

    def _failed(self, outcome: CaptureOutcome, error: str, code: str,
                stop: dict[str, Any] | None = None) -> None:
        """Told, kept, and published: the capture's stop document (if it has none yet), an event."""
        outcome.error = error
        log.error(error)
        self.say(f"capture {outcome.capture_id}: ERROR {error}")
        try:
            self.ledger.failed(outcome)
        except Exception as exc:  # noqa: BLE001 - told; the capture stays as it was
            log.error("capture %s: its failure could not be recorded: %s", outcome.capture_id,
                      one_line(str(exc)))
        if stop is not None:
            self.publication.capture(outcome.capture_id, stop)
        self.publication.event("error", code, error, outcome.capture_id)
