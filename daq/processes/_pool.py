"""Pools of this machine's processes: spawned (no inherited event loop, sockets or
threads), born ignoring a terminal's Ctrl-C (the process that started them decides what
one means), and gone when that process is.

Nothing here imports more than the standard library: a process of the pool imports this
module to run its initializer, and the less it imports, the sooner it works (the
service's runtime took a process 1.4 s to import, against 0.5 s for a fit's own needs).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.process import BaseProcess
from typing import Any

__all__ = ["local_processes", "new_pool"]


def _die_with_parent(parent: int, period_s: float = 0.5) -> None:
    """In the pool's process: leave as soon as the process that started it is gone (a
    kill -9 leaves no one to shut the pool down; an orphan would live for ever with its
    few hundred MB). A terminal's Ctrl-C reaches every process of the job: the parent
    decides what it means, so this process ignores it (no second traceback)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period_s)
        os._exit(0)  # adopted by another process: the parent is gone

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


def _started() -> None:
    """A pool's first task in each process (new_pool): nothing but the process's start."""


def new_pool(workers: int, threads: int | None = None,
             initializer: Callable[..., None] | None = None,
             initargs: tuple[Any, ...] = ()) -> ProcessPoolExecutor:
    """`workers` spawned processes, born ignoring Ctrl-C before they import anything (an
    initializer runs only after the imports, where a Ctrl-C printed a traceback); with
    `threads`, born with that many for the numerical libraries too (read once, at their
    import); each leaves when this process is gone, and runs `initializer(*initargs)`
    first (a module-level function: it is pickled to the process)."""
    with _sigint_ignored_by_children(), _environment(_thread_limits(threads)):
        pool = ProcessPoolExecutor(max_workers=workers,
                                   mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_initialize,
                                   initargs=(os.getpid(), initializer, initargs))
        # a pool spawns a process per task submitted while none is idle (Python 3.11 on):
        # these spawn all of them here, inside the context
        for _ in range(workers):
            pool.submit(_started)
    return pool


def _stop(processes: set[BaseProcess]) -> None:
    """SIGTERM (a fit ends at once, even inside a compiled kernel), then SIGKILL for a
    process that has not gone within 5 s."""
    for proc in processes:
        proc.terminate()
    for proc in processes:
        proc.join(timeout=5.0)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=5.0)


@contextmanager
def local_processes(workers: int, threads: int | None = None, *,
                    initializer: Callable[..., None] | None = None,
                    initargs: tuple[Any, ...] = ()) -> Iterator[ProcessPoolExecutor]:
    """A pool of this machine's processes for one command's work (new_pool). Left
    normally, it waits for its work; left by an exception (a Ctrl-C, a file that failed),
    its queued work is dropped and its processes are stopped at once: a pool only shut
    down kept a command alive until each process had finished the fit in hand (7.2 s
    after a Ctrl-C, against 0.11 s)."""
    before = set(multiprocessing.active_children())
    pool: ProcessPoolExecutor | None = None
    mine: set[BaseProcess] = set()
    try:
        pool = new_pool(workers, threads, initializer, initargs)
        mine = set(multiprocessing.active_children()) - before  # its own, taken now
        yield pool
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        else:  # interrupted while it started: whatever it had spawned
            mine = set(multiprocessing.active_children()) - before
        _stop(mine)
        raise
    assert pool is not None
    pool.shutdown(wait=True)
