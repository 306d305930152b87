"""Files of one rig identified side by side: `hilrig identify A B ... --pooled`.

A night's captures are independent fits; on a machine of several cores they run side by
side in processes of this machine (daq.runtime.local_processes: spawned, born ignoring
Ctrl-C, gone with this process), the cores shared out between them. Each process costs
about 2 s to start (its imports), so files that hold less than MIN_SIDE_BY_SIDE_S of
records in all are identified one after another in this process, as is everything on
one core. Progress comes back on a queue and shows as one bar, with a line as each file
is done; a file whose fit fails ends the command with its one line, the others stopped.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from hilrig.identify import IdentificationResult

from ..runtime import local_processes
from ._file_fit import FileFit, fit_in_pool, keep_queue
from ._fit_guard import fit_guard
from ._progress import ProgressBar
from ._usage import FitFailed

__all__ = ["FileFit", "MIN_SIDE_BY_SIDE_S", "identify_files", "side_by_side"]

#: seconds of records in all below which files are identified one after another: on 2
#: cores, 3 captures of 10 s took 5.6 s side by side against 3.4 s in turn, 10 of 35 s
#: 43-56 s against 59-66 s
MIN_SIDE_BY_SIDE_S = 60.0


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
    results: list[IdentificationResult | None] = [None] * n
    try:
        with local_processes(workers, threads, initializer=keep_queue,
                             initargs=(reports,)) as pool:
            running: dict[Future[tuple[IdentificationResult, float]], int] = {
                pool.submit(fit_in_pool, k, f): k for k, f in enumerate(fits)}
            latest = ""
            while running:
                done, _ = wait(running, timeout=0.1, return_when=FIRST_COMPLETED)
                latest = _drain(reports, fits, fractions) or latest
                for future in done:
                    k = running.pop(future)
                    results[k], seconds = _result(future, k, fits, running)
                    fractions[k] = 1.0
                    _say(bar, f"identify {k + 1}/{n} {fits[k].path}: done in {seconds:.1f} s")
                finished = n - len(running)
                bar(sum(fractions) / n, f"{finished}/{n} done{'; ' + latest if latest else ''}")
    finally:
        bar.close()
        reports.close()
    return [r for r in results if r is not None]


def _drain(reports: Any, fits: Sequence[FileFit], fractions: list[float]) -> str:
    """Progress reported since the last look: each file's fraction; the latest message."""
    latest = ""
    while True:
        try:
            k, fraction, message = reports.get_nowait()
        except queue.Empty:
            return latest
        fractions[k] = max(fractions[k], min(1.0, float(fraction)))
        latest = f"{os.path.basename(fits[k].path)}: {message}"


def _result(future: Future[tuple[IdentificationResult, float]], k: int,
            fits: Sequence[FileFit], running: dict[Future[Any], int]
            ) -> tuple[IdentificationResult, float]:
    try:
        return future.result()
    except BrokenProcessPool:
        # the OOM killer or a crash in native code: the files still in hand are named
        names = ", ".join(fits[j].path for j in sorted([k, *running.values()]))
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
