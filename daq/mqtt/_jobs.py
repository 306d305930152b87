"""Identification jobs over MQTT: a rig offloads, `hilrig worker`s on any machine take them.

The rig publishes each capture as a job on ``hilrig/<rig_id>/jobs/identify/<capture_id>``
(`Topics.job`; QoS 1, through the outbox): the capture file (HDF5, already compressed),
base64, with its methods and a sha256. Workers share the subscription `JOB_SHARE`,
``$share/hilrig-identify/hilrig/+/jobs/identify/+`` (MQTT v5 shared subscriptions, on
Mosquitto or EMQX; the embedded broker has none), so each job goes to one of them.
A worker publishes each result on the ordinary result topic with the job's id.

Exactly once in effect: delivery is at least once, and the rig keeps every job until
a result per method came back. A job without all its results after `job_timeout_s`
(a worker died mid-job, or its queue was lost with it) is published again, to whichever
worker takes it; a result that arrives twice is recognised by its key
``job/<capture_id>/<method>`` and kept once.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ._payloads import Envelope

__all__ = ["Job", "JobPayload", "PendingJobs", "result_from_message"]


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


@dataclass
class Job:
    capture_id: str
    methods_left: set[str]
    deadline: float
    attempt: int = 1
    context: Any = None  # the service's record of the capture (a CaptureOutcome)


@dataclass
class PendingJobs:
    """Jobs sent and not yet answered for every method; what is overdue."""

    timeout_s: float
    jobs: dict[str, Job] = field(default_factory=dict)

    def add(self, capture_id: str, methods: list[str], now: float, context: Any) -> Job:
        job = Job(capture_id, set(methods), now + self.timeout_s, context=context)
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

    def overdue(self, now: float) -> list[Job]:
        late = [j for j in self.jobs.values() if now >= j.deadline]
        for j in late:
            j.attempt += 1
            j.deadline = now + self.timeout_s
        return late

    def __len__(self) -> int:
        return len(self.jobs)


def result_from_message(payload: bytes) -> tuple[str | None, dict[str, Any]]:
    """(job_id, the result's fields without the envelope) of a result message."""
    body = json.loads(payload)
    job_id = body.get("job_id")
    for key in ("rig_id", "time", "msg_id", "job_id", "worker"):
        body.pop(key, None)
    return job_id, body
