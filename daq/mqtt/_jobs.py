"""Identification jobs over MQTT: a rig offloads, `hilrig worker`s on any machine answer.

A worker's name is ``<principal>/<instance>``: its broker user, and its process. An idle
worker says so on ``hilrig-workers/ready/<worker>`` (retained, a `WorkerPayload`;
emptied by its last will when it goes). A rig assigns each capture to one ready worker
and publishes the job on ``hilrig/<rig_id>/jobs/identify/<worker>/<capture_id>``
(`Topics.job`; QoS 1, through the outbox): the capture file (HDF5, already compressed),
base64, with its methods and a sha256. The worker answers on
``hilrig/<rig_id>/jobs/result/<worker>/<capture_id>/<method>`` with the job's id.

Workers are answerable: the deployed ACL lets each worker user read only its own jobs
and write only under its own name, and the rig keeps an answer only from a worker it
gave the job to, only within MAX_RESULT_BYTES (checked before any parsing), and only a
result of that capture and method with finite numbers in their physical domain
(identify.result_problems). Anything else is refused with a one-line event; a refused
answer from the job's worker sends the job to another worker, or home.

Jobs go to named workers, not to a shared subscription: a broker's ACL cannot keep a
client out of a shared group (Mosquitto grants the subscription and drops what it may
not read), so a dashboard in the group would swallow jobs. Only workers may write
``hilrig-workers/``, and only a job's worker may read its jobs.

Exactly once in effect: delivery is at least once, and the rig keeps every job until
a result per method came back. A job whose worker leaves without answering (its last
will empties "ready", or it empties it on the way out) goes to another ready worker at
once; one without all its results after `job_timeout_s` (a worker that hangs, or its
queue lost with it) goes too;
a result that arrives twice is recognised by its key ``job/<capture_id>/<method>`` and
kept once.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hilrig.identify import SOFTWARE_VERSION, utc_now

from ..config import loads_bounded
from ._payloads import Envelope, dump_json

__all__ = ["MAX_RESULT_BYTES", "Job", "JobPayload", "PendingJobs", "WorkerPayload",
           "result_from_message"]

#: the largest result message a rig reads: about ten times a shooting result with its
#: response (about 100 kB)
MAX_RESULT_BYTES = 1 << 20


class JobPayload(Envelope):
    """``jobs/identify/<capture_id>`` (QoS 1): one capture to identify."""

    schema_id: Literal["hilrig.job/1"] = Field("hilrig.job/1", alias="schema")
    job_id: str
    capture_id: str
    methods: list[str]
    attempt: int = 1
    session_id: str | None = None
    file_name: str = "capture.h5"
    sha256: str
    capture_b64: str = Field(description="the HDF5 capture file, base64")

    worker: str | None = Field(None, description="the worker it is assigned to")
    with_response: bool = Field(
        False, description="send each result's response (contract 1.1 rigs); a 1.0 rig "
                           "refuses result keys it does not know")

    @classmethod
    def from_file(cls, path: Path, **fields: Any) -> JobPayload:
        data = Path(path).read_bytes()
        return cls(sha256=hashlib.sha256(data).hexdigest(),
                   capture_b64=base64.b64encode(data).decode("ascii"), **fields)

    def file_bytes(self) -> bytes:
        data = base64.b64decode(self.capture_b64)
        if hashlib.sha256(data).hexdigest() != self.sha256:
            raise ValueError(f"job {self.job_id}: the capture does not match its sha256")
        return data


class WorkerPayload(BaseModel):
    """``hilrig-workers/ready/<worker>`` (retained, QoS 1): a worker ready for a job."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, extra="allow")

    schema_id: Literal["hilrig.worker/1"] = Field("hilrig.worker/1", alias="schema")
    worker: str
    state: Literal["ready"] = "ready"
    time: str = Field(default_factory=utc_now, description="UTC ISO 8601, Z")
    software_version: str = SOFTWARE_VERSION

    def to_json(self) -> bytes:
        return dump_json(self)


@dataclass
class Job:
    capture_id: str
    methods_left: set[str]
    deadline: float
    attempt: int = 1
    context: Any = None  # the service's record of the capture (a CaptureOutcome)
    worker: str | None = None  # the worker it was sent to; None: waiting for one
    queued: float = 0.0  # when it was handed over (time.monotonic())
    told_waiting: bool = False  # the no-worker notice went out
    given_to: set[str] = field(default_factory=set)  # every worker it was sent to
    refused_from: set[str] = field(default_factory=set)  # workers whose answer was refused


@dataclass
class PendingJobs:
    """Jobs sent and not yet answered for every method; what is overdue."""

    timeout_s: float
    jobs: dict[str, Job] = field(default_factory=dict)

    def add(self, capture_id: str, methods: list[str], now: float, context: Any) -> Job:
        job = Job(capture_id, set(methods), now + self.timeout_s, context=context, queued=now)
        self.jobs[capture_id] = job
        return job

    def answered(self, capture_id: str, method: str) -> tuple[Job | None, bool]:
        """(the job, whether this method was still awaited); a job is done when none is."""
        job = self.jobs.get(capture_id)
        if job is None or method not in job.methods_left:
            return job, False
        job.methods_left.discard(method)
        if not job.methods_left:
            del self.jobs[capture_id]
        return job, True

    def assign(self, job: Job, worker: str, now: float) -> None:
        """Sent to `worker`: it has `timeout_s` to answer."""
        job.worker = worker
        job.given_to.add(worker)
        job.deadline = now + self.timeout_s

    def refuse(self, job: Job, worker: str) -> None:
        """`worker`'s answer was refused: the job is unassigned, for another worker."""
        job.refused_from.add(worker)
        if job.worker == worker:
            _again(job)

    def left_by(self, worker: str, now: float) -> list[Job]:
        """Jobs `worker` held unanswered when it left (its last will, or it went): unassigned
        again, for another try, waiting anew from `now`."""
        left = [j for j in self.jobs.values() if j.worker == worker]
        for j in left:
            _again(j)
            j.queued = now
            j.told_waiting = False
        return left

    def take_back(self, job: Job) -> None:
        """No longer offloaded: the rig identifies it itself."""
        self.jobs.pop(job.capture_id, None)

    def unassigned(self) -> list[Job]:
        """Jobs waiting for a worker, oldest first."""
        return [j for j in self.jobs.values() if j.worker is None]

    def overdue(self, now: float) -> list[tuple[Job, str]]:
        """Jobs their worker did not answer in time, with that worker: unassigned again,
        for another try."""
        late = [(j, j.worker) for j in self.jobs.values()
                if j.worker is not None and now >= j.deadline]
        for j, _ in late:
            _again(j)
        return late

    def __len__(self) -> int:
        return len(self.jobs)


def _again(job: Job) -> None:
    """The job taken from its worker: unassigned, its next sending a new attempt."""
    job.worker = None
    job.attempt += 1


def result_from_message(payload: bytes) -> tuple[str | None, dict[str, Any]]:
    """(job_id, the result's fields without the envelope) of a result message (ValueError
    if it is larger than MAX_RESULT_BYTES, not JSON, or nested deeper than any result)."""
    body = loads_bounded(payload, max_bytes=MAX_RESULT_BYTES)
    if not isinstance(body, dict):
        raise ValueError("a result message must be a JSON object")
    job_id = body.get("job_id")
    for key in ("rig_id", "time", "msg_id", "job_id", "worker"):
        body.pop(key, None)
    return job_id, body
