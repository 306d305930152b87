"""The acquisition service: source -> ring buffer -> trigger -> capture file -> identify -> MQTT.

Acquisition is one loop over the source's blocks; everything slow (file writing,
identification, publishing) runs beside it, so it never stalls the stream:
identification in a worker process, publication in one task that owns the MQTT
connection and drains a queue.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from drivers import SimulatedRig, Source
from identify import IdentificationResult
from identify.results import format_fit

from ._capture_file import Capture, TriggerInfo, write_capture_h5
from ._config import Settings
from ._commands import CommandRefused, CommandRouter
from ._courier import Courier
from ._jobs import Job, JobPayload, PendingJobs, job_topic, result_from_message
from ._ring import RingBuffer
from ._telemetry import TelemetryDecimator
from ._trigger import Armed, FreeDecayTrigger, Settled, Triggered, TriggerState
from ._version import SOFTWARE_VERSION
from ._worker import identification_pool, identify_file

log = logging.getLogger("hilrig.service")


def new_capture_id() -> str:
    """Sortable and unique: UTC time plus random suffix."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def _utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class CaptureOutcome:
    capture_id: str
    path: Path
    summary: dict[str, Any]
    result: IdentificationResult | None = None
    error: str | None = None


@dataclass
class _Pending:
    capture_id: str
    start: int
    trigger: Triggered
    started_utc: str
    link_errors: dict[str, int] = field(default_factory=dict)
    documents: int = 0  # lifecycle documents published so far
    aborted: bool = False  # an abort command: dropped at the next block


@dataclass
class ServiceReport:
    outcomes: list[CaptureOutcome] = field(default_factory=list)

    @property
    def failed(self) -> list[CaptureOutcome]:
        return [o for o in self.outcomes if o.error]


