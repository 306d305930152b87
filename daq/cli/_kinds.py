"""Each of the estimator's rig kinds (identify.model.rig_family) and its part of the offline
commands; a new kind is a new entry here, not a branch in a command."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from hilrig.identify import rig_family

from ..config import Settings
from ._rig_commands import RigCommands
from ._usage import UsageError
from .chain import CHAIN_COMMANDS
from .furuta import FURUTA_COMMANDS

__all__ = ["RIG_COMMANDS", "rig_family_of"]

RIG_COMMANDS: Mapping[str, RigCommands] = {"furuta": FURUTA_COMMANDS, "chain": CHAIN_COMMANDS}


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
    return family, RIG_COMMANDS[family].from_config(argparse.Namespace(**vars(args)), config)
