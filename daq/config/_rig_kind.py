"""Which rig the bridge's two encoders are on: the `[rig]` keys beyond the Furuta values.

    [rig]
    kind = "single"          # furuta (default), single, nlink:1, nlink:2
    channel = 1              # single: the bridge channel of the free joint (0 or 1)
    joint_angles = "relative" # nlink:2: channel 1 reads link 2 against link 1
    zero = "hanging"         # a count of 0 is the link hanging (or "upright")
    plane_tilt_deg = 0.0     # single: the plane of the swing from the vertical
    friction = "auto"        # the joint friction law identification fits

A `single` rig uses one channel and records both; `nlink:2` uses both. nlink:3 needs a
third encoder the bridge does not have.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hilrig.identify import parse_rig_kind
from hilrig.identify.model import FrictionModel

#: the [rig] keys this model takes; the rest of [rig] is the Furuta rig's RigParams
RIG_KIND_KEYS = ("kind", "channel", "joint_angles", "zero", "plane_tilt_deg", "friction")
BRIDGE_CHANNELS = 2


class RigKindConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    kind: str = Field("furuta", description="furuta, single, nlink:1 or nlink:2")
    channel: int = Field(1, ge=0, le=1,
                         description="single: the bridge channel of the free joint")
    joint_angles: Literal["relative", "absolute"] = Field(
        "relative", description="nlink: whether channel 1 reads link 2 against link 1 "
                                "(an encoder on the joint) or against the vertical")
    zero: Literal["hanging", "upright"] = Field(
        "hanging", description="what a count of 0 means: each link hanging, or upright")
    plane_tilt_deg: float = Field(0.0, ge=0, lt=90,
                                  description="single: the swing's plane from the vertical, deg")
    friction: FrictionModel = Field("auto", description="the joint friction law to fit")

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, v: str) -> str:
        _, links = parse_rig_kind(v)
        if links > BRIDGE_CHANNELS:
            raise ValueError(f"rig kind {v} needs {links} encoders; the bridge has "
                             f"{BRIDGE_CHANNELS}")
        return v.strip().lower()
