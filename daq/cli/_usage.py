"""How the CLI fails: bad arguments or input are one line and exit status 2; a fit that
fails numerically on input that passed every check is one line and exit status 1."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..config import MAX_NESTING, Settings, json_nesting, load_settings, read_small_file

__all__ = ["EXIT_USAGE", "MAX_OPTION_FILE_BYTES", "FitFailed", "UsageError", "json_arg",
           "settings_of"]

EXIT_USAGE = 2
#: what an option's @file may hold: a whole `identify --json` result, the largest thing an
#: option takes, is about 100 kB
MAX_OPTION_FILE_BYTES = 1 << 20


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


class FitFailed(Exception):
    """A fit that failed numerically (a singular matrix, an overflow): one line naming the
    capture and what to try, exit status 1."""


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings a command runs with: defaults < --config FILE < HILRIG_* environment."""
    return load_settings(args.config)


def json_arg(text: str, option: str) -> Any:
    """The JSON an option was given inline or as @file, refused in one line when it cannot
    be read (a @file: a regular file of at most MAX_OPTION_FILE_BYTES, read no further),
    nests deeper than MAX_NESTING or is not JSON."""
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            text = read_small_file(path, MAX_OPTION_FILE_BYTES).decode("utf-8")
        except OSError as exc:
            raise UsageError(f"{option}: cannot read {path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"{option}: cannot read {path}: not UTF-8 text") from None
        except ValueError as exc:  # a FIFO, a device, a file far larger than any option
            raise UsageError(f"{option}: cannot read {path}: {exc}") from None
    if json_nesting(text.encode()) > MAX_NESTING:
        raise UsageError(f"{option}: nested too deeply (more than {MAX_NESTING} levels)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{option}: not valid JSON: {exc.msg} at column {exc.colno}") from None
