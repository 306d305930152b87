"""One way to submit identification work, whatever runs it.

An `IdentificationExecutor` takes `IdentifyTask`s and gives back an asyncio future per
task that resolves to its `TaskOutcome`; cancelling that future withdraws the task from
the backend. Backends: `LocalExecutor` (processes of this machine, the default),
`WorkerExecutor` (the `hilrig worker` processes on the broker: live offload) and
`DaskExecutor` (a distributed cluster: campaigns). The finisher, the session's
re-identification, `hilrig reidentify` and the Monte Carlo all submit through it, and
`completed` hands outcomes back in the order they finish.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from typing import Protocol

from hilrig.identify import IdentificationResult

from ._task import IdentifyTask, TaskOutcome

__all__ = ["IdentificationExecutor", "completed", "identified"]


class IdentificationExecutor(Protocol):
    """Where identification runs."""

    @property
    def ships_files(self) -> bool:
        """Whether tasks must carry the capture file's bytes (its workers may not see the
        archive's files)."""
        ...

    @property
    def capacity(self) -> int:
        """How many tasks it runs at once now (its worker processes); 0 before start."""
        ...

    def start(self) -> None:
        """Bring the backend up (idempotent); submit starts it too."""
        ...

    def submit(self, task: IdentifyTask) -> asyncio.Future[TaskOutcome]:
        """Queue a task; its outcome when done. Cancel the future to withdraw the task."""
        ...

    def shutdown(self) -> None:
        """Release the backend; tasks still queued are cancelled."""
        ...


async def completed(futures: Iterable[asyncio.Future[TaskOutcome]]
                    ) -> AsyncIterator[TaskOutcome]:
    """Each outcome as its task finishes (a cancelled task's is skipped)."""
    pending: set[asyncio.Future[TaskOutcome]] = set(futures)
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for future in done:
            if not future.cancelled():
                yield future.result()


async def identified(executor: IdentificationExecutor, capture_id: str, path: str,
                     method: str) -> IdentificationResult:
    """One capture file identified by `executor`; IdentificationFailed with the reason."""
    task = IdentifyTask.of_file(capture_id, path, method, ship=executor.ships_files)
    outcome = await executor.submit(task)
    return outcome.result_or_raise()
