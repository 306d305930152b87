"""Topic names of the MQTT contract (docs/mqtt.md): everything of a rig is under hilrig/<rig_id>/.

The one place that spells them; publishers, subscribers, commands and jobs ask here.
"""

from __future__ import annotations

__all__ = ["ROOT", "WORKERS_READY", "Topics", "check_level", "check_worker", "worker_id",
           "worker_jobs", "worker_ready"]

ROOT = "hilrig"
#: where idle identification workers say so (retained; rigs assign jobs to them)
WORKERS_READY = f"{ROOT}-workers/ready/+/+"

_FORBIDDEN = set("/+#\x00")


def check_level(kind: str, value: str) -> str:
    """`value` if it can be one topic level (not empty; no '/', '+', '#', NUL), else ValueError."""
    if not value or _FORBIDDEN & set(value):
        raise ValueError(f"{kind} {value!r} cannot be an MQTT topic level "
                         "(empty, or contains '/', '+', '#' or NUL)")
    return value


def worker_id(principal: str, instance: str) -> str:
    """A worker's name: ``<principal>/<instance>``, two topic levels. The principal is its
    broker user (the deployed ACL lets a user write only under its own name, so the rig
    knows who answers); the instance tells that user's worker processes apart."""
    return f"{check_level('worker principal', principal)}/{check_level('worker', instance)}"


def check_worker(worker: str) -> str:
    """`worker` if it is a worker's name (two topic levels), else ValueError."""
    principal, sep, instance = worker.partition("/")
    if not sep:
        raise ValueError(f"worker {worker!r} is not <principal>/<instance>")
    return worker_id(principal, instance)


class Topics:
    """Topic names and filters under ``hilrig/<rig_id>/``."""

    def __init__(self, rig_id: str) -> None:
        self.rig_id = check_level("rig_id", rig_id)
        self.prefix = f"{ROOT}/{rig_id}"
        self.status = f"{self.prefix}/status"
        self.result_latest = f"{self.prefix}/result/latest"
        self.results = f"{self.prefix}/result/+/+"  # every result, latest excluded
        # workers' answers to the rig: jobs/result/<principal>/<instance>/<capture>/<method>
        self.job_results = f"{self.prefix}/jobs/result/+/+/+/+"
        self.events = f"{self.prefix}/events"
        self.telemetry = f"{self.prefix}/telemetry"
        self.commands = f"{self.prefix}/cmd/#"
        self.all = f"{self.prefix}/#"

    def capture(self, capture_id: str) -> str:
        return f"{self.prefix}/capture/{check_level('capture_id', capture_id)}"

    def result(self, capture_id: str, method: str) -> str:
        return (f"{self.prefix}/result/{check_level('capture_id', capture_id)}/"
                f"{check_level('method', method)}")

    def session(self, session_id: str) -> str:
        return f"{self.prefix}/session/{check_level('session_id', session_id)}"

    def session_result(self, session_id: str) -> str:
        """A session's captures put together (retained)."""
        return f"{self.session(session_id)}/result"

    def campaign(self, campaign_id: str) -> str:
        """A re-identification campaign's progress (retained)."""
        return f"{self.prefix}/campaign/{check_level('campaign_id', campaign_id)}"

    def capture_record(self, session_id: str, capture_id: str) -> str:
        """A capture of a session, with its results' summaries (retained)."""
        return f"{self.session(session_id)}/capture/{check_level('capture_id', capture_id)}"

    def overlay(self, capture_id: str, method: str) -> str:
        """A result's measured and simulated response (retained)."""
        return f"{self.result(capture_id, method)}/overlay"

    def job(self, worker: str, capture_id: str) -> str:
        """An identification job, for one worker (see _jobs.py)."""
        return (f"{self.prefix}/jobs/identify/{check_worker(worker)}/"
                f"{check_level('capture_id', capture_id)}")

    def job_result(self, worker: str, capture_id: str, method: str) -> str:
        """A worker's result for the rig, under the worker's name; the rig publishes on
        result/ what it accepts."""
        return (f"{self.prefix}/jobs/result/{check_worker(worker)}/"
                f"{check_level('capture_id', capture_id)}/{check_level('method', method)}")

    def job_result_of(self, topic: str) -> tuple[str, str, str]:
        """(worker, capture_id, method) of a topic job_result made; ValueError otherwise."""
        levels = topic.removeprefix(f"{self.prefix}/jobs/result/").split("/")
        if len(levels) != 4 or not topic.startswith(f"{self.prefix}/jobs/result/"):
            raise ValueError(f"{topic}: not a worker's result topic")
        return worker_id(levels[0], levels[1]), levels[2], levels[3]

    def command(self, verb: str) -> str:
        """``cmd/<verb>``; a verb may have two levels (``session/start``)."""
        return f"{self.prefix}/cmd/{verb}"

    def verb_of(self, topic: str) -> str:
        """The verb of a command topic."""
        return topic.removeprefix(f"{self.prefix}/cmd/")

    def reply(self, name: str) -> str:
        """``reply/<name>``: where replies to MQTT 3.1.1 clients (and `hilrig cmd`) go."""
        return f"{self.prefix}/reply/{name}"

    def is_reply(self, topic: str) -> bool:
        return topic.startswith(f"{self.prefix}/reply/")

    @staticmethod
    def is_ours(topic: str) -> bool:
        """Whether a topic lies in hilrig's tree (of any rig)."""
        return topic.startswith(f"{ROOT}/")


def worker_ready(worker: str) -> str:
    """Where a worker says it is ready for a job (retained; emptied when it leaves)."""
    return f"{ROOT}-workers/ready/{check_worker(worker)}"


def worker_jobs(worker: str) -> str:
    """The jobs of one worker, from every rig."""
    return f"{ROOT}/+/jobs/identify/{check_worker(worker)}/+"
