"""The simulated rig: the model of `identify` behind the same interface as the serial bridge."""

from ._chain_rig import ChainMount, SimulatedChainRig
from ._rig import SimulatedRig

__all__ = ["ChainMount", "SimulatedChainRig", "SimulatedRig"]
