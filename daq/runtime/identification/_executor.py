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

__all__ = ["IdentificationExecutor", "completed", "identified", "settle_from_thread"]


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


def settle_from_thread(loop: asyncio.AbstractEventLoop, out: asyncio.Future[TaskOutcome], *,
                       cancelled: bool = False, error: BaseException | None = None,
                       outcome_json: str | None = None) -> None:
    """A backend's end of a task (in the backend's own thread) into the loop's future: the
    outcome's JSON checked on this side, as a worker's MQTT answer is. A task that ends
    after its loop did (cancelled at shutdown) has no one waiting: nothing to do."""

    def settle() -> None:
        if out.done():
            return
        if cancelled:
            out.cancel()
        elif error is not None:
            out.set_exception(error)
        else:
            out.set_result(TaskOutcome.model_validate_json(outcome_json or ""))

    if not loop.is_closed():
        loop.call_soon_threadsafe(settle)


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
