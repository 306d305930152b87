"""A command's own pool of this machine's processes: born ignoring Ctrl-C, with the
threads it was given, and gone when the command leaves it, at once when it leaves by an
error."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

from hilrig.daq.processes import local_processes


def _ignored(pid: int) -> set[int]:
    mask = int(Path(f"/proc/{pid}/status").read_text().split("SigIgn:")[1].split()[0], 16)
    return {s for s in range(1, 65) if mask >> (s - 1) & 1}


def _children() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.pid is not None}


def still_running(pids: set[int], wait_s: float = 5.0) -> set[int]:
    """Those of `pids` still running after up to wait_s: by the kernel's word (/proc), not
    multiprocessing's, whose record of a process the pool's own thread reaped can lag."""

    def alive() -> set[int]:
        out = set()
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue  # gone
            if state != "Z":
                out.add(pid)
        return out

    deadline = time.monotonic() + wait_s
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive()


def test_a_commands_own_pool_is_born_ignoring_ctrl_c_and_gone_when_left():
    before = _children()  # an earlier test's pool may still be on its way out
    with local_processes(2, threads=1) as pool:
        pids = _children() - before
        assert len(pids) == 2 and all(signal.SIGINT in _ignored(pid) for pid in pids)
        assert pool.submit(os.getenv, "HILRIG_THREADS").result() == "1"
    assert still_running(pids, wait_s=0.0) == set()  # joined before the block was left


def test_a_pool_left_by_an_exception_stops_the_work_in_hand_at_once():
    """A Ctrl-C (or a file that failed) while a process is deep in a fit: the command
    ends now, not when that fit would have."""
    before = _children()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        with local_processes(1) as pool:
            pids = _children() - before
            running = pool.submit(time.sleep, 60)
            while not running.running():
                time.sleep(0.01)
            raise KeyboardInterrupt
    assert time.monotonic() - t0 < 30
    assert len(pids) == 1 and still_running(pids, wait_s=0.0) == set()
