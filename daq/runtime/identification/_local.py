"""Identification in processes of this machine, so a long fit never stalls acquisition.

Each process reads the capture file exactly as offline `hilrig identify FILE` does.
Processes are spawned (no inherited event loop or sockets), born ignoring a terminal's
Ctrl-C (the service decides what one means), and leave when the process that started
them is gone.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self

from ._executor import settle_from_thread
from ._task import IdentifyTask, TaskOutcome, run_task_json, warm_up

__all__ = ["LocalExecutor", "local_processes"]


def _die_with_parent(parent: int, period_s: float = 0.5) -> None:
    """In the identification process: leave as soon as the service that started it is
    gone (a kill -9 leaves no one to shut the pool down; an orphan would live for ever
    with its few hundred MB). A terminal's Ctrl-C reaches every process of the job: the
    service decides what it means, so this process ignores it (no second traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period_s)
        os._exit(0)  # adopted by another process: the service is gone

    threading.Thread(target=watch, name="hilrig-parent-watch", daemon=True).start()


@contextmanager
def _sigint_ignored_by_children() -> Iterator[None]:
    """Processes started inside ignore SIGINT from birth (an ignored disposition survives
    exec); the main thread loses none: SIGINT is blocked in it meanwhile, and Linux keeps
    a blocked signal pending even while it is ignored, so it is delivered when the handler
    is back. (One the kernel hands to another thread in these milliseconds is ignored.)"""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal dispositions belong to the main thread: the initializer still ignores it
        return
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    old_handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old_handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)


log = logging.getLogger("hilrig.service")


def _settle(loop: asyncio.AbstractEventLoop, done: Future[str],
            out: asyncio.Future[TaskOutcome]) -> None:
    """The process's answer into the loop's future (called in the pool's thread)."""
    if done.cancelled():
        settle_from_thread(loop, out, cancelled=True)
    else:
        settle_from_thread(loop, out, error=done.exception(),
                           outcome_json=None if done.exception() else done.result())


def _thread_limits(threads: int | None) -> dict[str, str]:
    if threads is None:
        return {}
    return {name: str(threads) for name in ("HILRIG_THREADS", "OMP_NUM_THREADS",
                                            "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


@contextmanager
def _environment(changes: dict[str, str]) -> Iterator[None]:
    """`changes` in the environment the processes started inside inherit, then undone."""
    old = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for name, value in old.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _initialize(parent: int, then: Callable[..., None] | None, args: tuple[Any, ...]) -> None:
    _die_with_parent(parent)
    if then is not None:
        then(*args)


def _new_pool(workers: int, threads: int | None, then: Callable[..., None] | None = None,
              args: tuple[Any, ...] = ()) -> ProcessPoolExecutor:
    """`workers` spawned processes, born ignoring Ctrl-C before they import anything (an
    initializer runs only after the imports, where a Ctrl-C printed a traceback); with
    `threads`, born with that many for the numerical libraries too (read once, at their
    import); each leaves when this process is gone, and runs `then(*args)` first."""
    with _sigint_ignored_by_children(), _environment(_thread_limits(threads)):
        pool = ProcessPoolExecutor(max_workers=workers,
                                   mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_initialize, initargs=(os.getpid(), then, args))
        # a pool spawns a process per task submitted while none is idle: these spawn all
        # of them here, inside the context
        for _ in range(workers):
            pool.submit(warm_up)
    return pool


@contextmanager
def local_processes(workers: int, threads: int | None = None, *,
                    initializer: Callable[..., None] | None = None,
                    initargs: tuple[Any, ...] = ()) -> Iterator[ProcessPoolExecutor]:
    """A pool of this machine's processes for one command's work, as LocalExecutor's
    (spawned, born ignoring Ctrl-C, gone with this process; `threads` each, then
    `initializer(*initargs)`). Left normally, it waits for its work; left by an exception
    (a Ctrl-C, a file that failed), its queued work is dropped and its processes are
    stopped at once: a pool only shut down would keep the command alive until each
    process had finished the fit in hand."""
    before = set(multiprocessing.active_children())
    pool = _new_pool(workers, threads, initializer, initargs)
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        mine = set(multiprocessing.active_children()) - before
        for proc in mine:
            proc.terminate()
        for proc in mine:  # SIGTERM ends a fit at once, even inside a kernel
            proc.join(timeout=5.0)
            if proc.is_alive():
                proc.kill()
        raise
    pool.shutdown(wait=True)


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
            self._executor = _new_pool(self.workers, self.threads)

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
