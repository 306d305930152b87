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

__all__ = ["blas_on_one_thread", "job_groups", "job_ranges", "run_jobs",
           "segment_steps"]

_P = ParamSpec("_P")
_R = TypeVar("_R")

_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()


def job_ranges(weights: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """[0, len(weights)) cut into at most `parts` contiguous, non-empty ranges of about
    equal total weight (a job's cost: its RK4 steps)."""
    n = len(weights)
    parts = max(1, min(parts, n))
    cum = np.cumsum(np.asarray(weights, dtype=np.float64))
    cuts = np.searchsorted(cum, cum[-1] * np.arange(1, parts) / parts, side="right") if n \
        else np.array([], dtype=np.int64)
    bounds = np.unique(np.concatenate([[0], np.clip(cuts, 1, n - 1) if n > 1 else [], [n]]))
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:]) if b > a]


def job_groups(weights: np.ndarray, parts: int) -> list[np.ndarray]:
    """The jobs 0 .. len(weights) - 1 shared among at most `parts` non-empty groups (each
    in ascending order) so that the heaviest group's total weight is small: the better of
    contiguous ranges (job_ranges) and the heaviest job first onto the lightest group
    (longest processing time first, within 4/3 of the best split).

    A fit's segments are few (9 on a 35 s capture) and unequal: the substeps gather where
    a joint sticks, late in the decay. Split by rows, the busier thread of two carried up
    to 1.53 times half of a fine fit's steps (bench_speed's realistic capture 6: 1.18 on
    average over its fits), and the other waited for it."""
    w = np.asarray(weights, dtype=np.float64)
    ranges = [np.arange(a, b) for a, b in job_ranges(w, parts)]
    k = len(ranges)
    if k <= 1:
        return ranges
    loads = np.zeros(k)
    owner = np.empty(w.size, dtype=np.int64)
    for j in np.argsort(-w, kind="stable"):
        g = int(np.argmin(loads))
        owner[j] = g
        loads[g] += w[j]
    if loads.max() >= max(w[r].sum() for r in ranges):
        return ranges
    return [np.flatnonzero(owner == g) for g in range(k)]


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
    """work(jobs) over groups of the jobs of about equal weight (job_groups; jobs: an
    int64 array of job indices), one group per thread (threads()); this thread takes the
    first."""
    groups = job_groups(weights, threads())
    if len(groups) <= 1:
        for jobs in groups:
            work(jobs)
        return
    pool = _threads(len(groups) - 1)
    futures = [pool.submit(work, jobs) for jobs in groups[1:]]
    work(groups[0])
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
