"""Unattended capture sessions: release, record, identify, archive, ask again; resumable.

A session is a policy over the acquisition engine, with a plan and a catalog. Every
step is committed to the catalog before the next one starts, so a killed service
(SIGKILL, power loss) resumes from the next capture: a capture that was recording
becomes 'interrupted' (or 'captured' when its file had already reached its final
name) and its number is captured again, a capture archived but not identified is
identified on resume, and a completed capture is never repeated.

Capture states: recording -> captured (file archived) -> done (every planned method
has a result). 'failed' (file not written, or an identification failed) counts as
attempted; 'interrupted', 'aborted' and 'timeout' (no motion after the release
request) do not. The archive's layout is in storage/_archive.py.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hilrig.drivers import Source
from hilrig.identify import DEFAULT_METHOD, IdentificationResult, utc_now

from ..acquisition import (
    BlockSeen,
    Capture,
    CaptureAborted,
    CaptureStarted,
    CaptureTaken,
    EngineEvent,
    TriggerArmed,
    kind_of,
)
from ..config import Settings, one_line
from ..mqtt import CommandRouter, Courier, Topics
from ..storage import (
    Catalog,
    CatalogError,
    session_answer,
    session_capture_path,
    session_folder,
)
from ._conditions import SessionConditions
from ._core import RunCore
from ._finisher import CaptureOutcome
from ._ledger import CatalogLedger
from ._plan import SessionPlan
from ._records import CaptureRecords, prune_retained
from ._releasers import Releaser
from ._resume import finish_earlier_run
from ._session_commands import SessionCommands
from ._session_progress import session_progress
from ._statistics import capture_statistics, rss_mb
from ._suspenders import SuspenderWatch
from .identification import CatalogArchive, LocalExecutor, Reidentifier, identified

__all__ = ["ATTEMPTED", "SessionRun", "new_session_id"]

log = logging.getLogger("hilrig.session")

ATTEMPTED = ("captured", "done", "failed")  # a planned capture with one of these is not retried
_STOP_POLL_S = 0.5


def new_session_id() -> str:
    return "S" + datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


class SessionRun:
    """Runs one session's plan on a source; the catalog holds its durable progress.

    `releaser` lets the rig go (or asks someone to); `say` gets the terminal's lines,
    `on_progress` each progress record (as `session status` shows it); `pool`: an
    identification process to share (else the session has its own).
    """

    def __init__(self, settings: Settings, source: Source, courier: Courier | None, *,
                 plan: SessionPlan, catalog: Catalog, session_id: str, releaser: Releaser,
                 say: Callable[[str], None] | None = None,
                 on_progress: Callable[[dict[str, Any]], None] | None = None,
                 pool: LocalExecutor | None = None,
                 on_status: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.settings, self.source, self.plan = settings, source, plan
        self.catalog, self.session_id, self.releaser = catalog, session_id, releaser
        self.ledger = CatalogLedger(catalog, session_id)
        self.say = say or (lambda text: None)
        self.on_progress = on_progress or (lambda progress: None)
        row = catalog.session(session_id)
        self.folder = session_folder(Path(settings.storage.directory), session_id,
                                     row.created_utc)
        # armed only at each release request, near its pose
        self.core = RunCore(settings, source, courier, self, methods=list(plan.methods),
                            say=self.say, capture_path=self.capture_path, extras=self._extras,
                            ids=self._ids, armed=False, pool=pool, on_status=on_status)
        self.engine, self.publication = self.core.engine, self.core.publication
        self.finisher = self.core.finisher
        self.reidentifier = Reidentifier(
            CatalogArchive(catalog, Path(settings.storage.directory)),
            functools.partial(identified, self.core.pool),
            publish=self.publication.result, say=self.say)
        self.conditions = SessionConditions(
            self.engine, source, plan, self.folder, settings.trigger.still_band_counts,
            kind_of(settings.rig_kind).joints, held=lambda: self.finisher.waiting_for_space)
        self.watch = SuspenderWatch(plan.settle_s, plan.suspend_limit_s)
        self.commands = SessionCommands(self, abort=self.core.abort_command,
                                        identify=self.reidentifier.command)
        self.suspended: dict[str, str] = {}  # why no release may happen now, by kind
        self.stop_reason: str | None = None
        self.seq: int | None = None  # the planned capture being attempted
        self._seq_of: dict[str, int] = {}  # capture id -> seq, this run
        self._release_due = True
        self._upcoming: int | None = None  # the planned capture to ask for next
        self.release_at: int | None = None  # sample index of the release request
        self._in_flight = 0
        self._timeouts_in_row = 0
        self._failures_in_row = 0
        self._stop_polled = 0.0
        self._plan_checked = 0.0  # when a suspended session last asked if its plan is done
        self._t0 = time.monotonic()
        self._done_at_start = len(catalog.done_seqs(session_id))
        self.records = CaptureRecords(catalog, session_id, self.publication)
        self.publication.forget_retained(session_id)  # the last session's stay on the broker
        prune_retained(catalog, self.publication, Topics(settings.mqtt.rig_id),
                       current=session_id, keep=settings.mqtt.retained_sessions)

    def capture_path(self, capture_id: str) -> Path:
        return session_capture_path(self.folder, capture_id)

    def register_commands(self, router: CommandRouter) -> None:
        self.commands.register(router)

    # -- the run --------------------------------------------------------------------------
    async def run(self) -> str:
        """Run the plan to its end (or a stop); the session's status: done, stopped or failed.

        Killed or interrupted, the session stays 'running' in the catalog: resumable. An
        unforeseen fault ends it 'failed' with its reason (catalog, terminal, MQTT).
        """
        self.catalog.set_session_status(self.session_id, "running", pid=os.getpid())
        self.say(f"session {self.session_id}: running, archive {self.folder}")
        try:
            async with self.core.running():
                watchdog = asyncio.create_task(self._watchdog())
                try:
                    await finish_earlier_run(self)
                    await self.core.drive(self._step)
                    await self.finisher.wait()
                except Exception as exc:  # noqa: BLE001 - unforeseen: the session ends failed
                    await self._finish_in_flight()
                    return self._failed(exc)
                finally:
                    watchdog.cancel()
                return self._over()
        except BaseException:
            self.catalog.add_error("service stopped before the plan was complete",
                                   session_id=self.session_id)
            raise

    def _step(self, event: EngineEvent) -> bool:
        """Handle one engine event; False ends acquisition."""
        if isinstance(event, CaptureStarted):
            self._capture_started(event.capture_id)  # numbered before its documents go out
        elif isinstance(event, TriggerArmed) and self.seq is not None:
            self.releaser.armed(event.index)  # the rig rests at the pose asked for
        self.core.handle(event)
        if isinstance(event, CaptureTaken):
            self._in_flight += 1
            self.seq = None
            self._release_due = True
        elif isinstance(event, CaptureAborted):
            self._capture_aborted(event.capture_id)
        elif isinstance(event, BlockSeen) and self.engine.recording is None:
            return self._between_captures(event.end_index)
        return True

    async def _finish_in_flight(self) -> None:
        """Captures already taken are finished (written, identified) before a failed end."""
        try:
            await self.finisher.wait()
        except Exception as exc:  # noqa: BLE001 - the first fault is the one reported
            log.error("session %s: captures in flight not finished: %s", self.session_id,
                      one_line(str(exc)))

    def _failed(self, exc: Exception) -> str:
        """A fault no step foresaw: the session ends 'failed' with it, told everywhere."""
        reason = one_line(f"{type(exc).__name__}: {exc}")
        log.error("session %s failed: %s", self.session_id, reason)
        log.debug("session %s failed", self.session_id, exc_info=exc)
        self.stop_reason = reason
        self.catalog.set_session_status(self.session_id, "failed", reason=reason)
        self.catalog.add_error(f"session failed: {reason}", session_id=self.session_id)
        self.say(f"session {self.session_id}: FAILED: {reason}")
        self.tell_progress("failed")
        self.publication.status("idle")
        return "failed"

    def _over(self) -> str:
        status = "stopped" if self.stop_reason else "done"
        self.catalog.set_session_status(self.session_id, status, reason=self.stop_reason)
        self.say(f"session {self.session_id}: {status}"
                 + (f" ({self.stop_reason})" if self.stop_reason else ""))
        self.tell_progress(status)
        self._answer()
        return status

    def _answer(self) -> None:
        """The session's captures put together, kept and published (retained), once enough
        were identified (plan.pooled_min_captures); a session that cannot be pooled says
        why and ends as it was."""
        need = self.plan.pooled_min_captures
        if need == 0 or len(self.catalog.captures(self.session_id, status="done")) < need:
            return
        method = DEFAULT_METHOD if DEFAULT_METHOD in self.plan.methods else self.plan.methods[0]
        try:
            answer = session_answer(self.catalog, self.session_id, method,
                                    covariate=self.plan.pooled_covariate)
        except CatalogError as exc:
            self.say(f"session {self.session_id}: not put together: {exc}")
            return
        except Exception as exc:  # noqa: BLE001 - the session is done: its answer may fail
            log.error("session %s: not put together: %s", self.session_id, one_line(str(exc)))
            self.say(f"session {self.session_id}: not put together ({type(exc).__name__}); "
                     "hilrig session identify tries again")
            return
        self.say(f"session {self.session_id}: {answer.summary}")
        self.publication.session_result(self.session_id, answer)

    # -- resume: finish what an earlier run left -------------------------------------------
    # -- between captures: stop, suspend, release, time out --------------------------------
    def _between_captures(self, end_index: int) -> bool:
        """After each block while nothing records; False ends acquisition."""
        now = time.monotonic()
        if self.stop_reason is None and now - self._stop_polled > _STOP_POLL_S:
            self._stop_polled = now
            if self.catalog.stop_requested(self.session_id):
                self.stop("stop requested")
        if self.stop_reason is not None:
            return False  # the run then waits for the captures still being identified
        if self._release_due and self.suspended:
            # a plan that is complete (or past its end) ends, suspended or not: a stuck
            # encoder seen on the last capture kept a finished session alive for good
            if now - self._plan_checked > _STOP_POLL_S:
                self._plan_checked = now
                if self._next_seq() is None:
                    return False  # the run then waits for the captures in flight
            return True  # suspended: the rig waits; nothing is released
        if self._release_due:
            return self._request_release(end_index)
        if self.release_at is not None:
            self.releaser.tick(end_index, self.engine.rate)
            if end_index - self.release_at > self.plan.capture_timeout_s * self.engine.rate:
                return self._timed_out()
        return True

    def _request_release(self, end_index: int) -> bool:
        if self._upcoming is None:  # decided once per release, not per block
            self._upcoming = self._next_seq()
            if self._upcoming is None:
                return False  # plan complete: the run waits for captures in flight
        if self._in_flight >= self.plan.max_in_flight:
            return True  # identification is behind: the rig waits at rest
        if not self._disk_ok():
            return True  # suspended until there is room (or the limit stops it)
        seq, self._upcoming = self._upcoming, None
        self.seq, self._release_due, self.release_at = seq, False, end_index
        label = self.label(seq)
        pose = self.plan.pose(seq)
        self.say(f"{label}: release from {pose} deg requested")
        self.engine.arm_at_pose(pose, self.plan.pose_tolerance_deg)
        prompt = self.releaser.release(pose, label)
        if prompt:
            self.say(prompt)
            self.tell_progress("waiting_for_release", prompt=prompt)
        return True

    def _next_seq(self) -> int | None:
        """Lowest planned number not attempted yet; None when the plan is complete."""
        attempted = {c.seq for c in self.catalog.captures(self.session_id)
                     if c.seq is not None and c.status in ATTEMPTED}
        attempted |= set(self._seq_of.values())
        if self.plan.until_utc is not None and datetime.now(UTC) >= self.plan.until_utc:
            return None
        seq = 1
        while seq in attempted:
            seq += 1
        if self.plan.captures is not None and seq > self.plan.captures:
            return None
        return seq

    def _disk_ok(self) -> bool:
        """Enough free space for the next capture, else suspended (see _suspenders)."""
        problem = self.conditions.disk()
        if problem is not None:
            self.suspend("disk", problem)
            self.watch.check(time.monotonic(), {"disk": problem})
        return problem is None

    def _timed_out(self) -> bool:
        assert self.seq is not None
        capture_id = f"T{secrets.token_hex(5)}"
        msg = f"no motion within {self.plan.capture_timeout_s:g} s of the release request"
        self.catalog.add_capture(capture_id, session_id=self.session_id, seq=self.seq,
                                 pose=list(self.plan.pose(self.seq)), status="timeout")
        self.catalog.update_capture(capture_id, error=msg, ended_utc=utc_now())
        self.catalog.add_error(msg, session_id=self.session_id, capture_id=capture_id)
        self.say(f"{self.label(self.seq)}: TIMEOUT: {msg}")
        self._timeouts_in_row += 1
        self.release_at = None
        self._release_due = True
        if self.plan.on_timeout == "stop":
            self.stop(f"capture {self.seq} timed out ({msg}); the plan says stop")
        elif self._timeouts_in_row >= self.plan.max_consecutive_timeouts:
            self.stop(f"{self._timeouts_in_row} timeouts in a row ({msg})")
        self.tell_progress()
        return self.stop_reason is None

    def stop(self, reason: str) -> None:
        """End the session after the capture under way (and its identification)."""
        self.stop_reason = reason
        self.say(f"session {self.session_id}: stopping: {reason}")
        try:
            self.catalog.add_error(f"session stopped: {reason}", session_id=self.session_id)
        except Exception as exc:  # noqa: BLE001 - a full disk: the stop itself must happen
            log.error("session %s: its stop could not be recorded: %s", self.session_id,
                      one_line(str(exc)))

    def label(self, seq: int) -> str:
        of = f"/{self.plan.captures}" if self.plan.captures is not None else ""
        return f"session {self.session_id} capture {seq}{of}"

    @property
    def methods(self) -> list[str]:
        return list(self.plan.methods)

    def identify_archived(self, outcome: CaptureOutcome, methods: list[str]) -> None:
        self.finisher.identify_archived(outcome, methods)

    def awaited_release(self) -> int | None:
        return self.seq if self.release_at is not None else None

    async def release_now(self) -> int | None:
        return await self.releaser.release_now()

    def lift(self, key: str) -> None:
        self.unsuspend(key)
        self.watch.lifted(key)

    def register_capture(self, capture_id: str, seq: int) -> None:
        """A capture an earlier run archived: finished by this one, numbered as it was."""
        self._seq_of[capture_id] = seq
        self._in_flight += 1

    # -- the capture under way -------------------------------------------------------------
    def _capture_started(self, capture_id: str) -> None:
        seq = self.seq if self.seq is not None else self._next_seq()
        self.seq = seq
        self._seq_of[capture_id] = seq or 0
        self.release_at = None
        self._release_due = False
        self._timeouts_in_row = 0
        self.ledger.started(capture_id, seq, self.capture_path(capture_id),
                            list(self.plan.pose(seq or 1)))

    def _capture_aborted(self, capture_id: str) -> None:
        self.ledger.aborted(capture_id)
        self._seq_of.pop(capture_id, None)
        self.seq = None
        self._release_due = True  # the same planned capture is asked for again
        self.tell_progress()

    def _ids(self, capture_id: str | None) -> dict[str, Any]:
        seq = self._seq_of.get(capture_id) if capture_id else None
        return {"capture_id": capture_id, "session_id": self.session_id, "seq": seq}

    def _extras(self, capture: Capture) -> dict[str, Any]:
        """The capture's number in the session and its acquisition statistics."""
        return {"session_id": self.session_id, "seq": self._seq_of.get(capture.capture_id),
                **capture_statistics(capture, self.releaser.release_index)}

    # -- Ledger: every step of finishing a capture, in the catalog -------------------------
    def written(self, outcome: CaptureOutcome) -> None:
        self.ledger.written(outcome)

    def result_ready(self, outcome: CaptureOutcome, result: IdentificationResult,
                     key: str | None = None) -> Callable[[], None] | None:
        return self.ledger.result_ready(outcome, result, key)

    def identified(self, outcome: CaptureOutcome) -> None:
        self.ledger.identified(outcome)
        self._failures_in_row = 0
        self._one_less()

    def failed(self, outcome: CaptureOutcome) -> None:
        self.ledger.failed(outcome)
        self._failures_in_row += 1
        if (self._failures_in_row >= self.plan.max_consecutive_failures
                and self.stop_reason is None):
            self.stop(f"{self._failures_in_row} captures failed in a row; the last: "
                      f"{outcome.error}")
        self._one_less()

    def _one_less(self) -> None:
        self._in_flight = max(0, self._in_flight - 1)
        self.tell_progress()

    # -- progress and suspension -----------------------------------------------------------
    def progress(self, state: str = "running", prompt: str | None = None) -> dict[str, Any]:
        """What `session status`, the terminal and session/<id> on MQTT show."""
        if state == "running" and self.suspended:
            state = "suspended"
        return session_progress(
            self.catalog, self.session_id, self.plan, state=state, prompt=prompt,
            in_flight=self._in_flight, current_seq=self.seq,
            done_at_start=self._done_at_start, elapsed_s=time.monotonic() - self._t0,
            reason=self.stop_reason or "; ".join(self.suspended.values()) or None,
            rss_mb=rss_mb())

    def tell_progress(self, state: str = "running", prompt: str | None = None) -> None:
        progress = self.progress(state, prompt)
        self.on_progress(progress)
        self.publication.session(self.session_id, progress)
        self.records.update()

    def suspend(self, key: str, reason: str) -> None:
        """No new release while any suspension holds; the capture under way finishes."""
        if key in self.suspended:
            return
        self.suspended[key] = reason
        if key == "paused":
            self.watch.check(time.monotonic(), {"paused": reason})
        self.say(f"session {self.session_id}: suspended: {reason}")
        self.publication.event("warning", f"session.suspended.{key}", reason)
        self.publication.status("suspended", reason=reason)
        self.tell_progress("suspended")

    def unsuspend(self, key: str) -> None:
        if self.suspended.pop(key, None) is None:
            return
        self.say(f"session {self.session_id}: {key} cleared"
                 + ("" if self.suspended else "; resuming"))
        if not self.suspended:
            self.publication.status("idle")
            self.tell_progress()

    async def _watchdog(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            try:
                self._watch_once()
            except Exception as exc:  # noqa: BLE001 - the watchdog outlives one bad look
                log.error("session %s: watchdog: %s", self.session_id, one_line(str(exc)))

    def _watch_once(self) -> None:
        verdict = self.watch.check(time.monotonic(), self.conditions.now())
        for kind, reason in verdict.suspend.items():
            self.suspended.pop(kind, None)  # a changed reason is told again
            self.suspend(kind, reason)
        for kind in verdict.lift:
            self.unsuspend(kind)
        if verdict.stop is not None and self.stop_reason is None:
            self.stop(verdict.stop)
            self.engine.halt()  # a lost bridge yields no block that could end the run
