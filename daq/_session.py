"""Unattended capture sessions: release, record, identify, archive, re-arm; resumable.

A session is the service with a plan and a catalog. Every step is committed to the
catalog before the next one starts, so a killed service (SIGKILL, power loss) resumes
from the next capture: a capture that was recording becomes 'interrupted' (or
'captured' when its file had already reached its final name) and its number is
captured again, a capture archived but not identified is identified on resume, and a
completed capture is never repeated.

Capture states: recording -> captured (file archived) -> done (every planned method
has a result). 'failed' (file not written, or an identification failed) counts as
attempted; 'interrupted' and 'timeout' (no motion after the release request) do not.

Archive layout: <storage.directory>/<YYYY-MM-DD>/<session_id>/<capture_id>/capture.h5,
with one <method>-<result_id>.json beside it per result.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from identify import IdentificationResult

from ._capture_file import Capture, CaptureFileError, read_capture, write_text_atomic
from ._catalog import Catalog, CatalogError, utc_now
from ._commands import CommandRefused, CommandRouter
from ._config import Settings
from ._courier import Courier
from ._plan import SessionPlan
from ._release import Releaser
from ._service import CaptureOutcome, RigService, ServiceReport
from ._suspenders import SuspenderWatch

__all__ = ["ATTEMPTED", "SessionRunner", "archive_dir", "new_session_id", "rss_mb"]

log = logging.getLogger("hilrig.session")

ATTEMPTED = ("captured", "done", "failed")  # a planned capture with one of these is not retried
CAPTURE_FILE = "capture.h5"
_STOP_POLL_S = 0.5


def new_session_id() -> str:
    return "S" + datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(2)


def archive_dir(root: Path, session_id: str, created_utc: str) -> Path:
    """<root>/<YYYY-MM-DD of the session's start>/<session_id>/."""
    return Path(root) / created_utc[:10] / session_id


