"""identify_pooled: measurements of one rig identified one by one with the recommended
estimator, then put together (pool_results)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from .._progress import Progress, no_progress
from ..methods import DEFAULT_METHOD, identify
from ..results import IdentificationResult, SessionResult
from ..signal import Measurement
from ._pool import pool_results

__all__ = ["identify_pooled"]


def identify_pooled(measurements: Sequence[Measurement],
                    x: Sequence[float] | np.ndarray | None = None, *,
                    method: str = DEFAULT_METHOD, covariate: str = "hours",
                    session_id: str | None = None,
                    progress: Progress | None = None) -> SessionResult:
    """Each measurement identified by `method`, then the session's answer (pool_results).
    x: each capture's covariate (session hours; default 0, 1, 2...). The measurements
    must be told one rig."""
    ms = list(measurements)
    if not ms:
        raise ValueError("no captures to pool")
    for i, m in enumerate(ms[1:], start=1):
        if m.rig != ms[0].rig:
            raise ValueError(f"{m.capture_id or f'capture {i}'} was told another rig than "
                             f"{ms[0].capture_id or 'capture 0'}: pool captures of one rig")
    report = progress or no_progress
    t0 = time.perf_counter()
    results: list[IdentificationResult] = []
    for i, m in enumerate(ms):
        def part(f: float, msg: str, i: int = i) -> None:
            report((i + f) / len(ms), f"capture {i + 1} of {len(ms)}: {msg}")
        results.append(identify(m, method=method, progress=part))
    return pool_results(results, x, covariate=covariate, session_id=session_id,
                        compute_seconds=time.perf_counter() - t0)
