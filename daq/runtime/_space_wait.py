"""Finishing steps that failed on a full disk, run again once there is room.

A full disk passes (a lab frees space, a quota is raised); a capture taken meanwhile is
held in memory with the step that failed (its file, its catalog row, a result), and one
task looks at the free space every `every_s` seconds: with `need_mb` free again, each
held step runs again, from where it stopped. While anything is held, `reason` says why
(a session suspends on it: no release while its captures cannot be kept).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

from ..config import one_line
from ..storage import free_mb

__all__ = ["NEED_MB", "SpaceWait"]

log = logging.getLogger("hilrig.service")

#: free space a held step waits for: a capture file (a few MB), its results and the
#: catalog's and outbox's pages, with room to spare
NEED_MB = 16.0

Step = Callable[[], Awaitable[None]]


class SpaceWait:
    """Held steps and the task that runs them again (see module docstring)."""

    def __init__(self, say: Callable[[str], None], *, need_mb: float = NEED_MB,
                 every_s: float = 2.0) -> None:
        self.say = say
        self.need_mb, self.every_s = need_mb, every_s
        self.reason: str | None = None  # why steps are held; None: none is
        self._held: list[tuple[Path, Step]] = []
        self._task: asyncio.Task[None] | None = None

    def hold(self, what: str, where: Path, step: Step, exc: BaseException
             ) -> asyncio.Task[None] | None:
        """Hold `step` (it failed on a full disk) until `where` has room; returns the task
        that will run it, when this call started one (the caller waits for it)."""
        self._held.append((where, step))
        if self.reason is None:  # said once, until there is room again
            self.reason = one_line(f"full ({exc}); captures taken wait for "
                                   f"{self.need_mb:g} MB free in {where.parent}")
            self.say(f"{what}: disk {self.reason}")
            log.warning("%s: disk %s", what, self.reason)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._watch())
            return self._task
        return None

    async def _watch(self) -> None:
        while self._held:
            await asyncio.sleep(self.every_s)
            if free_mb(self._held[0][0]) < self.need_mb:
                continue
            held, self._held = self._held, []
            for _, step in held:
                # a step reports its own failure, and holds itself again on a full disk
                await step()
            if not self._held:
                self.reason = None
                self.say(f"disk: room again; {len(held)} held step(s) of finishing done")
