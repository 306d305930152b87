"""How the CLI fails: bad arguments or input are one line and exit status 2."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..config import MAX_NESTING, Settings, json_nesting, load_settings

__all__ = ["EXIT_USAGE", "UsageError", "json_arg", "settings_of"]

EXIT_USAGE = 2


_QUIET = [False]


def set_quiet(quiet: bool) -> None:
    """hilrig --quiet: results, warnings and errors only."""
    _QUIET[0] = quiet


def quiet() -> bool:
    return _QUIET[0]


class Stopped(KeyboardInterrupt):
    """SIGTERM, unwound as Ctrl-C is (hilrig: stopped, status 143)."""


class UsageError(Exception):
    """Bad arguments or input: one line, exit status 2."""


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings a command runs with: defaults < --config FILE < HILRIG_* environment."""
    return load_settings(args.config)


def json_arg(text: str, option: str) -> Any:
    """The JSON an option was given inline or as @file, refused in one line when it cannot
    be read, nests deeper than MAX_NESTING or is not JSON."""
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{option}: cannot read {text[1:]}: {exc.strerror}") from None
    if json_nesting(text.encode()) > MAX_NESTING:
        raise UsageError(f"{option}: nested too deeply (more than {MAX_NESTING} levels)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{option}: not valid JSON: {exc.msg} at column {exc.colno}") from None
