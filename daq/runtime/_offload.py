"""Offloaded identification: each capture goes to a ready `hilrig worker`, who answers.

Workers say when they are ready (``hilrig-workers/ready/<worker>``, retained); the rig
sends each job to one of them by name and keeps it until a result per method came back
(see mqtt/_jobs.py). A job unanswered after `timeout_s` goes to another ready worker,
and the silent one gets nothing more until it says it is ready again. Workers answer on
jobs/result/<worker>/..., a topic only the rig reads; a result is kept once per job and
method (its key ``job/<capture_id>/<method>``), however often it is delivered, and then
published on result/ by the rig itself: what dashboards read as the rig's result is the
rig's word.

An answer is kept only from a worker the job was given to, and only when it is the
result of that capture and method, within the size bound, with finite numbers in their
physical domain. Anything else is refused before it is stored or published, told as one
line (terminal, a ``job.refused`` event); a refused answer of the job's own worker sends
the job to another ready worker, or, with none, identifies it here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from hilrig.identify import IdentificationResult, result_problems

from ..config import first_error, one_line
from ..mqtt import (
    WORKERS_READY,
    Courier,
    Job,
    JobPayload,
    PendingJobs,
    WorkerPayload,
    check_worker,
    result_from_message,
)
from ._finisher import CaptureFinisher, CaptureOutcome
from ._publication import Publication

__all__ = ["NOTICE_S", "JobOffload"]

#: a job no worker has taken this long is reported (terminal, events)
NOTICE_S = 5.0
#: the longest event text about an answer (what it says comes partly from the sender)
_MAX_TOLD = 300


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
        """Each waiting job to a ready worker not busy with one of ours, longest idle first,
        never to one whose answer to it was refused."""
        free = sorted((w for w in self.ready if w not in self.busy), key=self.ready.__getitem__)
        for job in self.jobs.unassigned():
            worker = next((w for w in free if w not in job.refused_from), None)
            if worker is None:
                continue
            free.remove(worker)
            self.jobs.assign(job, worker, time.monotonic())
            self.busy.add(worker)
            self._publish(job, worker)
        waiting = len(self.jobs.unassigned())
        if waiting and not self._told_waiting:
            self._told_waiting = True
            self.say(f"{waiting} capture(s) waiting for a ready worker")
        elif not waiting:
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
        try:
            name = check_worker("/".join(message.topic.value.split("/")[-2:]))
        except ValueError:
            return
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
        """A result message: a worker's answer to a job of ours, checked, kept once per
        method."""
        try:
            worker, capture_id, method = self.topics.job_result_of(message.topic.value)
        except ValueError:
            return
        job = self.jobs.jobs.get(capture_id)
        if job is None or method not in job.methods_left or self.finisher is None:
            return  # a redelivery of what was kept, or not a job of this service
        if worker not in job.given_to:
            self._refused(job, worker, "it was not given this job")
            return
        result, problems = self._checked(job, capture_id, method, bytes(message.payload))
        if result is None:
            self._refused(job, worker, "; ".join(problems))
            return
        if worker in job.refused_from:
            self._refused(job, worker, "its earlier answer to this job was refused")
            return
        job, fresh = self.jobs.answered(capture_id, method)
        if job is None or not fresh:
            return
        self.finisher.worker_result(job.context, result, f"job/{capture_id}/{method}",
                                    last=not job.methods_left)
        if not len(self.jobs):
            self._idle.set()

    @staticmethod
    def _checked(job: Job, capture_id: str, method: str, payload: bytes
                 ) -> tuple[IdentificationResult | None, list[str]]:
        """The result an answer holds if it is one to keep, else (None, what is wrong)."""
        try:
            job_id, body = result_from_message(payload)
            result = IdentificationResult.model_validate(body)
        except ValidationError as exc:
            return None, [f"not a result: {first_error(exc, 'result')}"]
        except (ValueError, TypeError) as exc:
            return None, [str(exc)]
        problems = []
        if job_id != job.capture_id:
            problems.append(f"job_id {job_id!r} is not this job's")
        if result.capture_id != capture_id:
            problems.append(f"it is the result of capture {result.capture_id!r}")
        if result.method != method:
            problems.append(f"it is a {result.method!r} result on the {method!r} topic")
        problems += result_problems(result)
        return (None, problems) if problems else (result, [])

    def _refused(self, job: Job, worker: str, why: str) -> None:
        """An answer not kept: told in one line; the job's own worker's sends it elsewhere."""
        own = worker in job.given_to
        then = ("; the job goes to another worker" if own and job.worker == worker
                else "; the job stays with its worker" if not own else "")
        text = one_line(f"capture {job.capture_id}: the answer of worker {worker} refused: "
                        f"{why}")
        text = (text if len(text) <= _MAX_TOLD else text[:_MAX_TOLD - 3] + "...") + then
        self.say(text)
        self.publication.event("warning", "job.refused", text, job.capture_id)
        if not own:
            return
        was_assigned = job.worker == worker
        self.jobs.refuse(job, worker)
        if was_assigned:
            # nothing more for it until it says it is ready again (as a silent worker)
            self.ready.pop(worker, None)
            self.busy.discard(worker)
            self._dispatch()
            if job.worker is None:
                self._home(job)

    def _home(self, job: Job) -> None:
        """A job no ready worker may take now (their answers refused): identified here,
        unless local fallback is off (then it waits for another worker)."""
        if self.worker_wait_s is None:
            return
        if any(w not in job.refused_from for w in self.ready):
            return  # a worker that may take it is busy: it waits for that one
        self._identify_here(job, "no other worker to answer it")

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
            if self.worker_wait_s is not None and waited >= self.worker_wait_s:
                self._identify_here(job, f"no worker in {waited:.0f} s")

    def _identify_here(self, job: Job, why: str) -> None:
        """Take a job back and identify its capture here (told on the terminal and as a
        job.local event)."""
        if self.finisher is None:
            return
        self.jobs.take_back(job)
        text = f"capture {job.capture_id}: {why}; identifying it here"
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
