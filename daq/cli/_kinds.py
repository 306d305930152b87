"""Each of the estimator's rig kinds (identify.model.rig_family) and its part of the offline
commands; a new kind is a new entry here, not a branch in a command.

A kind's part is imported when a command needs that kind, as _main imports a command's
handler: identifying a Furuta capture does not load the chain's estimator and simulator.
"""

from __future__ import annotations

import argparse
import importlib

from hilrig.identify import rig_family

from ..config import Settings
from ._rig_commands import RigCommands
from ._usage import UsageError

__all__ = ["KIND_COMMANDS", "rig_commands", "rig_family_of"]

#: each kind's part of the commands, as "subpackage:name" under daq.cli
KIND_COMMANDS = {"furuta": "furuta:FURUTA_COMMANDS", "chain": "chain:CHAIN_COMMANDS"}


def rig_commands(family: str) -> RigCommands:
    """The offline commands' part of the rig kind `family` (a key of KIND_COMMANDS)."""
    module, name = KIND_COMMANDS[family].split(":")
    commands: RigCommands = getattr(importlib.import_module(f"{__package__}.{module}"), name)
    return commands


def rig_family_of(args: argparse.Namespace, settings: Settings
                  ) -> tuple[str, argparse.Namespace]:
    """The estimator's rig kind of --rig, else of the config's [rig] kind, and the
    arguments to go on with (for the config's kind, a copy its RigCommands.from_config
    filled; the caller's arguments are left as they were)."""
    if getattr(args, "rig", None):
        try:
            return rig_family(args.rig), args
        except ValueError as exc:
            raise UsageError(f"--rig: {exc}") from None
    config = settings.rig_kind
    family = rig_family(config.kind)
    return family, rig_commands(family).from_config(argparse.Namespace(**vars(args)), config)
