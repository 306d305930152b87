"""Identification in a process of its own, so a long fit never stalls acquisition.

The process reads the capture file exactly as offline `hilrig identify FILE` does.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Self

from hilrig.identify import IdentificationResult

from ..acquisition import identify_capture
from ..storage import read_capture

__all__ = ["IdentificationPool", "identify_file"]


def identify_file(path: str, method: str) -> str:
    """Identify one capture file; the IdentificationResult as JSON (runs in the pool)."""
    return identify_capture(read_capture(path), method).to_json()


def _warm_up() -> None:
    """Import what identification needs, so the first capture does not wait for it."""


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


class IdentificationPool:
    """One identification process (spawned: no inherited event loop or sockets).

    `start()` starts it, and it imports what identification needs, while the rig is
    still held (else the first `identify` starts it); `identify` then awaits a result
    without blocking the event loop.
    """

    def __init__(self) -> None:
        self._executor: ProcessPoolExecutor | None = None

    def start(self) -> None:
        if self._executor is None:
            # the process is born ignoring Ctrl-C, before it imports anything (an
            # initializer runs only after the imports, where a Ctrl-C printed a traceback)
            with _sigint_ignored_by_children():
                self._executor = ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_die_with_parent, initargs=(os.getpid(),))
                self._executor.submit(_warm_up)

    async def identify(self, path: Path | str, method: str) -> IdentificationResult:
        """Identify a capture file with a method (errors raised as they are)."""
        self.start()
        assert self._executor is not None
        text = await asyncio.get_running_loop().run_in_executor(
            self._executor, identify_file, str(path), method)
        return IdentificationResult.model_validate_json(text)

    def shutdown(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.shutdown()
