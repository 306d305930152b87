"""Independent jobs of a compiled kernel on every core: threads over a nogil kernel.

numba's parallel=True runs a prange loop on its own thread pool, but compiling a
parallel kernel costs about twice a serial one, and the first identification after an
install waited for it. A serial kernel compiled with nogil=True releases the GIL while
it runs, so plain threads run its job ranges side by side just as well.

One identification uses every core, unless HILRIG_THREADS says how many threads it may
use: a campaign runs one single-threaded identification per core instead (processes
side by side scale further than threads inside one fit, and do not oversubscribe).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["job_ranges", "run_jobs"]

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def job_ranges(weights: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """[0, len(weights)) cut into at most `parts` contiguous, non-empty ranges of about
    equal total weight (a job's cost: its rows)."""
    n = len(weights)
    parts = max(1, min(parts, n))
    cum = np.cumsum(np.asarray(weights, dtype=np.float64))
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, parts) / parts, side="right") if n \
        else np.array([], dtype=np.int64)
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 1, n - 1) if n > 1 else [], [n]]))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def threads() -> int:
    """The threads one identification runs on: HILRIG_THREADS, else every core."""
    text = os.environ.get("HILRIG_THREADS", "")
    return max(1, int(text)) if text.isdigit() else (os.cpu_count() or 1)


def run_jobs(weights: np.ndarray, work: Callable[[int, int], None]) -> None:
    """work(lo, hi) over ranges of the jobs, one per thread (threads()); this thread takes
    the first."""
    ranges = job_ranges(weights, threads())
    if len(ranges) <= 1:
        for lo, hi in ranges:
            work(lo, hi)
        return
    pool = _threads(len(ranges) - 1)
    futures = [pool.submit(work, lo, hi) for lo, hi in ranges[1:]]
    work(*ranges[0])
    for f in futures:
        f.result()


def _threads(n: int) -> ThreadPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        if _pool is None or _pool_size < n:
            _pool, _pool_size = ThreadPoolExecutor(max_workers=n,
                                                   thread_name_prefix="hilrig-jobs"), n
        return _pool
