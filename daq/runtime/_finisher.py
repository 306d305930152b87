"""Finishing a capture beside acquisition: write its file, identify it, keep and publish results.

Each capture the engine hands out is finished in a task of its own: the file is
written in a thread, identification runs in the identification process (or, offloaded,
on the workers), so the stream is never stalled, and whatever fails is reported, never
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

from hilrig.identify import IdentificationResult, format_fit, result_problems

from ..acquisition import Capture
from ..config import one_line
from ..storage import disk_full, write_capture_h5
from ._pool import IdentificationPool
from ._publication import Publication
from ._space_wait import SpaceWait, Step

__all__ = ["CaptureFinisher", "CaptureOutcome", "Ledger", "RunReport", "result_line"]

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


def result_line(result: IdentificationResult) -> str:
    """One terminal line: the fit and the key parameters (Coulomb, viscous...)."""
    p = result.parameters

    def show(name: str) -> str:
        value = p[name].value
        return f"{name}=n/i" if value is None else f"{name}={value:.4g}"

    return (f"result {result.capture_id} {result.method}: fit {format_fit(result.fit_percent)}, "
            + ", ".join(show(n) for n in result.key_parameters())
            + f" ({result.compute_seconds:.2f} s)")


class CaptureFinisher:
    """Writes, identifies, keeps and publishes each capture in a task beside acquisition.

    With `offload` (a JobOffload) a written capture goes to the workers instead of the
    local identification process, and their results come back through `worker_result`.
    """

    def __init__(self, publication: Publication, ledger: Ledger, *, methods: list[str],
                 pool: IdentificationPool, say: Callable[[str], None],
                 offload: Any = None) -> None:
        self.publication = publication
        self.ledger = ledger
        self.methods = list(methods)
        self.pool = pool
        self.say = say
        self.offload = offload
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
        while True:
            while self._tasks:
                await asyncio.gather(*self._tasks)
            if self.offload is not None:
                await self.offload.wait()
            if not self._tasks:
                return

    def identify_here(self, outcome: CaptureOutcome, methods: list[str]) -> None:
        """Identify an offloaded capture here after all (no worker took it)."""
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
        if self.offload is not None:
            self.offload.send(outcome, self.methods)
        else:
            await self.identify(outcome)

    async def identify(self, outcome: CaptureOutcome, methods: list[str] | None = None) -> None:
        """Identify a written capture with each method; every result is kept and published
        (a result computed before a full disk held it is kept, not computed again)."""
        for method in methods if methods is not None else self.methods:
            if method in outcome.kept:
                continue
            result = outcome.computed.get(method)
            if result is None:
                try:
                    result = await self.pool.identify(outcome.path, method)
                except Exception as exc:  # noqa: BLE001
                    self._failed(outcome, f"{outcome.path}: identification ({method}) "
                                 f"failed: {exc}", "identify.failed")
                    return
                problems = result_problems(result)
                if problems:  # stored, it could not be read back; published, it would mislead
                    self._failed(outcome, f"{outcome.path}: identification ({method}) gave a "
                                 f"result unfit to keep: {'; '.join(problems)}",
                                 "identify.failed")
                    return
                outcome.computed[method] = result
                self.say(result_line(result))
            self._keep(outcome, result)
        self.ledger.identified(outcome)

    def _keep(self, outcome: CaptureOutcome, result: IdentificationResult,
              key: str | None = None) -> None:
        """A result into the ledger (may raise on a full disk), then out to be published.

        Kept by a key (a worker's job's, or this result's own), so that keeping it again
        after a full disk stopped it halfway finds the row already added."""
        key = key or f"local/{outcome.capture_id}/{result.method}/{result.created_utc}"
        queued = self.ledger.result_ready(outcome, result, key)
        outcome.kept.add(result.method)
        outcome.result = result
        self.publication.result(outcome.capture_id, result, queued=queued)

    def worker_result(self, outcome: CaptureOutcome, result: IdentificationResult, key: str,
                      last: bool) -> None:
        """A worker's result for an offloaded capture: kept, then published as the rig's."""
        self.say(result_line(result) + " (worker)")

        async def keep() -> None:
            if result.method not in outcome.kept:
                self._keep(outcome, result, key)
            if last:
                self.ledger.identified(outcome)

        self._start(keep, outcome)

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
