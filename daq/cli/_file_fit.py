"""One file's identification as it runs in a pool's process (daq.cli._identify_files).

Kept apart from the pool's side so that a process of the pool imports only this, the fit
guard and what the fit itself needs. The fit reaches the process as a file the command
wrote (a 35 s capture pickles to 8.5 MB): through the pool's pipe, a process stopped
before it had read its task left the pipe's writer blocked, and on Python 3.11 releases
before 3.11.5 (gh-94777) the command then never exited.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, Self

import numpy as np

from hilrig.identify import IdentificationResult, Progress

from ._fit_guard import fit_guard

__all__ = ["FileFit", "fit_in_pool", "keep_queue"]

#: a process reports its fit's progress at most this often (seconds)
REPORT_S = 0.2


class _Sampled(Protocol):
    """A record's clock (identify.Measurement, identify.Record)."""

    @property
    def sample_index(self) -> np.ndarray: ...

    @property
    def rate_hz(self) -> float: ...


@dataclass(frozen=True)
class FileFit:
    """One file's identification: `fit(progress=...)` gives its result (picklable: a
    functools.partial of a public function, since it may run in another process);
    `hint` says what to try where the fit fails (fit_guard); `seconds` of record; the
    rig `family` whose kernels it needs (identify.model.ensure_compiled)."""

    path: str
    fit: Callable[..., IdentificationResult]
    hint: str
    seconds: float
    family: str

    @classmethod
    def of(cls, path: str, fit: Callable[..., IdentificationResult], hint: str,
           record: _Sampled, family: str) -> Self:
        """The fit of `record`, read from `path`."""
        return cls(path, fit, hint,
                   float(record.sample_index[-1] - record.sample_index[0]) / record.rate_hz,
                   family)


_reports: Any = None  # the queue this process reports progress on (keep_queue)


def keep_queue(reports: Any) -> None:
    """The pool's initializer: where this process's progress goes."""
    global _reports
    _reports = reports


def _reporter(k: int) -> Progress:
    """progress(fraction, message) of file k onto the queue, REPORT_S apart."""
    last = [0.0]

    def report(fraction: float, message: str = "") -> None:
        now = time.monotonic()
        if now - last[0] >= REPORT_S and _reports is not None:
            last[0] = now
            _reports.put((k, fraction, message))

    return report


def fit_in_pool(k: int, kept: str) -> tuple[IdentificationResult, float]:
    """File k's result (its FileFit pickled at `kept`) and its wall seconds; a failed fit
    raises fit_guard's one line, which travels back to the command."""
    t0 = time.perf_counter()
    with open(kept, "rb") as stream:
        f: FileFit = pickle.load(stream)
    with fit_guard(f.path, f.hint):
        result = f.fit(progress=_reporter(k))
    return result, time.perf_counter() - t0
