"""How a capture's release happens: the simulated rig lets go by itself, an operator by
hand, or the bridge opens a latch (protocol 1.1 RELEASE, a pin in the firmware config).

A session asks its Releaser to release the rig from a pose; it then watches for the
motion (the trigger) and gives up after the plan's capture timeout. The trigger arms
only once the rig rests near the pose, and tells the releaser (`armed`): the latch
opens `hold_s` after that, so the capture always has its still pre-trigger window.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from hilrig.drivers import Holdable, Releasable, Source

from ..mqtt import CommandRefused
from ._plan import SessionPlan

__all__ = ["LatchReleaser", "OperatorReleaser", "ReleaseUnavailable", "Releaser", "SimReleaser",
           "releaser_for"]

log = logging.getLogger("hilrig.release")


class Releaser(Protocol):
    """Puts the rig at a pose and lets it go, or asks someone to."""

    def release(self, pose_deg: tuple[float, float], label: str) -> str | None:
        """Start a release; returns what a person must be told to do, or None."""
        ...

    def armed(self, index: int) -> None:
        """The rig rests at the pose and the trigger watches from sample `index`."""
        ...

    def tick(self, index: int, rate_hz: float) -> None:
        """Called with every block while a release is awaited (`index`: the next sample)."""
        ...

    async def release_now(self) -> int | None:
        """Let go at once (a command); the release's sample index when known."""
        ...

    @property
    def release_index(self) -> int | None:
        """Sample index of the last release when the releaser knows it, else None."""
        ...


class ReleaseUnavailable(ConnectionError):
    """The plan's release cannot be done with this source (one line: what is missing)."""


class SimReleaser:
    """A rig that holds itself (the simulated one): held at the pose `hold_s`, then let go."""

    def __init__(self, rig: Holdable, hold_s: float) -> None:
        self.rig = rig
        self.hold_s = float(hold_s)

    def release(self, pose_deg: tuple[float, float], label: str) -> str | None:
        self.rig.hold(pose_deg, release_in_s=self.hold_s)
        return None

    def armed(self, index: int) -> None:
        pass

    def tick(self, index: int, rate_hz: float) -> None:
        pass

    async def release_now(self) -> int | None:
        if isinstance(self.rig, Releasable):
            return await self.rig.release()
        raise CommandRefused("release: this rig cannot be let go on command")

    @property
    def release_index(self) -> int | None:
        return self.rig.release_index


class OperatorReleaser:
    """A person releases the rig: the session tells what to do (terminal, MQTT), then waits."""

    def release(self, pose_deg: tuple[float, float], label: str) -> str | None:
        return (f"ready for release: {label}: set arm {pose_deg[0]:g} deg, pendulum "
                f"{pose_deg[1]:g} deg, hold it still, then let go")

    def armed(self, index: int) -> None:
        pass

    def tick(self, index: int, rate_hz: float) -> None:
        pass

    async def release_now(self) -> int | None:
        raise CommandRefused("release: an operator releases this rig by hand")

    @property
    def release_index(self) -> int | None:
        return None


class LatchReleaser:
    """The bridge drives a latch or solenoid: RELEASE `hold_s` after the rig rests at the pose.

    The device answers RELEASE with the index of the first sample taken with the latch
    open, so `release_index` is exact (not inferred from the motion).
    """

    def __init__(self, bridge: Releasable, hold_s: float, pulse_ms: int = 0) -> None:
        self.bridge = bridge
        self.hold_s = float(hold_s)
        self.pulse_ms = int(pulse_ms)
        self._due = False
        self._armed_at: int | None = None  # where the rig came to rest at the pose
        self._index: int | None = None
        self._task: asyncio.Task[None] | None = None
        self.error: str | None = None

    def release(self, pose_deg: tuple[float, float], label: str) -> str | None:
        self._due = True
        return (f"latch: {label}: the bridge releases the rig {self.hold_s:g} s after it rests "
                f"at arm {pose_deg[0]:g} deg, pendulum {pose_deg[1]:g} deg (latch it there)")

    def armed(self, index: int) -> None:
        if self._due:
            self._armed_at = index

    def tick(self, index: int, rate_hz: float) -> None:
        # hold_s counted in samples: the same on a real board and on an unpaced emulator
        if self._armed_at is not None and index - self._armed_at >= self.hold_s * rate_hz:
            self._due, self._armed_at = False, None
            self._task = asyncio.get_running_loop().create_task(self._open())

    async def release_now(self) -> int | None:
        self._due, self._armed_at = False, None
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._index = await self.bridge.release(self.pulse_ms)
        return self._index

    async def _open(self) -> None:
        try:
            self._index = await self.bridge.release(self.pulse_ms)
        except (ConnectionError, TimeoutError) as exc:
            # the capture then times out and the plan decides; the reason is logged
            self.error = str(exc) or "RELEASE not answered"
            log.error("latch not opened: %s", self.error)

    @property
    def release_index(self) -> int | None:
        return self._index


def releaser_for(plan: SessionPlan, source: Source) -> Releaser:
    """The releaser a plan asks for, checked against what the source can do.

    ReleaseUnavailable (one line) if the source cannot: a latch needs a `Releasable`
    source whose device reports a release output; "self" needs a `Holdable` rig.
    """
    if plan.release == "latch":
        if not isinstance(source, Releasable) or not source.can_release:
            where = f"serial {plan.port}" if plan.port else source.info.identity
            raise ReleaseUnavailable(f"{where}: the bridge has no release output "
                                     "(INFO capabilities; firmware 1.1 with a release pin)")
        return LatchReleaser(source, plan.hold_s, plan.pulse_ms)
    if plan.release == "self":
        if not isinstance(source, Holdable):
            raise ReleaseUnavailable(f"{source.info.identity}: this rig cannot hold and "
                                     "release itself; use release 'operator' or 'latch'")
        return SimReleaser(source, plan.hold_s)
    return OperatorReleaser()