def rss_mb() -> float:
    """Resident memory of this process, MB (Linux; NaN elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except (OSError, ValueError, IndexError):
        return float("nan")


class SessionRunner(RigService):
    """Runs one session's plan on a source; the catalog holds its durable progress."""

    def __init__(self, settings: Settings, source: Any, publisher: Courier | None, *,
                 plan: SessionPlan, catalog: Catalog, session_id: str, releaser: Releaser,
                 on_event: Callable[[str], None] | None = None,
                 on_progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        super().__init__(settings, source, publisher, method=plan.methods[0], on_event=on_event)
        self.plan = plan
        self.methods = list(plan.methods)
        self.catalog = catalog
        self.session_id = session_id
        self.releaser = releaser
        self.on_progress = on_progress or (lambda progress: None)
        row = catalog.session(session_id)
        self.folder = archive_dir(Path(settings.storage.directory), session_id, row.created_utc)
        self._seq: int | None = None  # the planned capture being attempted
        self._seq_of: dict[str, int] = {}  # capture id -> seq, this run
        self._release_due = True
        self._upcoming: int | None = None  # the planned capture to ask for next
        self._release_at: int | None = None  # sample index of the release request
        self._in_flight = 0
        self._timeouts_in_row = 0
        self._failures_in_row = 0
        self._stop_reason: str | None = None
        self._stop_polled = 0.0
        self._suspended: dict[str, str] = {}  # why no release may happen now, by kind
        self._watch = SuspenderWatch(plan.settle_s, plan.suspend_limit_s)
        self._bad_frames: deque[tuple[float, int]] = deque()
        self._stuck: str | None = None
        self._t0 = time.monotonic()
        self._done_at_start = len(catalog.done_seqs(session_id))
        self.trigger.disarm()  # armed at each release request, near its pose

    # -- plan bookkeeping -----------------------------------------------------------------
    def _next_seq(self) -> int | None:
        """Lowest planned number not attempted yet; None when the plan is complete."""
        attempted = {c.seq for c in self.catalog.captures(self.session_id)
                     if c.seq is not None and c.status in ATTEMPTED}
        attempted |= set(self._seq_of.values())
        if self.plan.until_utc is not None and datetime.now(timezone.utc) >= self.plan.until_utc:
            return None
        seq = 1
        while seq in attempted:
            seq += 1
        if self.plan.captures is not None and seq > self.plan.captures:
            return None
        return seq

    def capture_path(self, capture_id: str) -> Path:
        return self.folder / capture_id / CAPTURE_FILE

    def progress(self, state: str = "running", prompt: str | None = None) -> dict[str, Any]:
        """What `session status`, the terminal and session/<id> on MQTT show."""
        caps = self.catalog.captures(self.session_id)
        count = {s: sum(c.status == s for c in caps) for s in
                 ("done", "captured", "failed", "interrupted", "timeout", "recording")}
        done_now = count["done"] - self._done_at_start
        elapsed = time.monotonic() - self._t0
        planned = self.plan.captures
        remaining = None if planned is None else max(0, planned - count["done"] - count["failed"])
        eta = elapsed / done_now * remaining if done_now and remaining is not None else None
        if state == "running" and self._suspended:
            state = "suspended"
        return {"state": state, "name": self.plan.name, "planned": planned, **count,
                "in_flight": self._in_flight, "current_seq": self._seq,
                "elapsed_s": round(elapsed, 1), "eta_s": None if eta is None else round(eta, 1),
                "rss_mb": round(rss_mb(), 1),
                "until_utc": None if self.plan.until_utc is None
                else self.plan.until_utc.isoformat().replace("+00:00", "Z"),
                "reason": self._stop_reason or "; ".join(self._suspended.values()) or None,
                "prompt": prompt}

    def _tell_progress(self, state: str = "running", prompt: str | None = None) -> None:
        progress = self.progress(state, prompt)
        self.on_progress(progress)
        self._publish(lambda p: p.publish_session(self.session_id, progress))

    # -- resume: finish what an earlier run left -------------------------------------------
    def _recover_recording(self) -> None:
        """Captures an earlier run was recording when it died: archived, or interrupted."""
        for row in self.catalog.captures(self.session_id, status="recording"):
            try:
                read_capture(row.path or "")
            except (CaptureFileError, OSError):
                self.catalog.update_capture(row.capture_id, status="interrupted",
                                            error="the service stopped while it was recording",
                                            ended_utc=utc_now())
                self.on_event(f"capture {row.capture_id}: interrupted (the service stopped "
                              f"while it was recording); capture {row.seq} is taken again")
                continue
            # the file reached its final name before the catalog heard of it: keep it
            self.catalog.update_capture(row.capture_id, status="captured")
            self.on_event(f"capture {row.capture_id}: its file was archived before the "
                          "service stopped; kept")

    async def _before_acquisition(self, pool: Any) -> None:
        self._watchdog_task = asyncio.create_task(self._watchdog())
        self._recover_recording()
        for row in self.catalog.captures(self.session_id, status="captured"):
            have = {r.method for r in self.catalog.results(capture_id=row.capture_id)}
            missing = [m for m in self.methods if m not in have]
            outcome = CaptureOutcome(row.capture_id, Path(row.path or ""), row.summary or {})
            self._seq_of[row.capture_id] = row.seq or 0
            self._in_flight += 1
            if missing and self._jobs is not None:
                self._offload(outcome, missing)
            elif missing:
                self.on_event(f"capture {row.capture_id}: archived but not identified; "
                              f"identifying ({', '.join(missing)})")
                await self.identify_outcome(pool, outcome, missing)
            else:
                self._capture_identified(outcome)
        self._tell_progress()

    # -- acquisition hooks ---------------------------------------------------------------
    def _block_seen(self, end_index: int) -> bool:
        now = time.monotonic()
        if self._stop_reason is None and now - self._stop_polled > _STOP_POLL_S:
            self._stop_polled = now
            if self.catalog.stop_requested(self.session_id):
                self._stop("stop requested")
        if self._stop_reason is not None:
            return False  # the run then waits for the captures still being identified
        if self._release_due and self._suspended:
            return True  # suspended: the rig waits; nothing is released
        if self._release_due:
            if self._upcoming is None:  # decided once per release, not per block
                self._upcoming = self._next_seq()
                if self._upcoming is None:
                    return False  # plan complete: the run waits for captures in flight
            if self._in_flight >= self.plan.max_in_flight:
                return True  # identification is behind: the rig waits at rest
            if not self._disk_ok():
                return True  # suspended until there is room (or the limit stops it)
            seq, self._upcoming = self._upcoming, None
            self._seq, self._release_due, self._release_at = seq, False, end_index
            label = self._label(seq)
            pose = self.plan.pose(seq)
            self.on_event(f"{label}: release from {pose} deg requested")
            cpr = self.source.info.counts_per_rev
            self.trigger.arm(near=(round(pose[0] / 360 * cpr[0]), round(pose[1] / 360 * cpr[1])),
                             tolerance_counts=round(self.plan.pose_tolerance_deg / 360
                                                    * min(cpr)))
            prompt = self.releaser.release(pose, label)
            if prompt:
                self.on_event(prompt)
                self._tell_progress("waiting_for_release", prompt=prompt)
            return True
        if self._release_at is not None:
            self.releaser.tick(end_index, self.rate)
            if end_index - self._release_at > self.plan.capture_timeout_s * self.rate:
                return self._timed_out()
        return True

    def _stop(self, reason: str) -> None:
        self._stop_reason = reason
        self.on_event(f"session {self.session_id}: stopping: {reason}")
        self.catalog.add_error(f"session stopped: {reason}", session_id=self.session_id)

    def _disk_problem(self) -> str | None:
        self.folder.mkdir(parents=True, exist_ok=True)
        free_mb = shutil.disk_usage(self.folder).free / 1e6
        if free_mb >= self.plan.min_free_mb:
            return None
        return (f"disk: less than {self.plan.min_free_mb:g} MB free in {self.folder} "
                f"(min_free_mb)")

    def _disk_ok(self) -> bool:
        """Enough free space for the next capture, else suspended (see _suspenders)."""
        problem = self._disk_problem()
        if problem is not None:
            self.suspend("disk", problem)
            self._watch.check(time.monotonic(), {"disk": problem})
        return problem is None

    # -- suspenders ---------------------------------------------------------------------------
    def _conditions(self) -> dict[str, str | None]:
        """What may suspend the session now (kind -> reason, None when clear)."""
        out: dict[str, str | None] = {"disk": self._disk_problem()}
        connected = getattr(self.source, "connected", True)
        out["bridge"] = None if connected else (
            f"bridge: {self.source.info.identity} lost; reconnecting")
        errors = self._health().get("errors", {})
        bad = sum(int(errors.get(k, 0)) for k in ("crc_errors", "cobs_errors", "length_errors"))
        now = time.monotonic()
        self._bad_frames.append((now, bad))
        while len(self._bad_frames) > 2 and now - self._bad_frames[0][0] > 10.0:
            self._bad_frames.popleft()
        t0, b0 = self._bad_frames[0]
        rate = (bad - b0) / (now - t0) if now - t0 >= 1.0 else 0.0
        out["link"] = (f"link: more than {self.plan.max_link_errors_per_s:g} corrupted "
                       "frames per second" if rate > self.plan.max_link_errors_per_s else None)
        out["encoder"] = self._encoder_problem()
        return out

    def _encoder_problem(self) -> str | None:
        """A joint without a count for 2 s while the other swings; sticky until both move."""
        n = int(2.0 * self.source.info.sample_rate_hz)
        _, counts = self.ring.latest(n)
        if counts.shape[0] < n // 2:
            return self._stuck
        span = counts.max(axis=0).astype(np.int64) - counts.min(axis=0)
        if self._stuck is not None:
            if (span > self.settings.trigger.still_band_counts).all():
                self._stuck = None  # both move again
        elif self._pending is not None and counts.shape[0] == n:
            for j, other in ((0, 1), (1, 0)):
                if span[j] == 0 and span[other] > 400:
                    name = ("arm", "pendulum")[j]
                    self._stuck = (f"encoder: {name} did not count for 2 s while the other "
                                   f"joint moved {int(span[other])} counts")
        return self._stuck

    async def _watchdog(self) -> None:
        while True:
            await asyncio.sleep(0.5)
            verdict = self._watch.check(time.monotonic(), self._conditions())
            for kind, reason in verdict.suspend.items():
                self._suspended.pop(kind, None)  # a changed reason is told again
                self.suspend(kind, reason)
            for kind in verdict.lift:
                self.unsuspend(kind)
            if verdict.stop is not None and self._stop_reason is None:
                self._stop(verdict.stop)
                self.halt()  # a lost bridge yields no block that could end the run

    def _rearm_trigger(self) -> None:
        """Idle until the next release is asked for: motion meanwhile is no capture."""

    def _armed(self, index: int) -> None:
        if self._seq is not None:  # a release was asked for: the rig rests at its pose
            self.releaser.armed(index)

    def _label(self, seq: int) -> str:
        of = f"/{self.plan.captures}" if self.plan.captures is not None else ""
        return f"session {self.session_id} capture {seq}{of}"

    def _timed_out(self) -> bool:
        assert self._seq is not None
        capture_id = f"T{secrets.token_hex(5)}"
        msg = f"no motion within {self.plan.capture_timeout_s:g} s of the release request"
        self.catalog.add_capture(capture_id, session_id=self.session_id, seq=self._seq,
                                 pose=list(self.plan.pose(self._seq)), status="timeout")
        self.catalog.update_capture(capture_id, error=msg, ended_utc=utc_now())
        self.catalog.add_error(msg, session_id=self.session_id, capture_id=capture_id)
        self.on_event(f"{self._label(self._seq)}: TIMEOUT: {msg}")
        self._timeouts_in_row += 1
        self._release_at = None
        self._release_due = True
        if self.plan.on_timeout == "stop":
            self._stop(f"capture {self._seq} timed out ({msg}); the plan says stop")
        elif self._timeouts_in_row >= self.plan.max_consecutive_timeouts:
            self._stop(f"{self._timeouts_in_row} timeouts in a row ({msg})")
        self._tell_progress()
        return self._stop_reason is None

    def _capture_started(self, capture_id: str) -> None:
        seq = self._seq if self._seq is not None else self._next_seq()
        self._seq = seq
        self._seq_of[capture_id] = seq or 0
        self._release_at = None
        self._release_due = False
        self._timeouts_in_row = 0
        self.catalog.add_capture(capture_id, session_id=self.session_id, seq=seq,
                                 pose=list(self.plan.pose(seq or 1)), status="recording",
                                 path=str(self.capture_path(capture_id)))

    def _ids(self, capture_id: str | None) -> dict[str, Any]:
        seq = self._seq_of.get(capture_id) if capture_id else None
        return {"capture_id": capture_id, "session_id": self.session_id, "seq": seq}

    def _capture_extras(self, capture: Capture) -> dict[str, Any]:
        """Acquisition statistics of the capture, beside the service's summary."""
        extras: dict[str, Any] = {"session_id": self.session_id,
                                  "seq": self._seq_of.get(capture.capture_id)}
        idx, rate = capture.sample_index, capture.sample_rate_hz
        span = (idx[-1] - idx[0] + 1) / rate
        extras["effective_rate_hz"] = round(idx.size / span, 3)  # samples received per second
        trig = capture.trigger
        if trig.trigger_index is not None and trig.onset_index is not None:
            extras["trigger_latency_ms"] = round((trig.trigger_index - trig.onset_index)
                                                 / rate * 1e3, 3)
        release = self.releaser.release_index
        if release is not None and idx[0] <= release:
            extras["release_index"] = int(release)
            if trig.onset_index is not None:
                extras["onset_error_ms"] = round((trig.onset_index - release) / rate * 1e3, 3)
            if trig.release_estimate is not None:
                extras["release_error_ms"] = round((trig.release_estimate - release) / rate
                                                   * 1e3, 3)
        extras["rss_mb"] = round(rss_mb(), 1)
        return extras

    def _settled(self) -> bool:
        self._in_flight += 1
        self._seq = None
        self._release_due = True
        return True

    def _capture_written(self, outcome: CaptureOutcome) -> None:
        s = outcome.summary
        self.catalog.update_capture(
            outcome.capture_id, status="captured", samples=s["samples"],
            lost_samples=s["lost_samples"], duration_s=s["duration_s"],
            end_reason=s["end_reason"], summary=s)

    def _result_ready(self, outcome: CaptureOutcome, result: IdentificationResult,
                      result_key: str | None = None) -> None:
        self._store_result(outcome.capture_id, outcome.path, result, result_key)

    def _store_result(self, capture_id: str, path: Path, result: IdentificationResult,
                      result_key: str | None = None) -> dict[str, Any]:
        """Into the catalog (added, never replacing), and as JSON beside the capture file."""
        row = self.catalog.add_result(result, capture_id=capture_id, result_key=result_key)
        if row.path is not None:
            return {"result_id": row.result_id}  # a redelivered result, already kept
        out = path.with_name(f"{result.method}-{row.result_id}.json")
        try:
            write_text_atomic(out, result.to_json(indent=2))
            self.catalog.set_result_path(row.result_id, str(out))
        except OSError as exc:  # the catalog holds the result; the file is a convenience
            self.catalog.add_error(f"{out}: result file not written: {exc}",
                                   session_id=self.session_id, capture_id=capture_id)
        return {"result_id": row.result_id}

    def _capture_identified(self, outcome: CaptureOutcome) -> None:
        self.catalog.update_capture(outcome.capture_id, status="done", ended_utc=utc_now())
        self._failures_in_row = 0
        self._one_less(outcome)

    def _capture_failed(self, outcome: CaptureOutcome) -> None:
        self.catalog.update_capture(outcome.capture_id, status="failed", error=outcome.error,
                                    ended_utc=utc_now())
        self.catalog.add_error(outcome.error or "failed", session_id=self.session_id,
                               capture_id=outcome.capture_id)
        self._failures_in_row += 1
        if (self._failures_in_row >= self.plan.max_consecutive_failures
                and self._stop_reason is None):
            self._stop(f"{self._failures_in_row} captures failed in a row; the last: "
                       f"{outcome.error}")
        self._one_less(outcome)

    def _one_less(self, outcome: CaptureOutcome) -> None:
        self._in_flight = max(0, self._in_flight - 1)
        # the catalog has it now: memory stays bounded however long the session runs
        if outcome in self.report.outcomes:
            self.report.outcomes.remove(outcome)
        self._tell_progress()

    def _rearm_source(self) -> None:
        """The session's releaser puts the rig at the next pose, not the plain service."""

    # -- commands and suspension ------------------------------------------------------------
    def _capture_aborted(self, capture_id: str) -> None:
        self.catalog.update_capture(capture_id, status="aborted", error="aborted by command",
                                    ended_utc=utc_now())
        self._seq_of.pop(capture_id, None)
        self._seq = None
        self._release_due = True  # the same planned capture is asked for again
        self._tell_progress()

    def archived_path(self, capture_id: str) -> Path:
        try:
            row = self.catalog.capture(capture_id)
        except CatalogError:
            raise CommandRefused(f"identify: no capture {capture_id!r} in the catalog") from None
        if row.status not in ("captured", "done", "failed") or not row.path \
                or not Path(row.path).is_file():
            raise CommandRefused(f"identify: capture {capture_id} has no archived file "
                                 f"(status {row.status})")
        return Path(row.path)

    def register_commands(self, router: CommandRouter) -> None:
        super().register_commands(router)
        router.register("session/start", self._cmd_session_start)
        router.register("session/stop", self._cmd_session_stop)
        router.register("session/pause", self._cmd_session_pause)
        router.register("session/resume", self._cmd_session_resume)

    async def _cmd_arm(self, request: Any) -> dict[str, Any]:
        raise CommandRefused("arm: not allowed now: the session arms the trigger at each "
                             "release it asks for")

    async def _cmd_release(self, request: Any) -> dict[str, Any]:
        if self._seq is None or self._release_at is None:
            raise CommandRefused("release: not allowed now: no release is awaited")
        opened = await self.releaser.release_now()
        return {"seq": self._seq, "release_index": opened}

    async def _cmd_session_start(self, request: Any) -> dict[str, Any]:
        raise CommandRefused(f"session/start: not allowed now: session {self.session_id} "
                             "is running")

    async def _cmd_session_stop(self, request: Any) -> dict[str, Any]:
        if self._stop_reason is None:
            self._stop("stop requested")
        return {"session_id": self.session_id}

    async def _cmd_session_pause(self, request: Any) -> dict[str, Any]:
        self.suspend("paused", "paused by command")
        return {"session_id": self.session_id, "state": "suspended"}

    async def _cmd_session_resume(self, request: Any) -> dict[str, Any]:
        if "paused" not in self._suspended:
            raise CommandRefused("session/resume: not allowed now: the session is not paused")
        self.unsuspend("paused")
        self._watch.lifted("paused")
        return {"session_id": self.session_id,
                "state": "suspended" if self._suspended else "running"}

    def suspend(self, key: str, reason: str) -> None:
        """No new release while any suspension holds; the capture under way finishes."""
        if key in self._suspended:
            return
        self._suspended[key] = reason
        if key == "paused":
            self._watch.check(time.monotonic(), {"paused": reason})
        self.on_event(f"session {self.session_id}: suspended: {reason}")
        self._event("warning", f"session.suspended.{key}", reason)
        self._set_state("suspended", reason=reason)
        self._tell_progress("suspended")

    def unsuspend(self, key: str) -> None:
        if self._suspended.pop(key, None) is None:
            return
        self.on_event(f"session {self.session_id}: {key} cleared"
                      + ("" if self._suspended else "; resuming"))
        if not self._suspended:
            self._set_state("idle")
            self._tell_progress()

    # -- the run --------------------------------------------------------------------------
    async def run(self) -> ServiceReport:
        self.catalog.set_session_status(self.session_id, "running", pid=os.getpid())
        self.on_event(f"session {self.session_id}: running, archive {self.folder}")
        try:
            return await super().run()
        except BaseException:
            task = getattr(self, "_watchdog_task", None)
            if task is not None:
                task.cancel()
            # killed or interrupted: the session stays 'running', so it can be resumed
            self.catalog.add_error("service stopped before the plan was complete",
                                   session_id=self.session_id)
            raise

    def _after_acquisition(self) -> None:
        self._watchdog_task.cancel()
        status = "stopped" if self._stop_reason else "done"
        self.catalog.set_session_status(self.session_id, status, reason=self._stop_reason)
        self.on_event(f"session {self.session_id}: {status}"
                      + (f" ({self._stop_reason})" if self._stop_reason else ""))
        self._tell_progress(status)
