"""Independent jobs of a compiled kernel on every core: threads over a nogil kernel.

numba's parallel=True runs a prange loop on its own thread pool, but compiling a
parallel kernel costs about twice a serial one, and the first identification after an
install waited for it. A serial kernel compiled with nogil=True releases the GIL while
it runs, so plain threads run its job ranges side by side just as well.

One identification uses every core, unless HILRIG_THREADS says how many threads it may
use: a campaign runs one single-threaded identification per core instead (processes
side by side scale further than threads inside one fit, and do not oversubscribe).

The BLAS libraries numpy and scipy call (OpenBLAS in their wheels) keep threads of their
own, which spin for a while after each product: between the many small products of a fit
they took the cores back from these jobs. An identification holds them to one thread
(`blas_on_one_thread`): a realistic capture's shooting fit went from 0.95 to 0.68 s on a
2-core machine (1.66 to 0.88 s of CPU), and every seed method ran faster too (grey-box
22.8 to 11.8 s).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

import numpy as np
from threadpoolctl import threadpool_limits

__all__ = ["blas_on_one_thread", "job_ranges", "run_jobs"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

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


def blas_on_one_thread(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """fn with numpy's and scipy's BLAS held to one thread while it runs (the module's
    docstring says why); the caller's own setting comes back after it."""

    @functools.wraps(fn)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)

    return run