class RigService:
    """Runs acquisition on one source until `captures` captures are identified (or forever)."""

    def __init__(self, settings: Settings, source: Source, publisher: Courier | None, *,
                 captures: int | None = None, method: str | None = None,
                 on_event: Callable[[str], None] | None = None) -> None:
        self.settings = settings
        self.source = source
        self.publisher = publisher
        self.captures = captures
        self.method = method or settings.identify.method
        self.methods = [self.method]
        self._settled_count = 0
        self.on_event = on_event or (lambda text: None)
        self.rate = rate = source.info.sample_rate_hz
        self.ring = RingBuffer.from_seconds(settings.ring.seconds, rate)
        self.trigger = FreeDecayTrigger(settings.trigger, rate)
        hz = settings.mqtt.telemetry_hz
        self._telemetry = (TelemetryDecimator(rate, source.info.counts_per_rev, hz)
                           if hz > 0 and publisher is not None else None)
        self.directory = Path(settings.storage.directory)
        self.report = ServiceReport()
        self._queue: asyncio.Queue[Callable[[Courier], Awaitable[Any]] | None] = asyncio.Queue()
        self._state = "idle"
        self._faults_seen: tuple[Any, ...] | None = None
        self._halted = False
        offload = settings.identify.offload and publisher is not None
        self._jobs = PendingJobs(settings.identify.job_timeout_s) if offload else None
        self._jobs_idle = asyncio.Event()
        self._jobs_idle.set()
        if offload:
            assert publisher is not None
            publisher.subscribe(f"hilrig/{settings.mqtt.rig_id}/result/+/+", self._on_result)
        self._faults_checked = 0.0

    # -- status: the state and the source's link health -------------------------------------
    def _health(self) -> dict[str, Any]:
        stats = getattr(self.source, "stats", None)
        return stats.health() if stats is not None else {}

    def _set_state(self, state: str, **extra: Any) -> None:
        self._state = state
        health = self._health()
        self._faults_seen = _fault_signature(health)
        info = self.source.info  # re-read: a board reset changes its identity
        self._publish(lambda p: p.publish_status(state, source=info, link=health, **extra))

    def _watch_link(self) -> None:
        """At most once a second: a new fault (gap, error, reconnect) is told and published."""
        now = time.monotonic()
        if now - self._faults_checked < 1.0:
            return
        self._faults_checked = now
        health = self._health()
        signature = _fault_signature(health)
        if signature == self._faults_seen:
            return
        self._faults_seen = signature
        self.on_event("link: " + _fault_line(health))
        info = self.source.info
        state = self._state
        self._publish(lambda p: p.publish_status(state, source=info, link=health))

    # -- publication: one task owns the connection; acquisition only enqueues --------------
    def _publish(self, job: Callable[[Courier], Awaitable[Any]]) -> None:
        if self.publisher is not None:
            self._queue.put_nowait(job)

    async def _publisher_task(self) -> None:
        while (job := await self._queue.get()) is not None:
            try:
                await job(self.publisher)  # type: ignore[arg-type]
            except Exception:  # a consumer must never crash acquisition
                log.exception("publication failed")

    # -- the capture pipeline beside acquisition -------------------------------------------
    def capture_path(self, capture_id: str) -> Path:
        """Where a capture's file goes (a session lays its archive out by date and session)."""
        return self.directory / f"{capture_id}.h5"

    async def _finish(self, pool: Any, capture: Capture, link_errors: dict[str, int]) -> None:
        path = self.capture_path(capture.capture_id)
        summary = capture_summary(capture, path)
        summary["link_errors"] = link_errors
        summary.update(self._capture_extras(capture))
        outcome = CaptureOutcome(capture.capture_id, path, summary)
        self.report.outcomes.append(outcome)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            await asyncio.to_thread(write_capture_h5, path, capture)
        except Exception as exc:  # noqa: BLE001 - reported, acquisition goes on
            outcome.error = f"{path}: capture file not written: {exc}"
            log.error(outcome.error)
            self.on_event(f"capture {capture.capture_id}: ERROR {outcome.error}")
            self._capture_failed(outcome)
            failed = {**summary, "document": "stop", "exit_status": "failed",
                      "reason": outcome.error, "file": None}
            self._publish(lambda p: p.publish_capture(capture.capture_id, failed))
            self._event("error", "capture.write_failed", outcome.error, capture.capture_id)
            return
        self.on_event(
            f"capture {capture.capture_id}: {summary['duration_s']:.1f} s, {summary['samples']} "
            f"samples, {summary['lost_samples']} lost, end: {summary['end_reason']} -> {path}")
        self._capture_written(outcome)
        stop = {**summary, "document": "stop", "exit_status": "success"}
        self._publish(lambda p: p.publish_capture(capture.capture_id, stop))
        if self._jobs is not None:
            self._offload(outcome)
        else:
            await self.identify_outcome(pool, outcome)

    # -- offloaded identification (hilrig worker) ------------------------------------------
    def _offload(self, outcome: CaptureOutcome, methods: list[str] | None = None) -> None:
        assert self._jobs is not None
        job = self._jobs.add(outcome.capture_id, methods or self.methods, time.monotonic(),
                             outcome)
        self._jobs_idle.clear()
        self._send_job(job)

    def _send_job(self, job: Job) -> None:
        outcome = job.context
        payload = JobPayload.from_file(
            outcome.path, rig_id=self.settings.mqtt.rig_id, job_id=job.capture_id,
            capture_id=job.capture_id, methods=sorted(job.methods_left), attempt=job.attempt,
            session_id=self._ids(job.capture_id).get("session_id")).to_json()
        topic = job_topic(self.settings.mqtt.rig_id, job.capture_id)
        msg_id = f"job/{job.capture_id}/{job.attempt}"
        self.on_event(f"capture {job.capture_id}: offloaded to the workers"
                      + (f" (attempt {job.attempt})" if job.attempt > 1 else ""))
        self._publish(lambda p: p.publish_job(msg_id, topic, payload))

    async def _on_result(self, message: Any) -> None:
        """A worker's result: kept once per job and method, then the capture is done."""
        if self._jobs is None:
            return
        try:
            job_id, body = result_from_message(bytes(message.payload))
            if job_id is None:
                return  # not from a worker (this service's own, or a re-identification)
            result = IdentificationResult.model_validate(body)
        except (ValueError, TypeError) as exc:
            self._event("warning", "job.bad_result", f"{message.topic.value}: {exc}")
            return
        job, fresh = self._jobs.answered(job_id, result.method)
        if job is None or not fresh:
            return  # a redelivery, or a job this service does not know
        outcome = job.context
        outcome.result = result
        self.on_event(result_line(result) + " (worker)")
        self._result_ready(outcome, result, f"job/{job_id}/{result.method}")
        if not job.methods_left:
            self._capture_identified(outcome)
        if not len(self._jobs):
            self._jobs_idle.set()

    async def _watch_jobs(self) -> None:
        assert self._jobs is not None
        while True:
            await asyncio.sleep(1.0)
            for job in self._jobs.overdue(time.monotonic()):
                self._event("warning", "job.retry",
                            f"capture {job.capture_id}: no result within "
                            f"{self._jobs.timeout_s:g} s; job published again", job.capture_id)
                self._send_job(job)

    def _event(self, level: str, code: str, message: str, capture_id: str | None = None) -> None:
        """A warning or error for dashboards (``events``), with the ids that join it."""
        ids = {k: v for k, v in self._ids(capture_id).items() if v is not None}
        self._publish(lambda p: p.publish_event(level, code, message, **ids))

    def _ids(self, capture_id: str | None) -> dict[str, Any]:
        """Ids a capture's documents carry (a session adds its own)."""
        return {"capture_id": capture_id}

    async def identify_outcome(self, pool: Any, outcome: CaptureOutcome,
                               methods: list[str] | None = None) -> None:
        """Identify a written capture with each method; every result is told and published."""
        loop = asyncio.get_running_loop()
        for method in methods if methods is not None else self.methods:
            try:
                text = await loop.run_in_executor(pool, identify_file, str(outcome.path), method)
                result = IdentificationResult.model_validate_json(text)
            except Exception as exc:  # noqa: BLE001
                outcome.error = f"{outcome.path}: identification ({method}) failed: {exc}"
                log.error(outcome.error)
                self.on_event(f"capture {outcome.capture_id}: ERROR {outcome.error}")
                self._capture_failed(outcome)
                self._event("error", "identify.failed", outcome.error, outcome.capture_id)
                return
            outcome.result = result
            self.on_event(result_line(result))
            self._result_ready(outcome, result)
            self._publish_result(outcome, result)
        self._capture_identified(outcome)

    def _publish_result(self, outcome: CaptureOutcome, result: IdentificationResult) -> None:
        # the courier tells when the broker has it (its on_delivered)
        self._publish(lambda p: p.publish_result(outcome.capture_id, result.method, result))

    # -- hooks a session overrides (the plain service only reports) ------------------------
    def _capture_extras(self, capture: Capture) -> dict[str, Any]:
        return {}

    def _capture_started(self, capture_id: str) -> None:
        pass

    def _capture_written(self, outcome: CaptureOutcome) -> None:
        pass

    def _result_ready(self, outcome: CaptureOutcome, result: IdentificationResult,
                      result_key: str | None = None) -> None:
        pass

    def _capture_identified(self, outcome: CaptureOutcome) -> None:
        pass

    def _capture_failed(self, outcome: CaptureOutcome) -> None:
        pass

    def _rearm_trigger(self) -> None:
        """After a capture: watch for the next release as soon as the rig rests."""
        self.trigger.arm()

    def _armed(self, index: int) -> None:
        """The trigger armed: the rig rests and motion is watched from `index` on."""

    def _block_seen(self, end_index: int) -> bool:
        """Called after every block; False ends acquisition (a session's timeouts, limits)."""
        return True

    def _settled(self) -> bool:
        """A capture was taken; returns whether acquisition goes on (and re-arms the rig)."""
        self._settled_count += 1
        more = self.captures is None or self._settled_count < self.captures
        if more:
            self._rearm_source()
        return more

    def _take_capture(self, pending: _Pending, settled: Settled) -> Capture:
        start = max(pending.start, self.ring.oldest_index)
        idx, counts = self.ring.window(start, settled.end_index)
        self.ring.release()
        trig = TriggerInfo(trigger_index=pending.trigger.trigger_index,
                           onset_index=pending.trigger.onset_index,
                           release_estimate=pending.trigger.release_estimate, start_index=start,
                           end_index=settled.end_index, end_reason=settled.reason,
                           started_utc=pending.started_utc)
        info = self.source.info
        return Capture(capture_id=pending.capture_id, sample_index=idx.copy(),
                       counts=counts.copy(), sample_rate_hz=info.sample_rate_hz,
                       counts_per_rev=info.counts_per_rev, rig=self.settings.rig, source=info,
                       trigger=trig, software_version=SOFTWARE_VERSION)

    async def run(self) -> ServiceReport:
        self.directory.mkdir(parents=True, exist_ok=True)
        publisher_task = asyncio.create_task(self._publisher_task())
        self._set_state("idle")
        self._finishing: set[asyncio.Task[None]] = set()
        self._pool = pool = identification_pool()
        try:
            await self._before_acquisition(pool)
            async with self.source:
                acquiring = self._acquiring = asyncio.create_task(self._acquire(pool))
                try:
                    await acquiring
                except asyncio.CancelledError:
                    # halt(): acquisition ended from outside (a source that stays silent);
                    # any other cancellation (the service stopped) goes on up
                    me = asyncio.current_task()
                    if not self._halted or (me is not None and me.cancelling()):
                        raise
                finally:
                    acquiring.cancel()
            if self._finishing:
                await asyncio.gather(*self._finishing)
            if self._jobs is not None:
                watch = asyncio.create_task(self._watch_jobs())
                try:
                    await self._jobs_idle.wait()  # every offloaded capture answered
                finally:
                    watch.cancel()
            self._after_acquisition()
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            self._queue.put_nowait(None)
            await publisher_task
        return self.report

    def halt(self) -> None:
        """End acquisition now, even if the source yields nothing (a lost bridge)."""
        self._halted = True
        task = getattr(self, "_acquiring", None)
        if task is not None:
            task.cancel()

    async def _before_acquisition(self, pool: Any) -> None:
        """A resumed session identifies what an earlier run captured but did not finish."""

    def _after_acquisition(self) -> None:
        """Every capture is finished; what is published here still goes out."""

    def _capture_document(self, pending: _Pending, document: str, **fields: Any) -> None:
        pending.documents += 1
        body = {**self._ids(pending.capture_id), "document": document,
                "doc_n": pending.documents, **fields}
        self._publish(lambda p: p.publish_capture(pending.capture_id, body))

    async def _acquire(self, pool: Any) -> None:
        self._pending = None
        going = True
        progress_at = 0.0
        async for block in self.source.blocks():
            self.ring.write(block)
            self._watch_link()
            if self._telemetry is not None:
                for body in self._telemetry.feed(block):
                    self._publish(lambda p, b=body: p.publish_telemetry(b))
            for ev in self.trigger.process(block):
                if isinstance(ev, Triggered):
                    pending = self._pending = _Pending(
                        new_capture_id(), max(ev.capture_start, self.ring.oldest_index), ev,
                        _utc(), self._error_counts())
                    self.ring.retain_from(pending.start)
                    self.on_event(f"capture {pending.capture_id}: release detected")
                    self._capture_started(pending.capture_id)
                    self._set_state("capturing")
                    self._capture_document(pending, "start", trigger_index=ev.trigger_index,
                                           onset_index=ev.onset_index,
                                           release_estimate=ev.release_estimate)
                    progress_at = block.host_time
                elif isinstance(ev, Armed):
                    self._armed(ev.index)
                elif isinstance(ev, Settled) and self._pending is not None:
                    pending, self._pending = self._pending, None
                    capture = self._take_capture(pending, ev)
                    errors = _count_diff(self._error_counts(), pending.link_errors)
                    task = asyncio.create_task(self._finish(pool, capture, errors))
                    self._finishing.add(task)
                    task.add_done_callback(self._finishing.discard)
                    self._set_state("idle")
                    self._rearm_trigger()
                    going = self._settled()
            pending = self._pending
            if pending is not None and pending.aborted:
                self._abort(pending)
                pending = None
            if pending is not None and block.host_time - progress_at >= 1.0:
                progress_at = block.host_time
                self._capture_document(pending, "progress",
                                       samples=block.end_index - pending.start,
                                       duration_s=(block.end_index - pending.start) / self.rate)
            if not going or (pending is None and not self._block_seen(block.end_index)):
                break

    def _abort(self, pending: _Pending) -> None:
        """Drop the capture under way (a command): nothing is written, the trigger re-arms."""
        self._pending = None
        self.ring.release()
        self.trigger.disarm()
        self.on_event(f"capture {pending.capture_id}: aborted")
        self._capture_document(pending, "stop", exit_status="aborted",
                               reason="aborted by command")
        self._capture_aborted(pending.capture_id)
        self._set_state("idle")
        self._rearm_trigger()

    def _capture_aborted(self, capture_id: str) -> None:
        """A session marks it aborted (its number is captured again)."""

    # -- commands (hilrig/<rig_id>/cmd/<verb>) ---------------------------------------------
    def register_commands(self, router: CommandRouter) -> None:
        router.register("arm", self._cmd_arm)
        router.register("abort", self._cmd_abort)
        router.register("release", self._cmd_release)
        router.register("identify", self._cmd_identify)

    async def _cmd_arm(self, request: Any) -> dict[str, Any]:
        if self.trigger.state is TriggerState.RECORDING:
            raise CommandRefused("arm: not allowed now: a capture is recording")
        self.trigger.arm()
        return {"trigger": self.trigger.state.value}

    async def _cmd_abort(self, request: Any) -> dict[str, Any]:
        pending = getattr(self, "_pending", None)
        if pending is None:
            raise CommandRefused("abort: not allowed now: no capture is recording")
        pending.aborted = True
        return {"capture_id": pending.capture_id}

    async def _cmd_release(self, request: Any) -> dict[str, Any]:
        if not isinstance(self.source, SimulatedRig):
            raise CommandRefused("release: this rig is released by hand")
        if not self.source.held:
            raise CommandRefused("release: not allowed now: the rig is not held")
        self.source.release()
        return {"released": True}

    def archived_path(self, capture_id: str) -> Path:
        """The file of an archived capture, never outside the storage directory."""
        path = self.directory / f"{capture_id}.h5"
        if not path.is_file():
            raise CommandRefused(f"identify: no capture {capture_id!r} in {self.directory}")
        return path

    async def _cmd_identify(self, request: Any) -> dict[str, Any]:
        path = self.archived_path(request.capture_id)
        root = self.directory.resolve()
        if root not in path.resolve().parents:
            raise CommandRefused(f"identify: {request.capture_id!r} is outside the archive")
        pool = getattr(self, "_pool", None)
        if pool is None:
            raise CommandRefused("identify: not allowed now: the service is not running")
        text = await asyncio.get_running_loop().run_in_executor(
            pool, identify_file, str(path), request.method)
        result = IdentificationResult.model_validate_json(text)
        stored = self._store_result(request.capture_id, path, result)
        self.on_event(result_line(result))
        self._publish(lambda p: p.publish_result(request.capture_id, result.method, result))
        return {"capture_id": request.capture_id, "method": result.method,
                "fit_percent": result.fit_percent, "compute_seconds": result.compute_seconds,
                **stored}

    def _store_result(self, capture_id: str, path: Path, result: IdentificationResult
                      ) -> dict[str, Any]:
        """Where a re-identification is kept (a session: the catalog); returns its ids."""
        return {}

    def _error_counts(self) -> dict[str, int]:
        health = self._health()
        counts = dict(health.get("errors", {}))
        for key in ("lost_samples", "gaps", "reconnects", "resets"):
            if key in health:
                counts[key] = int(health[key])
        return counts

    def _rearm_source(self) -> None:
        """The simulated rig is put back at its pose and released again (an operator would)."""
        if isinstance(self.source, SimulatedRig):
            self.source.hold(self.settings.sim.pose_deg, release_in_s=self.settings.sim.hold_s)


