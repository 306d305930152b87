"""Offloaded identification: each capture goes to a ready `hilrig worker`, who answers.

Workers say when they are ready (``hilrig-workers/ready/<worker>``, retained); the rig
sends each job to one of them by name and keeps it until a result per method came back
(see mqtt/_jobs.py). A job unanswered after `timeout_s` goes to another ready worker,
and the silent one gets nothing more until it says it is ready again. Workers answer on
jobs/result/..., a topic only the rig reads; a result is kept once per job and method
(its key ``job/<capture_id>/<method>``), however often it is delivered, and then
published on result/ by the rig itself: what dashboards read as the rig's result is the
rig's word.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from identify import IdentificationResult

from ..mqtt import (
    WORKERS_READY,
    Courier,
    Job,
    JobPayload,
    PendingJobs,
    WorkerPayload,
    result_from_message,
)
from ._finisher import CaptureFinisher, CaptureOutcome
from ._publication import Publication

__all__ = ["NOTICE_S", "JobOffload"]

#: a job no worker has taken this long is reported (terminal, events)
NOTICE_S = 5.0


class JobOffload:
    """Sends captures to ready workers and hands their results to the finisher."""

    def __init__(self, courier: Courier, publication: Publication, timeout_s: float,
                 say: Callable[[str], None], worker_wait_s: float | None = None) -> None:
        self.publication = publication
        self.topics = courier.topics
        self.say = say
        self.jobs = PendingJobs(timeout_s)
        self.worker_wait_s = worker_wait_s  # None: wait for a worker however long
        self.finisher: CaptureFinisher | None = None  # set by the finisher's owner
        self.ready: dict[str, float] = {}  # worker -> when it last said it was ready
        self.busy: set[str] = set()  # sent a job since it last said so
        self._told_waiting = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._watching: asyncio.Task[None] | None = None
        courier.subscribe(self.topics.job_results, self._on_result)
        courier.subscribe(WORKERS_READY, self._on_ready)

    def send(self, outcome: CaptureOutcome, methods: list[str]) -> None:
        """Queue a written capture as a job for `methods`; it goes to the next ready worker."""
        self.jobs.add(outcome.capture_id, methods, time.monotonic(), outcome)
        self._idle.clear()
        self._dispatch()
        if self._watching is None or self._watching.done():
            self._watching = asyncio.get_running_loop().create_task(self._watch())

    def _dispatch(self) -> None:
        """Each waiting job to a ready worker not busy with one of ours, longest idle first."""
        free = sorted((w for w in self.ready if w not in self.busy), key=self.ready.__getitem__)
        waiting = self.jobs.unassigned()
        for job, worker in zip(waiting, free):
            self.jobs.assign(job, worker, time.monotonic())
            self.busy.add(worker)
            self._publish(job, worker)
        if len(waiting) > len(free) and not self._told_waiting:
            self._told_waiting = True
            self.say(f"{len(waiting) - len(free)} capture(s) waiting for a ready worker")
        elif len(waiting) <= len(free):
            self._told_waiting = False

    def _publish(self, job: Job, worker: str) -> None:
        outcome = job.context
        payload = JobPayload.from_file(
            outcome.path, rig_id=self.topics.rig_id, job_id=job.capture_id,
            capture_id=job.capture_id, methods=sorted(job.methods_left), attempt=job.attempt,
            worker=worker, with_response=True,
            session_id=self.publication.ids(job.capture_id).get("session_id")).to_json()
        self.say(f"capture {job.capture_id}: offloaded to worker {worker}"
                 + (f" (attempt {job.attempt})" if job.attempt > 1 else ""))
        self.publication.job(f"job/{job.capture_id}/{job.attempt}",
                             self.topics.job(worker, job.capture_id), payload)

    async def _on_ready(self, message: Any) -> None:
        """A worker is ready (or, an empty message, gone)."""
        name = message.topic.value.rsplit("/", 1)[-1]
        if not message.payload:
            self.ready.pop(name, None)
            self.busy.discard(name)
            return
        try:
            WorkerPayload.model_validate_json(bytes(message.payload))
        except ValueError:
            return  # not a worker's word: ignored
        self.ready[name] = time.monotonic()
        self.busy.discard(name)
        self._dispatch()

    async def _on_result(self, message: Any) -> None:
        """A result message: a worker's answer to a job of ours, kept once per method."""
        try:
            job_id, body = result_from_message(bytes(message.payload))
            if job_id is None:
                raise ValueError("a result without a job_id")
            result = IdentificationResult.model_validate(body)
        except (ValueError, TypeError) as exc:
            self.publication.event("warning", "job.bad_result", f"{message.topic.value}: {exc}")
            return
        job, fresh = self.jobs.answered(job_id, result.method)
        if job is None or not fresh or self.finisher is None:
            return  # a redelivery, or a job this service does not know
        self.finisher.worker_result(job.context, result, f"job/{job_id}/{result.method}",
                                    last=not job.methods_left)
        if not len(self.jobs):
            self._idle.set()

    def _unclaimed(self, now: float) -> None:
        """With no worker there at all (none ready or busy with ours): a job waiting is
        said after NOTICE_S (terminal and events), and after worker_wait_s handed back to
        be identified here. Jobs queued behind busy workers wait for them."""
        if self.ready:
            return
        for job in self.jobs.unassigned():
            waited = now - job.queued
            if waited >= NOTICE_S and not job.told_waiting:
                job.told_waiting = True
                then = ("; identified here after "
                        f"{self.worker_wait_s:g} s" if self.worker_wait_s is not None
                        else "; it waits for one (identify.local_fallback is off)")
                text = (f"capture {job.capture_id}: no worker has taken its job in "
                        f"{waited:.0f} s{then}")
                self.say(text)
                self.publication.event("warning", "job.no_worker", text, job.capture_id)
            if self.worker_wait_s is not None and waited >= self.worker_wait_s \
                    and self.finisher is not None:
                self.jobs.take_back(job)
                text = (f"capture {job.capture_id}: no worker in {waited:.0f} s; identifying "
                        "it here")
                self.say(text)
                self.publication.event("info", "job.local", text, job.capture_id)
                self.finisher.identify_here(job.context, sorted(job.methods_left))
        if not len(self.jobs):
            self._idle.set()

    async def wait(self) -> None:
        """Until every job has all its results."""
        await self._idle.wait()

    def close(self) -> None:
        if self._watching is not None:
            self._watching.cancel()

    async def _watch(self) -> None:
        """While jobs are pending: a job its worker did not answer goes to another; one no
        worker takes is reported, then identified here."""
        while len(self.jobs):
            await asyncio.sleep(1.0)
            self._unclaimed(time.monotonic())
            late = self.jobs.overdue(time.monotonic())
            for job, worker in late:
                self.publication.event(
                    "warning", "job.retry", f"capture {job.capture_id}: worker {worker} gave "
                    f"no result within {self.jobs.timeout_s:g} s; it goes to another",
                    job.capture_id)
                self.ready.pop(worker, None)  # silent: nothing more until it is ready again
                self.busy.discard(worker)
            if late:
                self._dispatch()
