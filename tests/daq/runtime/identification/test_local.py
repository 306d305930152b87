"""The identification process ignores a terminal's Ctrl-C from birth (the service decides
what one means), and starting it loses no Ctrl-C meant for the service."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from hilrig.daq.processes import _pool
from hilrig.daq.runtime.identification import LocalExecutor


def _ignored(pid: int) -> set[int]:
    mask = int(Path(f"/proc/{pid}/status").read_text().split("SigIgn:")[1].split()[0], 16)
    return {s for s in range(1, 65) if mask >> (s - 1) & 1}


def test_the_identification_process_is_born_ignoring_ctrl_c():
    pool = LocalExecutor()
    pool.start()
    try:
        assert pool._executor is not None
        (pid,) = pool._executor._processes  # spawned by start(), before any import
        assert signal.SIGINT in _ignored(pid)
        assert signal.SIGINT not in _ignored(os.getpid())
    finally:
        pool.shutdown()


def test_a_ctrl_c_while_the_process_starts_reaches_the_service_after():
    # sent to the main thread itself: a signal sent to the process may go to any thread
    # that does not block it (a worker thread of an earlier test), and come out as a
    # KeyboardInterrupt wherever the main thread next checks, after this test
    with pytest.raises(KeyboardInterrupt):
        with _pool._sigint_ignored_by_children():
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)  # held
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