def _fault_signature(health: dict[str, Any]) -> tuple[Any, ...]:
    return (health.get("lost_samples"), health.get("gaps"), health.get("reconnects"),
            health.get("resets"), tuple(sorted(health.get("errors", {}).items())))


def _count_diff(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    """Counters that grew, by how much (what happened on the link during a capture)."""
    return {k: v - before.get(k, 0) for k, v in sorted(after.items()) if v > before.get(k, 0)}


def _fault_line(health: dict[str, Any]) -> str:
    """One line for the terminal: totals of what went wrong on the link so far."""
    errors = health.get("errors", {})
    parts = [f"{health.get('lost_samples', 0)} samples lost"]
    for key in ("gaps", "reconnects", "resets"):
        if health.get(key):
            parts.append(f"{health[key]} {key}")
    parts += [f"{v} {k}" for k, v in errors.items()]
    return ", ".join(parts) + " (totals)"


def capture_summary(capture: Capture, path: Path) -> dict[str, Any]:
    idx = capture.sample_index
    expected = int(idx[-1] - idx[0] + 1)
    trig = capture.trigger
    rate = capture.sample_rate_hz
    return {
        "capture_id": capture.capture_id,
        "file": os.fspath(path),
        "samples": int(idx.size),
        "lost_samples": expected - int(idx.size),
        "gaps": len(capture.gaps()),
        "duration_s": capture.duration_s,
        "sample_rate_hz": rate,
        "start_index": int(idx[0]),
        "end_index": int(idx[-1]) + 1,
        "trigger_index": trig.trigger_index,
        "onset_index": trig.onset_index,
        "release_estimate": trig.release_estimate,
        "pre_trigger_s": (None if trig.onset_index is None
                          else (trig.onset_index - int(idx[0])) / rate),
        "end_reason": trig.end_reason,
        "started_utc": trig.started_utc,
        "source": capture.source.identity,
        "max_abs_counts": np.abs(capture.counts).max(axis=0).tolist()
        if capture.counts is not None else None,
    }


def result_line(result: IdentificationResult) -> str:
    p = result.parameters

    def show(name: str) -> str:
        e = p[name]
        if e.value is None:
            return f"{name}=n/i"
        return f"{name}={e.value:.4g}"

    return (f"result {result.capture_id} {result.method}: fit {format_fit(result.fit_percent)}, "
            + ", ".join(show(n) for n in ("mu_d0", "mu_v0", "mu_d1", "mu_v1"))
            + f" ({result.compute_seconds:.2f} s)")
