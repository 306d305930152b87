"""Which task a campaign hands out first: the longest expected, so no worker is left with a
long task while the others sit idle at the end.

With exact costs and each task handed to the first worker free, handing them out longest
first (LPT, Graham 1969, "Bounds on multiprocessing timing anomalies", SIAM J. Appl.
Math. 17) ends within 4/3 - 1/(3m) of the shortest possible campaign on m workers, and
any order within 2 - 1/m. Here the costs are predictions and a few tasks wait queued
ahead of the workers, so the bound holds only roughly. A task's cost is predicted from
what the archive already knows:

1. the compute time of the same capture and method, kept by an earlier identification
   (every capture of a session has its live result);
2. otherwise the capture's duration times the method's median cost per second of capture
   (any method's, where this one has never run; with nothing known at all, the duration
   alone);
3. otherwise the median of the predictions made, so an unknown task sits in the middle.

Equal predictions keep the order they came in (the oldest capture first).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar

__all__ = ["longest_first"]


class _Task(Protocol):
    @property
    def capture_id(self) -> str: ...

    @property
    def method(self) -> str: ...


T = TypeVar("T", bound=_Task)


def longest_first(tasks: Sequence[T], durations: dict[str, float],
                  computes: Iterable[tuple[str, str, float]]) -> list[T]:
    """`tasks` ordered by predicted cost, longest first. `durations`: capture id -> seconds
    of capture; `computes`: (capture id, method, compute seconds) of earlier results, oldest
    first (a later one replaces an earlier)."""
    known: dict[tuple[str, str], float] = {}
    for capture_id, method, seconds in computes:
        if seconds > 0:
            known[capture_id, method] = seconds
    rates: dict[str, list[float]] = {}
    for (capture_id, method), seconds in known.items():
        if durations.get(capture_id, 0) > 0:
            rates.setdefault(method, []).append(seconds / durations[capture_id])
    every = [r for per in rates.values() for r in per]
    rate: dict[str, float | None] = {m: statistics.median(r) for m, r in rates.items()}
    # no rate at all: with nothing known, the durations alone order the tasks; with compute
    # times known but none beside a duration, a duration is no prediction in seconds
    fallback = statistics.median(every) if every else (None if known else 1.0)

    def predicted(task: T) -> float | None:
        if (task.capture_id, task.method) in known:
            return known[task.capture_id, task.method]
        duration = durations.get(task.capture_id, 0)
        per_second = rate.get(task.method, fallback)
        return duration * per_second if duration > 0 and per_second is not None else None

    costs = [predicted(t) for t in tasks]
    made = [c for c in costs if c is not None]
    middle = statistics.median(made) if made else 0.0
    order = sorted(range(len(tasks)),
                   key=lambda k: -(c if (c := costs[k]) is not None else middle))
    return [tasks[k] for k in order]
