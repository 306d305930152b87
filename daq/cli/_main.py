"""`hilrig`'s entry point: parse, run the command's handler, turn failures into one line.

Usage errors and bad input exit with status 2 and one line naming the problem;
failures while running (a broker, a port) exit with 1.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable

from ._parser import build_parser
from ._usage import EXIT_USAGE, UsageError

__all__ = ["main"]

Handler = Callable[[argparse.Namespace], int]


def _handler(name: str) -> Handler:
    module, function = name.split(":")
    handler: Handler = getattr(importlib.import_module(f"{__package__}.{module}"), function)
    return handler


def _exit_code(exc: Exception) -> int | None:
    """Status 2 for bad input, 1 for what failed while running, None for a bug."""
    from ..config import ConfigError
    from ..runtime import PlanError
    from ..storage import CaptureFileError, CatalogError

    if isinstance(exc, UsageError | ConfigError | CaptureFileError | CatalogError | PlanError
                  | FileExistsError):
        return EXIT_USAGE
    if isinstance(exc, ConnectionError):
        return 1
    return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    for noisy in ("amqtt", "transitions", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return _handler(args.handler)(args)
    except Exception as exc:
        code = _exit_code(exc)
        if code is None:
            raise
        hint = "; use --force to overwrite" if isinstance(exc, FileExistsError) else ""
        print(f"hilrig: error: {exc}{hint}", file=sys.stderr)
        return code
