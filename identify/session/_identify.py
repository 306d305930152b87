"""identify_pooled: captures of one rig identified one by one with the recommended
estimator, then put together (pool_results)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from .._progress import Progress, no_progress
from ..methods import DEFAULT_METHOD, identify, identify_chain
from ..model import ChainRig
from ..results import IdentificationResult, SessionResult
from ..signal import Measurement, Record
from ._pool import pool_results

__all__ = ["identify_pooled"]


def identify_pooled(captures: Sequence[Measurement] | Sequence[Record],
                    x: Sequence[float] | np.ndarray | None = None, *,
                    rig: ChainRig | None = None, method: str = DEFAULT_METHOD,
                    covariate: str = "hours", session_id: str | None = None,
                    progress: Progress | None = None) -> SessionResult:
    """Each capture identified, then the session's answer (pool_results). x: each
    capture's covariate (session hours; default 0, 1, 2...).

    A Furuta rig's measurements, which must be told one rig, are identified by `method`;
    a chain rig's records (`rig` given: single, nlink:N) by identify_chain.
    """
    items: list[Record] = list(captures)
    if not items:
        raise ValueError("no captures to pool")
    one = _chain_fit(items, rig) if rig is not None else _furuta_fit(items, method)
    report = progress or no_progress
    t0 = time.perf_counter()
    results: list[IdentificationResult] = []
    for i, item in enumerate(items):
        def part(f: float, msg: str, i: int = i) -> None:
            report((i + f) / len(items), f"capture {i + 1} of {len(items)}: {msg}")
        results.append(one(item, part))
    return pool_results(results, x, covariate=covariate, session_id=session_id,
                        compute_seconds=time.perf_counter() - t0)


_Fit = Callable[[Record, Progress], IdentificationResult]


def _furuta_fit(items: list[Record], method: str) -> _Fit:
    ms = [m for m in items if isinstance(m, Measurement)]
    if len(ms) != len(items):
        raise ValueError("records of a chain rig: give the rig (rig=ChainRig(...))")
    for i, m in enumerate(ms[1:], start=1):
        if m.rig != ms[0].rig:
            raise ValueError(f"{m.capture_id or f'capture {i}'} was told another rig than "
                             f"{ms[0].capture_id or 'capture 0'}: pool captures of one rig")

    def fit(m: Record, progress: Progress) -> IdentificationResult:
        assert isinstance(m, Measurement)  # checked above
        return identify(m, method=method, progress=progress)
    return fit


def _chain_fit(items: list[Record], rig: ChainRig) -> _Fit:
    for i, r in enumerate(items):
        if isinstance(r, Measurement) or not isinstance(r, Record):
            raise ValueError(f"capture {i} is a Furuta measurement, not a record of rig kind "
                             f"{rig.kind}")
        if r.angles.shape[1] != rig.links:
            raise ValueError(f"{r.capture_id or f'capture {i}'} holds {r.angles.shape[1]} "
                             f"joint(s); rig kind {rig.kind} has {rig.links}")

    def fit(r: Measurement | Record, progress: Progress) -> IdentificationResult:
        return identify_chain(r, rig, progress=progress)
    return fit
