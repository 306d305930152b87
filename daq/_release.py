"""How a capture's release happens: the simulated rig lets go by itself, an operator by hand.

A session asks its Releaser to release the rig from a pose; it then watches for the
motion (the trigger) and gives up after the plan's capture timeout. A latch or
solenoid driven by the bridge needs a RELEASE message in the wire protocol, which
version 1 does not have yet.
"""

from __future__ import annotations

from typing import Protocol

from drivers import SimulatedRig

__all__ = ["OperatorReleaser", "Releaser", "SimReleaser"]


class Releaser(Protocol):
    """Puts the rig at a pose and lets it go, or asks someone to."""

    def release(self, pose_deg: tuple[float, float], label: str) -> str | None:
        """Start a release; returns what a person must be told to do, or None."""
        ...

    @property
    def release_index(self) -> int | None:
        """Sample index of the last release when the releaser knows it, else None."""
        ...


class SimReleaser:
    """The simulated rig: held at the pose for `hold_s` (so the trigger arms), then let go."""

    def __init__(self, rig: SimulatedRig, hold_s: float) -> None:
        self.rig = rig
        self.hold_s = float(hold_s)

    def release(self, pose_deg: tuple[float, float], label: str) -> str | None:
        self.rig.hold(pose_deg, release_in_s=self.hold_s)
        return None

    @property
    def release_index(self) -> int | None:
        return self.rig.release_index


class OperatorReleaser:
    """A person releases the rig: the session tells what to do (terminal, MQTT), then waits."""

    def release(self, pose_deg: tuple[float, float], label: str) -> str | None:
        return (f"ready for release: {label}: set arm {pose_deg[0]:g} deg, pendulum "
                f"{pose_deg[1]:g} deg, hold it still, then let go")

    @property
    def release_index(self) -> int | None:
        return None
