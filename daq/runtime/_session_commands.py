"""A session's commands (hilrig/<rig_id>/cmd/<verb>): what a lab may ask while it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..mqtt import CommandRefused, CommandRouter, Request

if TYPE_CHECKING:
    from ._session import SessionRun

__all__ = ["SessionCommands"]


class SessionCommands:
    """arm (refused: the session arms), abort, release, identify, session/start (refused),
    session/stop, session/pause and session/resume."""

    def __init__(self, session: SessionRun) -> None:
        self.session = session

    def register(self, router: CommandRouter) -> None:
        s = self.session
        router.register("arm", self.arm)
        router.register("abort", s.core.abort_command)
        router.register("release", self.release)
        router.register("identify", s.reidentifier.command)
        router.register("session/start", self.start)
        router.register("session/stop", self.stop)
        router.register("session/pause", self.pause)
        router.register("session/resume", self.resume)

    async def arm(self, request: Request) -> dict[str, Any]:
        raise CommandRefused("arm: not allowed now: the session arms the trigger at each "
                             "release it asks for")

    async def release(self, request: Request) -> dict[str, Any]:
        s = self.session
        if s.seq is None or s.release_at is None:
            raise CommandRefused("release: not allowed now: no release is awaited")
        opened = await s.releaser.release_now()
        return {"seq": s.seq, "release_index": opened}

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
        s.unsuspend("paused")
        s.watch.lifted("paused")
        return {"session_id": s.session_id,
                "state": "suspended" if s.suspended else "running"}
