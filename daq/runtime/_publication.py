"""What a run publishes, handed to one task that owns the courier.

Acquisition only enqueues: a call here never waits for the broker or the disk and never
raises; the task behind it does the work, and a failure there is logged and forgotten
(the courier keeps durable messages in its outbox). Without a courier (a run with no
MQTT) every call does nothing.

A full disk refuses the outbox. Capture documents, results and jobs then wait in memory,
in order, and are tried again every DISK_RETRY_S; the rest (status, events, progress,
records, telemetry) goes on past them, so a dashboard sees the rig suspended on a full
disk while the disk is still full, not once the lab has found out by itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Self

from hilrig.drivers import Source
from hilrig.identify import IdentificationResult, SessionResult

from ..config import one_line
from ..mqtt import Courier, State
from ..storage import disk_full

__all__ = ["Publication"]

log = logging.getLogger("hilrig.service")

#: how often a message the outbox could not take (a full disk) is tried again
DISK_RETRY_S = 2.0

_Job = Callable[[Courier], Awaitable[Any]]


class Publication:
    """Status, capture documents, results, events, telemetry and session progress of a run.

    `ids(capture_id)` gives the ids a capture's documents and events carry (a session
    adds its own and the capture's number). The status always carries the source's
    identity and link health at the moment it is published.
    """

    def __init__(self, courier: Courier | None, source: Source,
                 ids: Callable[[str | None], dict[str, Any]] | None = None) -> None:
        self.courier = courier
        self.source = source
        self.ids = ids or (lambda capture_id: {"capture_id": capture_id})
        self.state: State = "idle"
        self._queue: asyncio.Queue[tuple[_Job, bool] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._held: deque[_Job] = deque()  # refused by a full disk, oldest first

    # -- what a run publishes --------------------------------------------------------------
    def status(self, state: State, **extra: Any) -> None:
        """The rig's state (retained), with the source and its link health now."""
        self.state = state
        info, health = self.source.info, self.source.stats.health()
        self._put(lambda c: c.publish_status(state, source=info, link=health, **extra))

    def capture(self, capture_id: str, body: dict[str, Any]) -> None:
        """A capture's lifecycle document (start, progress, stop)."""
        full = {**self.ids(capture_id), **body}
        self._put(lambda c: c.publish_capture(capture_id, full), ordered=True)

    def result(self, capture_id: str, result: IdentificationResult,
               queued: Callable[[], None] | None = None) -> None:
        """A result; `queued()` is called once it is in the courier's outbox (durable)."""
        async def job(courier: Courier) -> None:
            await courier.publish_result(capture_id, result.method, result)
            if queued is not None:
                queued()

        self._put(job, ordered=True)

    def event(self, level: str, code: str, message: str, capture_id: str | None = None) -> None:
        """A warning or an error for dashboards, with the ids that join it."""
        ids = {k: v for k, v in self.ids(capture_id).items() if v is not None}
        self._put(lambda c: c.publish_event(level, code, message, **ids))

    def telemetry(self, body: dict[str, Any]) -> None:
        self._put(lambda c: c.publish_telemetry(body))

    def session(self, session_id: str, progress: dict[str, Any]) -> None:
        self._put(lambda c: c.publish_session(session_id, progress))

    def session_result(self, session_id: str, result: SessionResult) -> None:
        """The session's captures put together (retained)."""
        self._put(lambda c: _put_now(c.put_session_result, session_id, result))

    def capture_record(self, session_id: str, capture_id: str, record: dict[str, Any]) -> None:
        """A capture of a session and its results' summaries (retained)."""
        self._put(lambda c: c.publish_capture_record(session_id, capture_id, record))

    def overlay(self, capture_id: str, method: str, response: dict[str, Any],
                session_id: str | None = None) -> None:
        """A result's measured and simulated response (retained)."""
        self._put(lambda c: c.publish_overlay(capture_id, method, response, session_id))

    def clear_retained(self, topics: list[str]) -> None:
        """Delete these retained topics from the broker (older sessions' records)."""
        self._put(lambda c: _cleared(c, topics))

    def forget_retained(self, keep_group: str | None) -> None:
        """Re-publish on reconnection only the retained topics of `keep_group`'s session."""
        if self.courier is not None:
            self.courier.forget_retained(keep_group)

    def job(self, msg_id: str, topic: str, payload: bytes) -> None:
        """An identification job for the workers (durable)."""
        self._put(lambda c: c.publish_job(msg_id, topic, payload), ordered=True)

    # -- the task that owns the courier ----------------------------------------------------
    def _put(self, job: _Job, *, ordered: bool = False) -> None:
        """`ordered`: durable and in order (captures, results, jobs): behind any the disk
        refused. The others go past those."""
        if self.courier is not None:
            self._queue.put_nowait((job, ordered))

    async def _drain(self) -> None:
        assert self.courier is not None
        courier = self.courier
        while True:
            try:
                async with asyncio.timeout(DISK_RETRY_S if self._held else None):
                    item = await self._queue.get()
            except TimeoutError:
                await self._release(courier)
                continue
            if item is None:
                break
            job, ordered = item
            if ordered and self._held:
                self._held.append(job)
            elif (refusal := await self._tried(job, courier)) is not None:
                if not self._held:
                    log.warning("publication: the outbox cannot take messages (disk full: "
                                "%s); they wait in memory", refusal)
                self._held.append(job)
        await self._release(courier)
        if self._held:
            log.error("publication: %d message(s) not kept, the disk full",
                      len(self._held))
            self._held.clear()

    async def _tried(self, job: _Job, courier: Courier) -> str | None:
        """Why the outbox refused the job (a full disk: a job to hold), else None."""
        try:
            await job(courier)
        except Exception as exc:  # noqa: BLE001 - a consumer must never crash acquisition
            if disk_full(exc):
                return one_line(str(exc))
            log.exception("publication failed")
        return None

    async def _release(self, courier: Courier) -> None:
        """The held messages again, in order, until the disk refuses one."""
        if not self._held:
            return
        while self._held:
            if await self._tried(self._held[0], courier) is not None:
                return
            self._held.popleft()
        log.warning("publication: the outbox takes messages again")

    async def __aenter__(self) -> Self:
        if self.courier is not None:
            self._task = asyncio.create_task(self._drain(), name="hilrig-publication")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        """Hands everything still queued to the courier, then stops the task."""
        if self._task is not None:
            self._queue.put_nowait(None)
            await self._task
            self._task = None


async def _put_now(put: Callable[..., None], *args: Any) -> None:
    """A courier's synchronous put as a publication job."""
    put(*args)


async def _cleared(courier: Courier, topics: list[str]) -> None:
    courier.clear_retained(topics)
