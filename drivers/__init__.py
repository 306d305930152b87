"""Sample sources behind one interface: the simulated rig, the serial bridge, its emulator."""

from ._emulator import EmulatorConfig, FirmwareEmulator
from ._serial import Gap, ProtocolMismatchError, SerialBridge, SerialBridgeError, SerialStats
from ._simulated import SimulatedRig
from ._source import CHANNELS, SampleBlock, Source, SourceInfo, SourceStats

__all__ = [
    "CHANNELS", "EmulatorConfig", "FirmwareEmulator", "Gap", "ProtocolMismatchError",
    "SampleBlock", "SerialBridge", "SerialBridgeError", "SerialStats", "SimulatedRig", "Source",
    "SourceInfo", "SourceStats",
]
