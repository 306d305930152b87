"""Offloaded identification: each capture goes out as a job, `hilrig worker`s answer.

The rig keeps every job until a result per method came back (see mqtt/_jobs.py); a job
unanswered after `timeout_s` is published again. Workers answer on jobs/result/..., a
topic only the rig reads; a result is kept once per job and method (its key
``job/<capture_id>/<method>``), however often it is delivered, and then published on
result/ by the rig itself: what dashboards read as the rig's result is the rig's word.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from identify import IdentificationResult

from ..mqtt import Courier, Job, JobPayload, PendingJobs, result_from_message
from ._finisher import CaptureFinisher, CaptureOutcome
from ._publication import Publication

__all__ = ["JobOffload"]


class JobOffload:
    """Sends captures to the workers and hands their results to the finisher."""

    def __init__(self, courier: Courier, publication: Publication, timeout_s: float,
                 say: Callable[[str], None]) -> None:
        self.publication = publication
        self.topics = courier.topics
        self.say = say
        self.jobs = PendingJobs(timeout_s)
        self.finisher: CaptureFinisher | None = None  # set by the finisher's owner
        self._idle = asyncio.Event()
        self._idle.set()
        self._watching: asyncio.Task[None] | None = None
        courier.subscribe(self.topics.job_results, self._on_result)

    def send(self, outcome: CaptureOutcome, methods: list[str]) -> None:
        """Publish a written capture as a job for `methods`."""
        job = self.jobs.add(outcome.capture_id, methods, time.monotonic(), outcome)
        self._idle.clear()
        self._publish(job)
        if self._watching is None or self._watching.done():
            self._watching = asyncio.get_running_loop().create_task(self._watch())

    def _publish(self, job: Job) -> None:
        outcome = job.context
        payload = JobPayload.from_file(
            outcome.path, rig_id=self.topics.rig_id, job_id=job.capture_id,
            capture_id=job.capture_id, methods=sorted(job.methods_left), attempt=job.attempt,
            session_id=self.publication.ids(job.capture_id).get("session_id")).to_json()
        self.say(f"capture {job.capture_id}: offloaded to the workers"
                 + (f" (attempt {job.attempt})" if job.attempt > 1 else ""))
        self.publication.job(f"job/{job.capture_id}/{job.attempt}",
                             self.topics.job(job.capture_id), payload)

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

    async def wait(self) -> None:
        """Until every job has all its results."""
        await self._idle.wait()

    def close(self) -> None:
        if self._watching is not None:
            self._watching.cancel()

    async def _watch(self) -> None:
        """While jobs are pending: publish again those unanswered for `timeout_s`."""
        while len(self.jobs):
            await asyncio.sleep(1.0)
            for job in self.jobs.overdue(time.monotonic()):
                self.publication.event(
                    "warning", "job.retry", f"capture {job.capture_id}: no result within "
                    f"{self.jobs.timeout_s:g} s; job published again", job.capture_id)
                self._publish(job)
