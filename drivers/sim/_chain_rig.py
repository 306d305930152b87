"""The simulated rig as a single or double pendulum: the chain model behind the bridge's
two channels, as `[rig] kind` says the encoders are mounted.

A `single` rig's free joint turns the encoder of `channel`; the other channel reads a
clamped joint (0 counts, plus noise). An `nlink:2` rig turns both: channel 0 reads link
1, channel 1 link 2 against link 1 (an encoder on the joint) or against the vertical.
A count of 0 is each link hanging (`zero_rad` = pi) or upright (0). The pose a session
holds it at is given per channel, in degrees from that zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from hilrig.identify.model import (
    ChainParams,
    ChainRig,
    FrictionParams,
    Realism,
    Tremor,
    drifted_chain_friction,
)
from hilrig.identify.reference import TABLE_III_TRUTH

from ._rig import SimulatedRig

__all__ = ["ChainMount", "SimulatedChainRig"]


@dataclass(frozen=True)
class ChainMount:
    """How a chain rig's links turn the bridge's two encoders."""

    rig: ChainRig
    params: ChainParams  # the true parameters, any common scale
    channel: int = 1  # single: the free joint's channel
    relative: bool = True  # nlink:2: channel 1 reads link 2 against link 1
    zero_rad: float = math.pi  # the link angle (from upright) that reads 0 counts

    def links_of(self, channels: np.ndarray) -> np.ndarray:
        """Absolute link angles (k, links) from channel angles (k, 2)."""
        if self.rig.links == 1:
            return channels[:, [self.channel]] + self.zero_rad
        q1 = channels[:, 0] + self.zero_rad
        q2 = channels[:, 1] + (q1 if self.relative else self.zero_rad)
        return np.column_stack([q1, q2])

    def channels_of(self, links: np.ndarray) -> np.ndarray:
        """Channel angles (k, 2) the encoders read for link angles (k, links)."""
        out = np.zeros((links.shape[0], 2))
        if self.rig.links == 1:
            out[:, self.channel] = links[:, 0] - self.zero_rad
            return out
        out[:, 0] = links[:, 0] - self.zero_rad
        out[:, 1] = links[:, 1] - (links[:, 0] if self.relative else self.zero_rad)
        return out


class SimulatedChainRig(SimulatedRig):
    """SimulatedRig whose free motion is a chain rig's (single, nlink:2): same interface,
    same hand, encoders and link."""

    def __init__(self, mount: ChainMount, pose_deg: tuple[float, float] = (0.0, 120.0), *,
                 rate_hz: float = 10_000.0, counts_per_rev: int = 40_000,
                 block_size: int = 100, paced: bool = True, hold_s: float = 1.0,
                 auto_release: bool = True, realism: Realism | None = None,
                 friction: FrictionParams = TABLE_III_TRUTH, session_hours: float = 0.0
                 ) -> None:
        if mount.rig.links > 2:
            raise ValueError(f"rig kind {mount.rig.kind} needs {mount.rig.links} encoders; "
                             "the bridge has 2")
        self.mount = mount
        self._links = mount.rig.links
        self._chain_params = mount.params  # the friction at the session's hour 0
        super().__init__(None, friction, pose_deg, rate_hz=rate_hz,
                         counts_per_rev=counts_per_rev, block_size=block_size, paced=paced,
                         hold_s=hold_s, auto_release=auto_release, realism=realism,
                         session_hours=session_hours)
        self.info = self.info.model_copy(update={"identity": f"sim:{mount.rig.kind}"})

    def hold(self, pose_deg: tuple[float, float], release_in_s: float | None = None) -> None:
        super().hold(pose_deg, release_in_s)
        # the held pose and the state in link angles, the tremor on every link
        self._pose = self.mount.links_of(np.radians(np.asarray(pose_deg))[None, :])[0]
        self._state = np.concatenate([self._pose, np.zeros(self._links)])
        self._tremor = Tremor(self.realism.hand_tremor_rad, self._rng, self._links)

    def _drift(self) -> None:
        """At a release, the joints' friction the session's time has drifted it to."""
        p = self._chain_params
        self.mount = replace(self.mount, params=ChainParams(
            p.inertial, drifted_chain_friction(p.friction, self.realism, self.session_hours)))

    def _push(self) -> np.ndarray:
        """The push on the last link (the hand's), the arm's push on the others."""
        push = np.full(self._links, self.realism.push_rad_s[0])
        push[-1] = self.realism.push_rad_s[1]
        return push

    def _free(self, m: int, sub: int) -> np.ndarray:
        # m + 1 rows from the current state; the state is left at row m, the next
        # block's first sample
        q = self.mount.params.run(self.mount.rig.g_plane, self._state, m + 1,
                                  1.0 / self.rate_hz, sub)
        if not np.all(np.isfinite(q)):
            raise RuntimeError("the simulated chain rig diverged")
        return q[:m]

    def _channels(self, joints: np.ndarray) -> np.ndarray:
        return self.mount.channels_of(joints)
