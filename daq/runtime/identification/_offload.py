"""Offloaded identification: each capture goes to a ready `hilrig worker`, who answers.

`WorkerExecutor` is the identification executor of a live service with offload on: the
tasks a capture's methods make in one go become one job, and each task's future
resolves with the worker's result for its method, or with the fallback executor's
(this machine's) when no worker takes the job.

Workers say when they are ready (``hilrig-workers/ready/<worker>``, retained); the rig
sends each job to one of them by name and keeps it until a result per method came back
(see mqtt/_jobs.py). A job whose worker leaves without answering (killed: its last will)
goes to another ready worker at once; one unanswered after `timeout_s` goes too, and the
silent worker gets nothing more until it says it is ready again. Workers answer on
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
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from hilrig.identify import IdentificationResult, result_problems

from ...config import first_error, one_line
from ...mqtt import (
    WORKERS_READY,
    Courier,
    Job,
    JobPayload,
    PendingJobs,
    WorkerPayload,
    check_worker,
    result_from_message,
)
from ._executor import IdentificationExecutor
from ._task import IdentifyTask, TaskOutcome

__all__ = ["NOTICE_S", "WorkerExecutor"]

#: a job no worker has taken this long is reported (terminal, events)
NOTICE_S = 5.0
#: the longest event text about an answer (what it says comes partly from the sender)
_MAX_TOLD = 300


class JobChannel(Protocol):
    """What the offload publishes through (the run's publication): jobs, events, ids."""

    def job(self, msg_id: str, topic: str, payload: bytes) -> None:
        """A job message to a worker, sent once under `msg_id`."""
        ...

    def event(self, level: str, code: str, message: str, capture_id: str | None = None
              ) -> None:
        ...

    @property
    def ids(self) -> Callable[[str | None], dict[str, Any]]:
        """The ids a capture's documents carry (its session's)."""
        ...


@dataclass
class _Asked:
    """A capture's job as the executor tracks it: its file and a future per method."""

    capture_id: str
    path: Path
    futures: dict[str, asyncio.Future[TaskOutcome]] = field(default_factory=dict)


class WorkerExecutor:
    """Sends captures to ready workers; `fallback` identifies here what no worker takes."""

    ships_files = False  # the job carries the file: tasks name it by path

    def __init__(self, courier: Courier, publication: JobChannel, timeout_s: float,
                 say: Callable[[str], None], fallback: IdentificationExecutor,
                 worker_wait_s: float | None = None) -> None:
        self.publication = publication
        self.topics = courier.topics
        self.say = say
        self.fallback = fallback
        self.jobs = PendingJobs(timeout_s)
        self.worker_wait_s = worker_wait_s  # None: wait for a worker however long
        self._forming: dict[str, _Asked] = {}  # submitted this turn of the loop: one job
        self.ready: dict[str, float] = {}  # worker -> when it last said it was ready
        self.busy: set[str] = set()  # sent a job since it last said so
        self._told_waiting = False
        self._watching: asyncio.Task[None] | None = None
        courier.subscribe(self.topics.job_results, self._on_result)
        courier.subscribe(WORKERS_READY, self._on_ready)

    @property
    def capacity(self) -> int:
        return len(self.ready) + len(self.busy) or self.fallback.capacity

    def start(self) -> None:
        self.fallback.start()

    def submit(self, task: IdentifyTask) -> asyncio.Future[TaskOutcome]:
        """A capture's method as part of its job; the methods submitted in one turn of the
        event loop go to one worker as one job."""
        if task.path is None:
            raise ValueError("a worker job is made from the capture's file: the task names none")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[TaskOutcome] = loop.create_future()
        asked = self._forming.get(task.capture_id)
        if asked is None:
            if not self._forming:
                loop.call_soon(self._send_formed)
            asked = self._forming[task.capture_id] = _Asked(task.capture_id, Path(task.path))
        asked.futures[task.method] = future
        future.add_done_callback(lambda f: self._withdrawn(task) if f.cancelled() else None)
        return future

    def _send_formed(self) -> None:
        formed, self._forming = self._forming, {}
        for asked in formed.values():
            methods = sorted(m for m, f in asked.futures.items() if not f.done())
            if methods:
                self.jobs.add(asked.capture_id, methods, time.monotonic(), asked)
        self._dispatch()
        if self._watching is None or self._watching.done():
            self._watching = asyncio.get_running_loop().create_task(self._watch())

    def _withdrawn(self, task: IdentifyTask) -> None:
        """A task cancelled by its submitter: its method is no longer awaited."""
        self.jobs.answered(task.capture_id, task.method)

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
        asked: _Asked = job.context
        payload = JobPayload.from_file(
            asked.path, rig_id=self.topics.rig_id, job_id=job.capture_id,
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
            self._left(name)
            return
        try:
            WorkerPayload.model_validate_json(bytes(message.payload))
        except ValueError:
            return  # not a worker's word: ignored
        self.ready[name] = time.monotonic()
        self.busy.discard(name)
        self._dispatch()

    def _left(self, worker: str) -> None:
        """A worker gone: the jobs it held unanswered go to another ready worker now, not
        after the timeout (600 s by default); with none, they wait for one as a new job
        does, and are identified here after worker_wait_s."""
        for job in self.jobs.left_by(worker, time.monotonic()):
            text = (f"capture {job.capture_id}: worker {worker} left without answering; "
                    "the job goes to another")
            self.say(text)
            self.publication.event("warning", "job.retry", text, job.capture_id)
        self._dispatch()

    async def _on_result(self, message: Any) -> None:
        """A result message: a worker's answer to a job of ours, checked, kept once per
        method."""
        try:
            worker, capture_id, method = self.topics.job_result_of(message.topic.value)
        except ValueError:
            return
        job = self.jobs.jobs.get(capture_id)
        if job is None or method not in job.methods_left:
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
        future = job.context.futures.get(method)
        if future is not None and not future.done():
            future.set_result(TaskOutcome(capture_id=capture_id, method=method, result=result,
                                          worker=worker, key=f"job/{capture_id}/{method}"))

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
        """Take a job back and identify its capture here, on the fallback executor (told on
        the terminal and as a job.local event)."""
        self.jobs.take_back(job)
        text = f"capture {job.capture_id}: {why}; identifying it here"
        self.say(text)
        self.publication.event("info", "job.local", text, job.capture_id)
        asked: _Asked = job.context
        for method in sorted(job.methods_left):
            future = asked.futures[method]
            if future.done():
                continue
            here = self.fallback.submit(IdentifyTask.of_file(job.capture_id, asked.path, method))
            here.add_done_callback(functools.partial(_pass_on, to=future))
            future.add_done_callback(functools.partial(_withdraw, here))

    def shutdown(self) -> None:
        """Stop watching; jobs still waiting are cancelled (the fallback is its owner's)."""
        if self._watching is not None:
            self._watching.cancel()
        for job in list(self.jobs.jobs.values()):
            for future in job.context.futures.values():
                future.cancel()

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


def _pass_on(done: asyncio.Future[TaskOutcome], to: asyncio.Future[TaskOutcome]) -> None:
    """The fallback's outcome (or failure) as the offloaded task's."""
    if to.done():
        return
    if done.cancelled():
        to.cancel()
    elif (exc := done.exception()) is not None:
        to.set_exception(exc)
    else:
        to.set_result(done.result())


def _withdraw(task: asyncio.Future[TaskOutcome], cancelled: asyncio.Future[TaskOutcome]) -> None:
    """The offloaded task was cancelled: so is the fallback's."""
    if cancelled.cancelled():
        task.cancel()
