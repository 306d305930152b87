"""`hilrig identify A B ... --pooled` identifies the files side by side where that pays: the
same answer as one after another, a file whose fit fails (or a process of the pool
killed) is one line naming it with nothing left running, and --workers is checked
before any file is read."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hilrig.daq.cli._identify_files import FileFit, side_by_side
from hilrig.daq.cli._progress import ProgressBar

from ..processes.test_pool import still_running
from .test_cli import assert_one_line_error, run_main
from .test_interrupt import processes_with


def _fits(*seconds: float) -> list[FileFit]:
    return [FileFit(f"c{k}.h5", print, "", s, "furuta") for k, s in enumerate(seconds)]


def test_files_go_side_by_side_only_where_they_hold_enough_records(monkeypatch):
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    assert side_by_side(_fits(35, 35, 35, 35)) == 1  # each process's imports cost more
    assert side_by_side(_fits(*[35] * 5)) == 4  # one per core
    assert side_by_side(_fits(80, 80)) == 2  # at most one per file
    assert side_by_side(_fits(10, 10, 10), workers=2) == 2  # asked for
    assert side_by_side(_fits(35, 35), workers=8) == 2
    assert side_by_side(_fits(*[35] * 10), workers=1) == 1


@pytest.fixture(scope="module")
def drifting(tmp_path_factory) -> list[str]:
    """Three 10 s captures of a rig whose pendulum's viscous term rises 5 % an hour."""
    out = tmp_path_factory.mktemp("side")
    files = []
    for hours in (0.0, 4.0, 8.0):
        path = out / f"c-{hours:g}h.h5"
        rc, _ = run_main("simulate", "--out", str(path), "--duration", "10", "--drift",
                         "mu_v1=0.05", "--session-hours", str(hours), "--seed", "3")
        assert rc == 0
        files.append(str(path))
    return files


def _answer(out: str) -> dict:
    doc = json.loads(out)
    for key in ("compute_seconds", "created_utc"):
        doc.pop(key)
    return doc


def _children() -> set[int]:
    return {p.pid for p in multiprocessing.active_children() if p.pid is not None}


def test_side_by_side_gives_the_answer_one_after_another_gives(drifting, capsys):
    before = _children()
    capsys.readouterr()
    hours = ["--hours", "0", "4", "8"]
    rc, out = run_main("identify", *drifting, "--pooled", *hours, "--json", "--workers", "1")
    assert rc == 0
    in_turn = _answer(out)
    rc, out = run_main("identify", *drifting, "--pooled", *hours, "--json", "--workers", "2")
    assert rc == 0
    assert "identify 3 files, 2 at a time" in capsys.readouterr().err  # they did go so
    assert _answer(out) == in_turn  # the same fits, to the last digit
    assert len(in_turn["captures"]) == 3
    assert still_running(_children() - before) == set()  # the pool is gone with the command


@pytest.mark.fault(injected="identify --pooled side by side: one file's fit fails in its "
                            "process (free motion too short to fit)",
                   expected="one line naming that file, exit 2, no process of the pool "
                            "left running")
def test_a_fit_that_fails_side_by_side_is_one_line_naming_its_file(drifting, tmp_path, capfd,
                                                                  monkeypatch):
    # however soon the fit fails: piped, the bar is silent for its first second (here for
    # a minute), and a fit that failed within it had left no line saying how the files went
    monkeypatch.setattr(ProgressBar, "QUIET_S", 60.0)
    short = tmp_path / "short.h5"
    rc, _ = run_main("simulate", "--out", str(short), "--duration", "0.05")
    assert rc == 0
    capfd.readouterr()
    before = _children()
    rc, _ = run_main("identify", drifting[0], str(short), "--pooled", "--hours", "0", "1",
                     "--workers", "2")
    assert rc == 2
    err = capfd.readouterr().err
    assert "identify 2 files, 2 at a time" in err  # side by side
    # the bar's lines while the processes started, then the one error line
    assert [line for line in err.splitlines() if line.startswith("hilrig:")] == [
        f"hilrig: error: {short}: the free motion is too short to fit: 1 sample at 250 Hz "
        "after the release, the fit needs 2 or more"], err
    assert "Traceback" not in err
    assert still_running(_children() - before) == set()


@pytest.mark.parametrize("workers", ["0", "65"])
def test_workers_are_checked_before_any_file_is_read(tmp_path, capfd, workers):
    missing = [str(tmp_path / "a.h5"), str(tmp_path / "b.h5")]  # never read
    rc, _ = run_main("identify", *missing, "--pooled", "--workers", workers)
    assert rc == 2
    assert_one_line_error(capfd, f"--workers must be in [1, 64] processes, got {workers}")


def test_workers_are_for_pooled(drifting, capfd):
    rc, _ = run_main("identify", drifting[0], "--workers", "2")
    assert rc == 2
    assert_one_line_error(capfd, "--workers is for --pooled")


@pytest.mark.fault(injected="identify --pooled side by side: a process of its pool killed "
                            "(kill -9, as the OOM killer does) mid-fit",
                   expected="one line naming the files still to do and what to try, exit 1, "
                            "no traceback, no process of the pool left")
@pytest.mark.timeout(300)
def test_a_pool_process_killed_mid_fit_is_one_line_naming_the_files_left(long_capture,
                                                                          tmp_path):
    marker = str(tmp_path / "marker")
    env = dict(os.environ, HILRIG_TEST_MARKER=marker)
    proc = subprocess.Popen([sys.executable, "-m", "hilrig", "identify",
                             *[str(long_capture)] * 3, "--pooled", "--hours", "0", "1", "2",
                             "--workers", "2"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    err_lines: list[str] = []
    reader = threading.Thread(target=lambda: err_lines.extend(iter(proc.stderr.readline, "")),
                              daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not any(
            ": fitting" in x for x in err_lines):
        time.sleep(0.05)
    # the pool's processes (not the queue's resource tracker): the command's children
    # that multiprocessing spawned to run work
    workers = [p for p in processes_with(marker)
               if f"PPid:\t{proc.pid}\n" in Path(f"/proc/{p}/status").read_text()
               and b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()]
    assert len(workers) == 2, (workers, err_lines)
    os.kill(workers[0], signal.SIGKILL)  # mid-fit
    assert proc.stdout.read() == ""  # no answer printed
    proc.wait(timeout=120)
    reader.join(timeout=10)
    err = "".join(err_lines)
    assert proc.returncode == 1, err
    assert "Traceback" not in err, err
    (line,) = [x for x in err.splitlines() if x.startswith("hilrig:")]
    assert line.startswith("hilrig: error: an identification process died (out of memory?)")
    assert str(long_capture) in line and "--workers 1" in line
    deadline = time.monotonic() + 10
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_with(marker) == []
