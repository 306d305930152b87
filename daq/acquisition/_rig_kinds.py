"""How a rig kind sits on the bridge's channels, and what its captures become for
identification.

One class per rig kind: the Furuta rig (channel 0 the arm, 1 the pendulum, its angles
taken by any of identify's methods) and a chain of links (single, nlink:N: the channels,
zeros and joint angles of `[rig]`, taken by the recommended estimator's chain kind). The
engine, the runtime's identification and the CLI ask a capture's kind (`kind_of`) what
they need; a new rig kind is a new entry in `_KINDS`, not a branch. The capture knows
which rig its channels came from (Capture.kind, recorded in its file), so a session, a
worker and `reidentify` all identify it the same way. Acquisition identifies nothing:
that is the runtime's (runtime.identification.identify_capture).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from hilrig.identify import DEFAULT_METHOD, METHOD_NAMES, ChainRig, Record, rig_family

from ..config import RigKindConfig
from ._capture import Capture, capture_resolution

__all__ = ["ChainKind", "FurutaKind", "RigKind", "kind_of", "to_record"]


class RigKind(Protocol):
    """What acquisition and identification ask of a rig kind."""

    @property
    def name(self) -> str:
        """The kind as `[rig] kind` spells it: furuta, single, nlink:2."""
        ...

    @property
    def family(self) -> str:
        """The estimator's rig kind that identifies it: 'furuta' or 'chain'."""
        ...

    @property
    def methods(self) -> tuple[str, ...]:
        """The identification methods that apply to it."""
        ...

    @property
    def recorded(self) -> RigKindConfig | None:
        """What a capture records of the kind (None: a Furuta capture, as every file
        before the kind existed)."""
        ...

    @property
    def joints(self) -> tuple[tuple[int, str], ...]:
        """The bridge's channels that carry a joint, each with the joint's name (a single
        pendulum leaves one channel unused)."""
        ...


@dataclass(frozen=True)
class FurutaKind:
    """The tilted Furuta pendulum: channel 0 the arm, channel 1 the pendulum."""

    name: str = "furuta"
    family: str = "furuta"
    methods: tuple[str, ...] = METHOD_NAMES
    recorded: RigKindConfig | None = None
    joints: tuple[tuple[int, str], ...] = ((0, "arm"), (1, "pendulum"))


@dataclass(frozen=True)
class ChainKind:
    """A chain of links (single, nlink:N) on the channels `config` names."""

    config: RigKindConfig
    family: str = "chain"
    methods: tuple[str, ...] = (DEFAULT_METHOD,)

    @property
    def name(self) -> str:
        return self.config.kind

    @property
    def recorded(self) -> RigKindConfig | None:
        return self.config

    @property
    def joints(self) -> tuple[tuple[int, str], ...]:
        if self.rig.links == 1:
            return ((self.config.channel, "link 1"),)
        return ((0, "link 1"), (1, "link 2"))

    @property
    def rig(self) -> ChainRig:
        """What identification is told of the rig."""
        c = self.config
        return ChainRig(kind=c.kind, tilt_deg=c.plane_tilt_deg, friction=c.friction)

    def record(self, capture: Capture) -> Record:
        """Absolute link angles from the upward vertical (seed 002's delta_i) from the
        channels the kind says."""
        c = self.config
        a = capture.angles_rad
        zero = math.pi if c.zero == "hanging" else 0.0
        if self.rig.links == 1:
            angles = a[:, [c.channel]] + zero
        else:
            link1 = a[:, 0] + zero
            link2 = a[:, 1] + (link1 if c.joint_angles == "relative" else zero)
            angles = np.column_stack([link1, link2])
        return Record(angles=angles, sample_index=capture.sample_index,
                      rate_hz=capture.sample_rate_hz, resolution_rad=capture_resolution(capture),
                      capture_id=capture.capture_id)


#: the kind for each of the estimator's rig kinds, made from the [rig] kind table
_KINDS: Mapping[str, Callable[[RigKindConfig], RigKind]] = {
    "furuta": lambda _config: FurutaKind(),
    "chain": ChainKind,
}


def kind_of(kind: RigKindConfig | None) -> RigKind:
    """The rig kind a `[rig]` kind table names (None: the Furuta rig)."""
    if kind is None:
        return FurutaKind()
    return _KINDS[rig_family(kind.kind)](kind)


def to_record(capture: Capture) -> tuple[Record, ChainRig]:
    """A chain rig's capture as identification takes it: its link angles and its rig."""
    kind = kind_of(capture.kind)
    if not isinstance(kind, ChainKind):
        raise ValueError("the capture is of the Furuta rig: use to_measurement")
    return kind.record(capture), kind.rig

