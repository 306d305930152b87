"""The identification process ignores a terminal's Ctrl-C from birth (the service decides
what one means), and starting it loses no Ctrl-C meant for the service; a command's own
pool of them is gone when the command leaves it, at once when it leaves by an error."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from hilrig.daq.runtime.identification import LocalExecutor, _local, local_processes


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
        with _local._sigint_ignored_by_children():
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)  # held
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _children() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.pid is not None}


def test_a_commands_own_pool_is_born_ignoring_ctrl_c_and_gone_when_left():
    before = _children()  # an earlier test's pool may still be on its way out
    with local_processes(2, threads=1) as pool:
        pids = _children() - before
        assert len(pids) == 2 and all(signal.SIGINT in _ignored(pid) for pid in pids)
        assert pool.submit(os.getenv, "HILRIG_THREADS").result() == "1"
    assert not pids & _children()


def test_a_pool_left_by_an_exception_stops_the_work_in_hand_at_once():
    """A Ctrl-C (or a file that failed) while a process is deep in a fit: the command
    ends now, not when that fit would have."""
    before = _children()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with local_processes(1) as pool:
            running = pool.submit(time.sleep, 60)
            while not running.running():
                time.sleep(0.01)
            raise KeyboardInterrupt
    assert time.monotonic() - t0 < 30
    assert _children() <= before
