"""The chain model of every rig kind but the Furuta pendulum: a planar chain of n links on a
fixed base with joint friction (`single`, `nlink:N`). Its parameter layout (_layout) is
plain Python; its equations (_equations) and forward sensitivities (_sensitivity) are
compiled kernels, loaded when first used; what identification is told of a chain rig and
its parameter sets (_rig).
"""

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from ._equations import (
        chain_acceleration,
        chain_energy,
        chain_regressor,
        chain_run,
        chain_segments,
        joint_friction,
    )
    from ._layout import (
        CHAIN_FRICTION_TERMS,
        friction_entry,
        inertial_names,
        inertial_normaliser,
        link_pairs,
        unpack_inertial,
    )
    from ._rig import ChainParams, ChainRig, FrictionModel
    from ._sensitivity import chain_sensitivity

_EXPORTS = {
    "._equations": (
        "chain_acceleration", "chain_energy", "chain_regressor", "chain_run", "chain_segments",
        "joint_friction",
    ),
    "._layout": (
        "CHAIN_FRICTION_TERMS", "friction_entry", "inertial_names", "inertial_normaliser",
        "link_pairs", "unpack_inertial",
    ),
    "._rig": (
        "ChainParams", "ChainRig", "FrictionModel",
    ),
    "._sensitivity": (
        "chain_sensitivity",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CHAIN_FRICTION_TERMS", "ChainParams", "ChainRig", "FrictionModel", "chain_acceleration",
    "chain_energy", "chain_regressor", "chain_run", "chain_segments", "chain_sensitivity",
    "friction_entry", "inertial_names", "inertial_normaliser", "joint_friction", "link_pairs",
    "unpack_inertial",
]
