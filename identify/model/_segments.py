"""Many short simulations at once: the segments of a capture, each from its own state.

Multiple shooting cuts a long capture into segments and starts each from a state of its
own, so a chaotic motion is never simulated further than one segment. A Jacobian then
needs every segment simulated for every perturbed parameter set: one job per (parameter
set, segment), all independent, run in parallel.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._simulate import simulate_scheduled

__all__ = ["simulate_jobs"]


@njit(cache=True, parallel=True)
def simulate_jobs(rigs: np.ndarray, frs: np.ndarray, x0s: np.ndarray, job_segment: np.ndarray,
                  seg_t0: np.ndarray, seg_first: np.ndarray, seg_len: np.ndarray, h: float,
                  substeps: np.ndarray, out_offset: np.ndarray, total: int) -> np.ndarray:
    """Angles of every job, stacked: rows out_offset[j] .. + seg_len[job_segment[j]].

    Job j simulates rig rigs[j] with friction frs[j] from state x0s[j] at time
    seg_t0[s] (s = job_segment[j]) over seg_len[s] points h apart, with the RK4
    substeps of the schedule from its entry seg_first[s] on (identify.model
    simulate_scheduled).
    """
    out = np.empty((total, 2))
    for j in prange(rigs.shape[0]):
        s = job_segment[j]
        sched = substeps[seg_first[s]:seg_first[s] + seg_len[s]]
        sim = simulate_scheduled(rigs[j], frs[j], x0s[j], seg_t0[s], seg_t0[s], h, sched)
        out[out_offset[j]:out_offset[j] + seg_len[s]] = sim
    return out
