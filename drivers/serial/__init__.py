"""The serial bridge: the real rig's `Source`, over the bridge protocol (see SPEC.md)."""

from ._bridge import SerialBridge
from ._stats import Gap, ProtocolMismatchError, SerialBridgeError, SerialStats

__all__ = ["Gap", "ProtocolMismatchError", "SerialBridge", "SerialBridgeError", "SerialStats"]
