"""Finishing a capture beside acquisition: write its file, identify it, keep and publish results.

Each capture the engine hands out is finished in a task of its own: the file is
written in a thread, identification runs in the identification process (or, offloaded,
on the workers), so the stream is never stalled, and whatever fails is reported, never
raised into acquisition. What a run keeps of its captures (a plain run: a report; a
session: the catalog) is its `Ledger`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from identify import IdentificationResult, format_fit

from ..acquisition import Capture
from ..storage import write_capture_h5
from ._pool import IdentificationPool
from ._publication import Publication

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
        self._tasks: set[asyncio.Task[None]] = set()

    def finish(self, capture: Capture, path: Path, summary: dict[str, Any]) -> CaptureOutcome:
        """Start finishing a capture; returns its outcome, filled in as finishing goes on."""
        outcome = CaptureOutcome(capture.capture_id, path, summary)
        task = asyncio.create_task(self._finish(capture, outcome))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return outcome

    async def wait(self) -> None:
        """Until every capture handed over is finished (offloaded ones answered too, or
        taken back and identified here)."""
        while True:
            while self._tasks:
                await asyncio.gather(*self._tasks)
            if self.offload is not None:
                await self.offload.wait()
            if not self._tasks:
                return

    def identify_here(self, outcome: CaptureOutcome, methods: list[str]) -> None:
        """Identify an offloaded capture here after all (no worker took it)."""
        task = asyncio.create_task(self.identify(outcome, methods))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _finish(self, capture: Capture, outcome: CaptureOutcome) -> None:
        path, summary = outcome.path, outcome.summary
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread(write_capture_h5, path, capture)
        except Exception as exc:  # noqa: BLE001 - reported, acquisition goes on
            error = f"{path}: capture file not written: {exc}"
            self._failed(outcome, error, "capture.write_failed", stop={
                **summary, "document": "stop", "exit_status": "failed", "reason": error,
                "file": None})
            return
        self.say(f"capture {capture.capture_id}: {summary['duration_s']:.1f} s, "
                 f"{summary['samples']} samples, {summary['lost_samples']} lost, end: "
                 f"{summary['end_reason']} -> {path}")
        self.ledger.written(outcome)
        self.publication.capture(capture.capture_id,
                                 {**summary, "document": "stop", "exit_status": "success"})
        if self.offload is not None:
            self.offload.send(outcome, self.methods)
        else:
            await self.identify(outcome)

    async def identify(self, outcome: CaptureOutcome, methods: list[str] | None = None) -> None:
        """Identify a written capture with each method; every result is kept and published."""
        for method in methods if methods is not None else self.methods:
            try:
                result = await self.pool.identify(outcome.path, method)
            except Exception as exc:  # noqa: BLE001
                self._failed(outcome, f"{outcome.path}: identification ({method}) failed: {exc}",
                             "identify.failed")
                return
            outcome.result = result
            self.say(result_line(result))
            queued = self.ledger.result_ready(outcome, result)
            self.publication.result(outcome.capture_id, result, queued=queued)
        self.ledger.identified(outcome)

    def worker_result(self, outcome: CaptureOutcome, result: IdentificationResult, key: str,
                      last: bool) -> None:
        """A worker's result for an offloaded capture: kept, then published as the rig's."""
        outcome.result = result
        self.say(result_line(result) + " (worker)")
        queued = self.ledger.result_ready(outcome, result, key)
        self.publication.result(outcome.capture_id, result, queued=queued)
        if last:
            self.ledger.identified(outcome)

    def _failed(self, outcome: CaptureOutcome, error: str, code: str,
                stop: dict[str, Any] | None = None) -> None:
        """Told, kept, and published: the capture's stop document (if it has none yet), an event."""
        outcome.error = error
        log.error(error)
        self.say(f"capture {outcome.capture_id}: ERROR {error}")
        self.ledger.failed(outcome)
        if stop is not None:
            self.publication.capture(outcome.capture_id, stop)
        self.publication.event("error", code, error, outcome.capture_id)
