"""Identification in processes of this machine, so a long fit never stalls acquisition.

Each process reads the capture file exactly as offline `hilrig identify FILE` does.
Processes are spawned (no inherited event loop or sockets), born ignoring a terminal's
Ctrl-C (the service decides what one means), and leave when the process that started
them is gone (daq.processes).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from types import TracebackType
from typing import Self

from ...processes import new_pool
from ._executor import settle_from_thread
from ._task import IdentifyTask, TaskOutcome, run_task_json, warm_up

__all__ = ["LocalExecutor"]

log = logging.getLogger("hilrig.service")


def _settle(loop: asyncio.AbstractEventLoop, done: Future[str],
            out: asyncio.Future[TaskOutcome]) -> None:
    """The process's answer into the loop's future (called in the pool's thread)."""
    if done.cancelled():
        settle_from_thread(loop, out, cancelled=True)
    else:
        settle_from_thread(loop, out, error=done.exception(),
                           outcome_json=None if done.exception() else done.result())


class LocalExecutor:
    """`workers` identification processes of this machine (one by default, for a live
    service), each identification on `threads` threads (None: every core, the quickest
    answer for one capture; a campaign runs one process per core, one thread each).

    `start()` starts them, and they import what identification needs, while the rig is
    still held (else the first `submit` starts them).
    """

    ships_files = False

    def __init__(self, workers: int = 1, threads: int | None = None) -> None:
        self.workers = workers
        self.threads = threads
        self._executor: ProcessPoolExecutor | None = None

    def start(self) -> None:
        if self._executor is None:
            # spawned and born ignoring Ctrl-C (daq.processes); then each imports what
            # identification needs while the rig is still held
            self._executor = new_pool(self.workers, self.threads)
            for _ in range(self.workers):
                self._executor.submit(warm_up)

    @property
    def capacity(self) -> int:
        return self.workers

    def submit(self, task: IdentifyTask) -> asyncio.Future[TaskOutcome]:
        loop = asyncio.get_running_loop()
        out: asyncio.Future[TaskOutcome] = loop.create_future()
        self._run(task, out, retries=1)
        return out

    def _run(self, task: IdentifyTask, out: asyncio.Future[TaskOutcome], retries: int) -> None:
        """The task on the pool; on a pool whose process died (the OOM killer, a crash in
        native code) a new pool and, once, the task again: a dead pool refuses every
        later task, and a session stopped after three captures failed in a row."""
        loop = out.get_loop()
        executor = self._fresh()
        try:
            done = executor.submit(run_task_json, task)
        except BrokenProcessPool:
            self._replace(executor)
            executor = self._fresh()
            done = executor.submit(run_task_json, task)

        def finished(d: Future[str]) -> None:
            if retries and not d.cancelled() and isinstance(d.exception(), BrokenProcessPool):
                loop.call_soon_threadsafe(self._again, task, out, retries - 1, executor)
            else:
                _settle(loop, d, out)

        done.add_done_callback(finished)
        out.add_done_callback(lambda o: done.cancel() if o.cancelled() else None)

    def _again(self, task: IdentifyTask, out: asyncio.Future[TaskOutcome], retries: int,
               broken: ProcessPoolExecutor) -> None:
        if out.done():  # withdrawn meanwhile
            return
        log.warning("identification: a worker process died; a new pool takes its task again")
        self._replace(broken)
        self._run(task, out, retries)

    def _fresh(self) -> ProcessPoolExecutor:
        self.start()
        assert self._executor is not None
        return self._executor

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        """A new pool in place of `broken` (the next start() makes it), unless another
        task of the same pool already had it replaced."""
        if self._executor is broken:
            self._executor = None
            broken.shutdown(wait=False, cancel_futures=True)

    def shutdown(self) -> None:
        if self._executor is not None:
            self._replace(self._executor)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.shutdown()
