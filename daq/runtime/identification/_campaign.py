"""Campaigns: many archived captures identified again, on any executor, nothing lost or
done twice.

A campaign is a selection of cataloged captures (a session, all, a time range, a rig
kind) and one or more methods; each capture and method is one task. Its id is made from
what it selects and the software version, so the same command again is the same
campaign: the tasks it finished (done or failed) are in the catalog's campaign_tasks
and are not run again, and a campaign stopped by Ctrl-C or a crash resumes where it
stopped. `force` makes a new campaign of the same selection.

Outcomes are kept by this process alone (one writer for SQLite), in batches: each batch
is one transaction holding its results (kept as a live result is: catalog row and JSON
beside the capture) and its tasks' rows, so a batch is kept whole or not at all, and a
result is stored once under its key (``campaign/<id>/<capture>/<method>``) however often
its task ran. A fit that fails is a failed task with its reason. Kept results go out
through `publish_result`, as live ones do, and progress (done, failed, rate, ETA)
through `progress`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from hilrig.identify import SOFTWARE_VERSION, IdentificationResult, result_problems, utc_now

from ...acquisition import kind_of
from ...config import RigKindConfig
from ...storage import CaptureFileError, Catalog, recorded_kind, store_result
from ._executor import IdentificationExecutor
from ._order import longest_first
from ._reidentify import ArchiveError, CatalogArchive
from ._task import IdentifyTask, TaskOutcome

__all__ = ["Campaign", "CampaignProgress", "CampaignTask", "Selection", "select_tasks"]

#: results kept per transaction, and the longest a finished task waits to be kept
BATCH_SIZE = 25
BATCH_S = 2.0


class Selection(BaseModel):
    """What a campaign re-identifies: the captures (every filter applies) and the methods."""

    methods: list[str] = Field(min_length=1)
    session: str | None = None
    all: bool = False
    since: str | None = Field(None, description="captures started at or after, ISO 8601 UTC")
    until: str | None = Field(None, description="captures started before, ISO 8601 UTC")
    kind: str | None = Field(None, description="rig kind: furuta, single, nlink:2")
    captures: list[str] = Field(default_factory=list)

    def campaign_id(self, salt: str = "") -> str:
        """The same selection by the same software is the same campaign (`salt`: a new one)."""
        text = json.dumps([self.model_dump(mode="json"), SOFTWARE_VERSION, salt],
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class CampaignTask:
    capture_id: str
    path: Path
    method: str


#: the methods every rig kind takes (the recommended estimator): no need to read the kind
_ANY_KIND = set(kind_of(RigKindConfig(kind="single")).methods)


def _methods_of(kind: str) -> tuple[str, ...]:
    return kind_of(None if kind == "furuta" else RigKindConfig(kind=kind)).methods


def select_tasks(catalog: Catalog, root: Path, selection: Selection
                 ) -> tuple[list[CampaignTask], list[str]]:
    """The selection's tasks, the longest expected first (see `longest_first`), and one line
    per capture left out (no archived file, or no selected method applies to its rig
    kind)."""
    rows = catalog.captures(selection.session)
    wanted = set(selection.captures)
    archive = CatalogArchive(catalog, root)
    tasks: list[CampaignTask] = []
    left_out: list[str] = []
    for row in rows:
        if wanted and row.capture_id not in wanted:
            continue
        if selection.since is not None and row.started_utc < selection.since:
            continue
        if selection.until is not None and row.started_utc >= selection.until:
            continue
        if row.status in ("recording",):
            continue  # still being taken (or to be recovered by its session)
        try:
            path = archive.locate(row.capture_id)
        except ArchiveError as exc:
            left_out.append(str(exc))
            continue
        methods = selection.methods
        if selection.kind is not None or any(m not in _ANY_KIND for m in methods):
            try:
                kind: str | None = recorded_kind(path)
            except CaptureFileError:  # still a task: it fails with its reason
                kind = None
            if kind is not None:
                if selection.kind is not None and kind != selection.kind:
                    continue
                takes = _methods_of(kind)
                skipped = [m for m in methods if m not in takes]
                if skipped:
                    left_out.append(f"capture {row.capture_id}: {', '.join(skipped)} does "
                                    f"not apply to a {kind} rig")
                methods = [m for m in methods if m in takes]
        tasks += [CampaignTask(row.capture_id, path, m) for m in methods]
    durations = {r.capture_id: r.duration_s for r in rows if r.duration_s is not None}
    return (longest_first(tasks, durations, catalog.compute_times(selection.session)),
            left_out)


@dataclass
class CampaignProgress:
    """How far a campaign is: counted over this run, with what earlier runs finished."""

    campaign_id: str
    total: int
    earlier: int = 0  # finished by an earlier run of the same campaign
    done: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)
    failures: list[str] = field(default_factory=list)

    @property
    def finished(self) -> int:
        return self.earlier + self.done + self.failed

    @property
    def rate(self) -> float:
        """Tasks per second in this run."""
        elapsed = time.monotonic() - self.started
        return (self.done + self.failed) / elapsed if elapsed > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        left = self.total - self.finished
        return left / self.rate if self.rate > 0 else (0.0 if left == 0 else None)

    def line(self) -> str:
        eta = self.eta_s
        return (f"campaign {self.campaign_id}: {self.finished}/{self.total} "
                f"({self.done} done, {self.failed} failed"
                + (f", {self.earlier} by an earlier run" if self.earlier else "")
                + f"), {self.rate * 60:.1f}/min"
                + (f", ETA {_duration(eta)}" if eta is not None and self.finished < self.total
                   else ""))

    def payload(self, state: str) -> dict[str, Any]:
        eta = self.eta_s
        return {"campaign_id": self.campaign_id, "state": state, "total": self.total,
                "finished": self.finished, "done": self.done, "failed": self.failed,
                "earlier": self.earlier, "rate_per_min": round(self.rate * 60, 2),
                "eta_s": None if eta is None else round(eta, 1), "time": utc_now()}


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


#: publish_result(capture_id, result, queued): as live results go out
PublishResult = Callable[[str, IdentificationResult, Callable[[], None]], None]


class Campaign:
    """Runs a campaign's tasks on `executor` and keeps their outcomes in `catalog`."""

    def __init__(self, catalog: Catalog, executor: IdentificationExecutor, *,
                 say: Callable[[str], None] = print,
                 progress: Callable[[CampaignProgress, str], None] | None = None,
                 publish_result: PublishResult | None = None, in_flight: int | None = None,
                 batch_size: int = BATCH_SIZE, batch_s: float = BATCH_S) -> None:
        self.catalog = catalog
        self.executor = executor
        self.say = say
        self.progress = progress or (lambda p, state: None)
        self.publish_result = publish_result
        self.in_flight = in_flight
        self.batch_size = batch_size
        self.batch_s = batch_s

    async def run(self, campaign_id: str, selection: Selection,
                  tasks: Iterable[CampaignTask]) -> CampaignProgress:
        """Every task not finished by an earlier run, submitted (at most `in_flight` at a
        time) and kept as it finishes. Cancelled (Ctrl-C): what finished is kept first."""
        tasks = list(tasks)
        self.catalog.add_campaign(campaign_id, selection.model_dump_json())
        finished = self.catalog.campaign_tasks(campaign_id)
        todo = [t for t in tasks if (t.capture_id, t.method) not in finished]
        report = CampaignProgress(campaign_id, total=len(tasks), earlier=len(tasks) - len(todo))
        self.progress(report, "running")
        if todo:  # a cluster takes seconds to come up: only when there is work for it
            await asyncio.to_thread(self.executor.start)
        queue = iter(todo)
        running: dict[asyncio.Future[TaskOutcome], CampaignTask] = {}
        batch: list[tuple[CampaignTask, TaskOutcome]] = []
        last_kept = time.monotonic()
        try:
            self._fill(queue, running)
            while running:
                done, _ = await asyncio.wait(running, timeout=self.batch_s,
                                             return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    task = running.pop(future)
                    batch.append((task, _outcome_of(task, future)))
                self._fill(queue, running)
                if batch and (len(batch) >= self.batch_size or not running
                              or time.monotonic() - last_kept >= self.batch_s):
                    self._keep(campaign_id, batch, report)
                    batch, last_kept = [], time.monotonic()
        finally:
            for future in running:
                future.cancel()
            if batch:  # finished before a Ctrl-C or an error: kept, not run again
                self._keep(campaign_id, batch, report)
        self.progress(report, "done")
        return report

    def _fill(self, queue: Iterator[CampaignTask],
              running: dict[asyncio.Future[TaskOutcome], CampaignTask]) -> None:
        """Submit tasks until `in_flight` run, by default twice the workers the executor has
        now (a cluster's grow as jobs start): each worker has its next task waiting, and a
        capture's bytes are read only when its task is submitted."""
        ships = self.executor.ships_files
        limit = self.in_flight or max(4, 2 * self.executor.capacity)
        while len(running) < limit:
            task = next(queue, None)
            if task is None:
                return
            try:
                job = IdentifyTask.of_file(task.capture_id, task.path, task.method, ship=ships)
            except OSError as exc:  # a file that vanished or cannot be read: a failed task
                failed: asyncio.Future[TaskOutcome] = asyncio.get_running_loop().create_future()
                failed.set_result(TaskOutcome(capture_id=task.capture_id, method=task.method,
                                              error=f"{task.path}: {exc.strerror or exc}"))
                running[failed] = task
                continue
            running[self.executor.submit(job)] = task

    def _keep(self, campaign_id: str, batch: list[tuple[CampaignTask, TaskOutcome]],
              report: CampaignProgress) -> None:
        """One transaction for the batch: each result kept under its key, each task's row;
        then the results go out and the progress is told."""
        kept: list[tuple[CampaignTask, IdentificationResult, int]] = []
        with self.catalog.batch():
            for task, outcome in batch:
                result, reason = outcome.result, outcome.error
                if result is not None and (problems := result_problems(result)):
                    result, reason = None, f"a result unfit to keep: {'; '.join(problems)}"
                row_id = None
                if result is not None:
                    row = store_result(self.catalog, task.capture_id, task.path, result,
                                       result_key=f"campaign/{campaign_id}/"
                                                  f"{task.capture_id}/{task.method}")
                    row_id = row.result_id
                    kept.append((task, result, row_id))
                provenance = (outcome.provenance.model_dump_json()
                              if outcome.provenance is not None else None)
                self.catalog.finish_campaign_task(campaign_id, task.capture_id, task.method,
                                                  result_id=row_id, reason=reason,
                                                  provenance_json=provenance)
        stored = {id(task) for task, _, _ in kept}
        for task, outcome in batch:
            if id(task) not in stored:
                report.failed += 1
                report.failures.append(f"capture {task.capture_id} ({task.method}): "
                                       f"{outcome.error or 'unfit result'}")
                self.say(f"capture {task.capture_id} ({task.method}): FAILED "
                         f"{outcome.error or 'a result unfit to keep'}")
            else:
                report.done += 1
        if self.publish_result is not None:
            for task, result, row_id in kept:
                self.publish_result(task.capture_id, result, _queued(self.catalog, row_id))
        self.progress(report, "running")


def _queued(catalog: Catalog, result_id: int) -> Callable[[], None]:
    return lambda: catalog.mark_result_queued(result_id)


def _outcome_of(task: CampaignTask, future: asyncio.Future[TaskOutcome]) -> TaskOutcome:
    """The task's outcome; a backend's failure (a lost cluster) as the task's reason."""
    exc = future.exception()
    if exc is None:
        return future.result()
    return TaskOutcome(capture_id=task.capture_id, method=task.method,
                       error=f"{type(exc).__name__}: {exc}")
