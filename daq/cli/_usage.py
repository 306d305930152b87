"""How the CLI fails: bad arguments or input are one line and exit status 2."""

from __future__ import annotations

import argparse

from ..config import Settings, load_settings

__all__ = ["EXIT_USAGE", "UsageError", "settings_of"]

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad arguments or input: one line, exit status 2."""


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings a command runs with: defaults < --config FILE < HILRIG_* environment."""
    return load_settings(args.config)
