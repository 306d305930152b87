"""The Furuta rig on the command line: its part of simulate, identify and compare."""

from ._commands import FURUTA_COMMANDS, format_result

__all__ = ["FURUTA_COMMANDS", "format_result"]
