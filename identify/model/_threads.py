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

from ._implicit import IMPLICIT_COST

__all__ = ["blas_on_one_thread", "run_jobs", "segment_steps"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def segment_steps(substeps: np.ndarray, first: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Each segment's RK4 steps, its cost as a job: the schedule's entries first[s] ..
    first[s] + length[s] - 1 summed (segments may overlap), an implicit step (a negative
    entry, identify.model._implicit) counted as IMPLICIT_COST of them."""
    work = np.where(substeps < 0, -IMPLICIT_COST * substeps, substeps)
    cum = np.concatenate([[0], np.cumsum(work)])
    return (cum[first + length] - cum[first]).astype(np.float64)


def threads() -> int:
    """The threads one identification runs on: HILRIG_THREADS, else every core."""
    text = os.environ.get("HILRIG_THREADS", "")
    return max(1, int(text)) if text.isdigit() else _cores()


@functools.cache
def _cores() -> int:
    """The machine's cores (os.cpu_count reads them anew each time: 7 us a kernel call)."""
    return os.cpu_count() or 1


def run_jobs(weights: np.ndarray, work: Callable[[np.ndarray], None]) -> None:
    """work(jobs) until every job has run once (jobs: an int64 array of job indices, in
    ascending order), on threads() threads, this one among them: each takes the heaviest
    jobs still waiting, a share of the weight left (_Queue)."""
    w = np.asarray(weights, dtype=np.float64)
    parts = min(threads(), w.size)
    if parts <= 1:
        if w.size:
            work(np.arange(w.size))
        return
    queue = _Queue(w, parts)
    pool = _threads(parts - 1)
    futures = [pool.submit(queue.drain, work) for _ in range(parts - 1)]
    queue.drain(work)  # raising (Ctrl-C here), it stops the other threads' takes too
    for f in futures:
        f.result()


class _Queue:
    """Jobs handed out heaviest first, each take a share of the weight left (guided
    self-scheduling: Polychronopoulos and Kuck, IEEE Trans. Computers 36(12), 1987), so a
    thread that wakes late or meets dearer steps than its weight said takes less.

    Split in advance by weight instead (contiguous ranges, or longest processing time
    first), the thread that starts the work waited for the other 0.46 s of 5.96 s of
    kernels over 8 realistic captures: the other woke 0.06-0.08 ms late, and a segment's
    steps do not cost alike (implicit ones, reversals). Taken this way, the kernels'
    wall time fell by 6 % and the identifications' by 5 % on the same captures."""

    def __init__(self, weights: np.ndarray, parts: int) -> None:
        self._order = np.argsort(-weights, kind="stable").astype(np.int64)
        # weight from each place in that order to the end
        self._left = np.cumsum(weights[self._order][::-1])[::-1].tolist()
        self._share = 2 * parts
        self._next = 0
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._next = len(self._order)

    def take(self) -> np.ndarray | None:
        """The next jobs (ascending), or None when none is left."""
        with self._lock:
            i, n = self._next, len(self._order)
            if i >= n:
                return None
            # at least one job; more until they carry 1 / (2 parts) of the weight left
            goal = self._left[i] - self._left[i] / self._share
            j = i + 1
            while j < n and self._left[j] > goal:
                j += 1
            self._next = j
            return np.sort(self._order[i:j])

    def drain(self, work: Callable[[np.ndarray], None]) -> None:
        """work() on takes until none is left; where it raises, the others take no more."""
        try:
            while (jobs := self.take()) is not None:
                work(jobs)
        except BaseException:
            self.close()
            raise


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
