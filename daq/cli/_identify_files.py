"""Files of one rig identified side by side: `hilrig identify A B ... --pooled`.

A night's captures are independent fits; on a machine of several cores they run side by
side in processes of this machine (daq.processes.local_processes: spawned, born ignoring
Ctrl-C, gone with this process), the cores shared out between them. Each process costs
about 1.5 s to start (its imports), so files that hold less than MIN_SIDE_BY_SIDE_S of
records in all are identified one after another in this process, as is everything on
one core. Progress comes back on a queue and shows as one bar, with a line as each file
starts and ends; a file whose fit fails ends the command with its one line, the others stopped.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import queue
import tempfile
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from hilrig.identify import IdentificationResult
from hilrig.identify.model import ensure_compiled

from ..processes import local_processes
from ._file_fit import FileFit, fit_in_pool, keep_queue
from ._fit_guard import fit_guard
from ._progress import ProgressBar
from ._usage import FitFailed

__all__ = ["FileFit", "MIN_SIDE_BY_SIDE_S", "identify_files", "side_by_side"]

#: seconds of records in all below which files are identified one after another, on 2
#: cores (bench/bench_pooled_files.py and by hand, side by side against in turn): 10
#: realistic captures of 35 s 0.73 of the wall time; plain simulated ones, whose fits use
#: both threads well, 8 of 35 s 10.0-10.2 against 10.3-10.4 s, 4 8.1 against 7.3-7.9 s,
#: 2 6.4-7.4 against 4.7-4.9 s (each process imports numpy, scipy, numba and the
#: estimator again: about 1.5 s)
MIN_SIDE_BY_SIDE_S = 150.0


def side_by_side(fits: Sequence[FileFit], workers: int | None = None) -> int:
    """How many processes identify `fits` at once: `workers` if given (at most one per
    file), else one per core where they hold MIN_SIDE_BY_SIDE_S of records or more;
    1 means one after another in this process."""
    if workers is None:
        if sum(f.seconds for f in fits) < MIN_SIDE_BY_SIDE_S:
            return 1
        workers = os.cpu_count() or 1
    return max(1, min(workers, len(fits)))


def identify_files(fits: Sequence[FileFit], workers: int | None = None
                   ) -> list[IdentificationResult]:
    """Each file's result, in the order given, `side_by_side(fits, workers)` at a time."""
    n = side_by_side(fits, workers)
    if n < 2:
        return [_here(k, len(fits), f) for k, f in enumerate(fits)]
    return _in_pool(fits, n, max(1, (os.cpu_count() or 1) // n))


def _here(k: int, n: int, f: FileFit) -> IdentificationResult:
    bar = ProgressBar(f"identify {k + 1}/{n} {f.path}")
    try:
        with fit_guard(f.path, f.hint):
            return f.fit(progress=bar)
    finally:
        bar.close()


def _in_pool(fits: Sequence[FileFit], workers: int, threads: int
             ) -> list[IdentificationResult]:
    n = len(fits)
    reports = multiprocessing.get_context("spawn").Queue()
    bar = ProgressBar(f"identify {n} files, {workers} at a time")
    fractions = [0.0] * n
    seen: set[int] = set()  # the files whose process has reported
    results: list[IdentificationResult | None] = [None] * n
    try:
        # here, not in each process: a Ctrl-C stops the compiling children here (the
        # pool's processes, stopped by SIGTERM, left theirs compiling on)
        for family in sorted({f.family for f in fits}):
            ensure_compiled(family, lambda _f, message: bar(0.0, message))
        with tempfile.TemporaryDirectory(prefix="hilrig-files-") as tmp, local_processes(
                workers, threads, initializer=keep_queue, initargs=(reports,)) as pool:
            if not bar.tty:  # a log says how the files go before any of them ends (piped,
                # the bar is silent for its first second, and a file that fails within it
                # ended the command with its own lines only)
                _say(bar, bar.label)
            running: dict[Future[tuple[IdentificationResult, float]], int] = {}
            for k, f in enumerate(fits):
                kept = os.path.join(tmp, f"{k}.pickle")
                with open(kept, "wb") as stream:
                    pickle.dump(f, stream, protocol=pickle.HIGHEST_PROTOCOL)
                running[pool.submit(fit_in_pool, k, kept)] = k
            latest = ""
            while running:
                done, _ = wait(running, timeout=0.1, return_when=FIRST_COMPLETED)
                for k, fraction, message in _drained(reports):
                    if k not in seen:
                        seen.add(k)
                        _say(bar, f"identify {k + 1}/{n} {fits[k].path}: fitting")
                    fractions[k] = max(fractions[k], min(1.0, fraction))
                    latest = f"{os.path.basename(fits[k].path)}: {message}"
                for future in done:
                    k = running.pop(future)
                    results[k], seconds = _result(future, k, fits, running)
                    fractions[k] = 1.0
                    _say(bar, f"identify {k + 1}/{n} {fits[k].path}: done in {seconds:.1f} s")
                finished = n - len(running)
                # piped, the bar writes a line when its message changes: the counts only
                detail = f"; {latest}" if latest and bar.tty else ""
                bar(sum(fractions) / n, f"{finished}/{n} done{detail}")
    finally:
        bar.close()
        reports.close()
    kept_all = [r for r in results if r is not None]
    assert len(kept_all) == n  # every future ended with a result or raised
    return kept_all


def _drained(reports: Any) -> list[tuple[int, float, str]]:
    """What the processes reported since the last look: (file, fraction, message)."""
    out: list[tuple[int, float, str]] = []
    while True:
        try:
            k, fraction, message = reports.get_nowait()
        except queue.Empty:
            return out
        out.append((int(k), float(fraction), str(message)))


def _result(future: Future[tuple[IdentificationResult, float]], k: int,
            fits: Sequence[FileFit], running: dict[Future[Any], int]
            ) -> tuple[IdentificationResult, float]:
    try:
        return future.result()
    except BrokenProcessPool:
        # the OOM killer or a crash in native code: the files not done are named
        left = [j for f, j in running.items()
                if not (f.done() and not f.cancelled() and f.exception() is None)]
        names = ", ".join(fits[j].path for j in sorted([k, *left]))
        raise FitFailed(f"an identification process died (out of memory?) with {names} "
                        "still to do; identify them one at a time (--workers 1)") from None


def _say(bar: ProgressBar, line: str) -> None:
    """A line above the bar (a terminal's bar is redrawn after it)."""
    if not bar.enabled:
        return
    if bar.tty:
        bar.stream.write("\r\033[K")
    bar.stream.write(line + "\n")
    bar.stream.flush()
