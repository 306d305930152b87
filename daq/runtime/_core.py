"""What every run is made of, and what it does with the engine's events, whatever drives it.

A run has an acquisition engine on its source, a publication feeding the courier, an
identification executor (this machine's identification process, its own or shared, or
the workers when offload is configured, with that process to fall back on) and a
finisher. The core tells the terminal, publishes the rig's state and each
capture's lifecycle documents (start, progress about once a second, stop), forwards
telemetry, and hands each capture to the finisher. A policy (a plain run, a session)
decides the rest: when to arm, when to release, when to stop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from hilrig.drivers import Source

from ..acquisition import (
    AcquisitionEngine,
    Capture,
    CaptureAborted,
    CaptureProgress,
    CaptureStarted,
    CaptureTaken,
    EngineEvent,
    LinkChanged,
    Telemetry,
    capture_summary,
)
from ..config import Settings
from ..mqtt import CommandRefused, Courier, Request
from ._finisher import CaptureFinisher, CaptureOutcome, Ledger
from ._publication import Publication
from .identification import IdentificationExecutor, LocalExecutor, WorkerExecutor

__all__ = ["RunCore"]


class RunCore:
    """A run's parts, and its handling of the engine's events (see module docstring).

    `ledger` keeps what the run keeps of its captures; `methods` identify each one;
    `capture_path(capture_id)` says where its file goes; `extras(capture)` adds a policy's
    fields to its record (a session: its number, acquisition statistics); `ids` the ids
    its documents carry; `armed`: whether the trigger watches for a release at once.
    Without a courier nothing is published. `pool`: an identification process to share.
    `executor` is where captures are identified: `pool`, or the workers.
    """

    def __init__(self, settings: Settings, source: Source, courier: Courier | None,
                 ledger: Ledger, *, methods: list[str], say: Callable[[str], None],
                 capture_path: Callable[[str], Path],
                 extras: Callable[[Capture], dict[str, Any]] | None = None,
                 ids: Callable[[str | None], dict[str, Any]] | None = None,
                 armed: bool = True, pool: LocalExecutor | None = None,
                 on_status: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.engine = AcquisitionEngine(
            source, rig=settings.rig, trigger=settings.trigger, ring_s=settings.ring.seconds,
            telemetry_hz=settings.mqtt.telemetry_hz if courier is not None else 0.0,
            armed=armed, kind=settings.rig_kind)
        self.publication = Publication(courier, source, ids=ids)
        self.owns_pool = pool is None
        self.pool = pool or LocalExecutor()
        self.executor: IdentificationExecutor = self.pool
        if settings.identify.offload and courier is not None:
            ident = settings.identify
            self.executor = WorkerExecutor(
                courier, self.publication, ident.job_timeout_s, say, fallback=self.pool,
                worker_wait_s=ident.worker_wait_s if ident.local_fallback else None)
        self.finisher = CaptureFinisher(self.publication, ledger, methods=methods,
                                        executor=self.executor, say=say)
        self.say = say
        # the rig's state for a live status line: recording (capture, seconds, samples), idle
        self.on_status = on_status or (lambda status: None)
        self.capture_path = capture_path
        self.extras = extras or (lambda capture: {})
        self._documents: dict[str, int] = {}  # capture id -> lifecycle documents so far

    async def drive(self, step: Callable[[EngineEvent], bool]) -> None:
        """Hand every engine event to `step` until it returns False (or raises); the
        source's stream is closed before this returns, whichever way it ends."""
        events = self.engine.events()
        try:
            async for event in events:
                if not step(event):
                    break
        finally:
            await events.aclose()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Publication and identification up around acquisition.

        Inside, the policy iterates `engine.events()`, then awaits `finisher.wait()` (every
        capture handed over finished) and says how the run ended: what it publishes then
        still goes out, since the publication is drained when this is left.
        """
        async with self.publication:
            self.publication.status("idle")
            self.executor.start()
            try:
                yield
            finally:
                if self.executor is not self.pool:
                    self.executor.shutdown()
                if self.owns_pool:
                    self.pool.shutdown()

    def handle(self, event: EngineEvent) -> CaptureOutcome | None:
        """React to one event; a taken capture's outcome (being finished) is returned."""
        if isinstance(event, LinkChanged):
            self.say("link: " + event.summary)
            self.publication.status(self.publication.state)
        elif isinstance(event, Telemetry):
            self.publication.telemetry(event.body)
        elif isinstance(event, CaptureStarted):
            self.say(f"capture {event.capture_id}: release detected")
            self.publication.status("capturing")
            self.on_status({"state": "recording", "capture_id": event.capture_id,
                            "duration_s": 0.0, "samples": 0})
            trig = event.trigger
            self._document(event.capture_id, "start", trigger_index=trig.trigger_index,
                           onset_index=trig.onset_index, release_estimate=trig.release_estimate)
        elif isinstance(event, CaptureProgress):
            self._document(event.capture_id, "progress", samples=event.samples,
                           duration_s=event.duration_s)
            self.on_status({"state": "recording", "capture_id": event.capture_id,
                            "duration_s": event.duration_s, "samples": event.samples})
        elif isinstance(event, CaptureTaken):
            return self._taken(event)
        elif isinstance(event, CaptureAborted):
            self.say(f"capture {event.capture_id}: aborted")
            self._document(event.capture_id, "stop", exit_status="aborted",
                           reason="aborted by command")
            self._documents.pop(event.capture_id, None)
            self.publication.status("idle")
            self.on_status({"state": "idle"})
        return None

    def _taken(self, event: CaptureTaken) -> CaptureOutcome:
        capture = event.capture
        self._documents.pop(capture.capture_id, None)
        path = self.capture_path(capture.capture_id)
        summary = capture_summary(capture, path)
        summary["link_errors"] = event.link_errors
        summary.update(self.extras(capture))
        outcome = self.finisher.finish(capture, path, summary)
        self.publication.status("idle")
        self.on_status({"state": "idle"})
        return outcome

    def _document(self, capture_id: str, document: str, **fields: Any) -> None:
        n = self._documents[capture_id] = self._documents.get(capture_id, 0) + 1
        self.publication.capture(capture_id, {"document": document, "doc_n": n, **fields})

    async def abort_command(self, request: Request) -> dict[str, Any]:
        """`abort`: drop the capture under way; nothing of it is written."""
        capture_id = self.engine.abort()
        if capture_id is None:
            raise CommandRefused("abort: not allowed now: no capture is recording")
        return {"capture_id": capture_id}
