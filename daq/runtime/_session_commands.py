"""A session's commands (hilrig/<rig_id>/cmd/<verb>): what a lab may ask while it runs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from ..mqtt import CommandRefused, CommandRouter, Request

__all__ = ["SessionCommands", "SessionControl"]

#: a verb's handler, as the router takes it (its request model is the verb's own)
Handler = Callable[[Any], Awaitable[dict[str, Any] | None]]


class SessionControl(Protocol):
    """What a lab's commands act on in a running session."""

    session_id: str
    stop_reason: str | None  # set once the session is stopping

    @property
    def suspended(self) -> Mapping[str, str]:
        """Why no release may happen now, by kind ("paused", "disk", ...)."""

    def awaited_release(self) -> int | None:
        """The planned capture whose release the session is waiting for, or None."""

    async def release_now(self) -> int | None:
        """Let the rig go now; the sample index it was let go at, if known."""

    def stop(self, reason: str) -> None:
        """End the session after the capture under way."""

    def suspend(self, key: str, reason: str) -> None: ...

    def lift(self, key: str) -> None:
        """A suspension of `key` ended by the lab (not by its condition clearing)."""


class SessionCommands:
    """arm (refused: the session arms), abort, release, identify, session/start (refused),
    session/stop, session/pause and session/resume."""

    def __init__(self, session: SessionControl, *, abort: Handler, identify: Handler) -> None:
        self.session = session
        self.abort = abort
        self.identify = identify

    def register(self, router: CommandRouter) -> None:
        router.register("arm", self.arm)
        router.register("abort", self.abort)
        router.register("release", self.release)
        router.register("identify", self.identify)
        router.register("session/start", self.start)
        router.register("session/stop", self.stop)
        router.register("session/pause", self.pause)
        router.register("session/resume", self.resume)

    async def arm(self, request: Request) -> dict[str, Any]:
        raise CommandRefused("arm: not allowed now: the session arms the trigger at each "
                             "release it asks for")

    async def release(self, request: Request) -> dict[str, Any]:
        seq = self.session.awaited_release()
        if seq is None:
            raise CommandRefused("release: not allowed now: no release is awaited")
        opened = await self.session.release_now()
        return {"seq": seq, "release_index": opened}

    async def start(self, request: Request) -> dict[str, Any]:
        raise CommandRefused(f"session/start: not allowed now: session "
                             f"{self.session.session_id} is running")

    async def stop(self, request: Request) -> dict[str, Any]:
        s = self.session
        if s.stop_reason is None:
            s.stop("stop requested")
        return {"session_id": s.session_id}

    async def pause(self, request: Request) -> dict[str, Any]:
        self.session.suspend("paused", "paused by command")
        return {"session_id": self.session.session_id, "state": "suspended"}

    async def resume(self, request: Request) -> dict[str, Any]:
        s = self.session
        if "paused" not in s.suspended:
            raise CommandRefused("session/resume: not allowed now: the session is not paused")
        s.lift("paused")
        return {"session_id": s.session_id,
                "state": "suspended" if s.suspended else "running"}
