"""Sample sources: the simulated rig now, the serial bridge and replay behind the same interface."""

from ._simulated import SimulatedRig
from ._source import CHANNELS, SampleBlock, Source, SourceInfo, SourceStats

__all__ = ["CHANNELS", "SampleBlock", "SimulatedRig", "Source", "SourceInfo", "SourceStats"]
