"""A test tool: the bridge firmware emulated on a pseudo-terminal, with fault knobs.

Only tests, benchmarks and `hilrig emulate-firmware` load it; nothing that acquires does.
"""

from ._config import (
    EmulatorConfig,
    EmulatorRecord,
    SentFrame,
    Session,
    Spoiled,
    parse_window,
)
from ._emulator import FirmwareEmulator
from ._feed import RigFeed

__all__ = [
    "EmulatorConfig", "EmulatorRecord", "FirmwareEmulator", "RigFeed", "SentFrame", "Session",
    "Spoiled", "parse_window",
]
