"""Many short simulations at once: the segments of a capture, each from its own state.

Multiple shooting cuts a long capture into segments and starts each from a state of its
own, so a chaotic motion is never simulated further than one segment. A Jacobian then
needs every segment simulated for every perturbed parameter set: one job per (parameter
set, segment), all independent, run on every core.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._simulate import simulate_scheduled
from ._threads import run_jobs, segment_steps

__all__ = ["simulate_jobs", "simulate_jobs_into"]


def simulate_jobs(rigs: np.ndarray, frs: np.ndarray, x0s: np.ndarray, job_segment: np.ndarray,
                  seg_t0: np.ndarray, seg_first: np.ndarray, seg_len: np.ndarray, h: float,
                  substeps: np.ndarray, out_offset: np.ndarray, total: int,
                  seg_t_first: np.ndarray | None = None) -> np.ndarray:
    """Angles of every job, stacked: rows out_offset[j] .. + seg_len[job_segment[j]].

    Job j simulates rig rigs[j] with friction frs[j] from state x0s[j] at time
    seg_t0[s] (s = job_segment[j]) over seg_len[s] points h apart from seg_t_first[s]
    (seg_t0[s] unless given), with the RK4 substeps of the schedule from its entry
    seg_first[s] on (identify.model simulate_scheduled). The jobs run on every core
    (identify.model._threads).
    """
    out = np.empty((total, 2))
    first = seg_t0 if seg_t_first is None else seg_t_first

    def work(jobs: np.ndarray) -> None:
        simulate_jobs_into(rigs, frs, x0s, job_segment, seg_t0, first, seg_first, seg_len, h,
                           substeps, out_offset, jobs, out)

    run_jobs(segment_steps(substeps, seg_first, seg_len)[job_segment], work)
    return out


@njit(cache=True, nogil=True)
def simulate_jobs_into(rigs: np.ndarray, frs: np.ndarray, x0s: np.ndarray,
                       job_segment: np.ndarray, seg_t0: np.ndarray, seg_t_first: np.ndarray,
                       seg_first: np.ndarray, seg_len: np.ndarray, h: float,
                       substeps: np.ndarray, out_offset: np.ndarray, jobs: np.ndarray,
                       out: np.ndarray) -> None:
    """simulate_jobs of the jobs `jobs`, written into their rows of out."""
    for j in jobs:
        s = job_segment[j]
        sched = substeps[seg_first[s]:seg_first[s] + seg_len[s]]
        sim = simulate_scheduled(rigs[j], frs[j], x0s[j], seg_t0[s], seg_t_first[s], h, sched)
        # element by element: a slice assignment from an array compiles numba's shape
        # mismatch message (string formatting), seconds of the first run after an install
        for k in range(seg_len[s]):
            out[out_offset[j] + k, 0] = sim[k, 0]
            out[out_offset[j] + k, 1] = sim[k, 1]
