"""Sample sources behind one interface, and the capabilities a source may offer.

The interface and the capability protocols live here; the sources themselves in
subpackages, so that only the code that builds one (the CLI's wiring) imports it:
`drivers.sim` (the simulated rig), `drivers.serial` (the bridge on a serial port) and
`drivers.emulator` (a test tool: the bridge firmware on a pseudo-terminal).
"""

from ._protocols import (
    CHANNELS,
    Conditions,
    Holdable,
    LinkHealth,
    Pacing,
    Releasable,
    SampleBlock,
    Source,
    SourceInfo,
    SourceStats,
)

__all__ = [
    "CHANNELS", "Conditions", "Holdable", "LinkHealth", "Pacing", "Releasable", "SampleBlock",
    "Source", "SourceInfo", "SourceStats",
]
