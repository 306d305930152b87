"""`hilrig`'s entry point: parse, run the command's handler, turn failures into one line.

Usage errors and bad input exit with status 2 and one line naming the problem;
failures while running (a broker, a port, a fit that fails numerically) exit with 1.
Ctrl-C ends any command with "hilrig: interrupted" and status 130, a service manager's
SIGTERM with "hilrig: stopped" and 143 (128 + the signal, as a shell reports it); both
unwind the command as an exception does, so files are closed and nothing is left
half-written (writes are atomic).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import signal
import sys
from collections.abc import Callable
from types import FrameType

from ._log_limits import limit_library_logs
from ._parser import build_parser
from ._usage import EXIT_USAGE, FitFailed, Stopped, UsageError, set_quiet

__all__ = ["main", "run"]

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
    if isinstance(exc, ConnectionError | FitFailed):
        return 1
    return None


def _interrupted(exc: KeyboardInterrupt) -> int:
    stopped = isinstance(exc, Stopped)
    print(f"hilrig: {'stopped' if stopped else 'interrupted'}", file=sys.stderr)
    return 143 if stopped else 130


def _interrupt_inside(exc: BaseException) -> KeyboardInterrupt | None:
    """A Ctrl-C or stop that a library wrapped in its own error (numba does, when one
    lands during a compile): the interrupt, or None."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise Stopped


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
    # the terminal is a status display: warnings as they happen, the rest with --verbose
    before = set(logging.getLogger().handlers)
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    else:
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr, datefmt="%H:%M:%S",
                            format="%(asctime)s %(levelname)s: %(message)s")
    limit_library_logs([h for h in logging.getLogger().handlers if h not in before])
    set_quiet(args.quiet)
    for noisy in ("amqtt", "transitions", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return _handler(args.handler)(args)
    except BrokenPipeError:
        # the reader went away (`hilrig captures show X | head`): nothing more to say; the
        # interpreter's own flush at exit must not fail either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except Exception as exc:
        inner = _interrupt_inside(exc)
        if inner is not None:
            return _interrupted(inner)
        code = _exit_code(exc)
        if code is None:
            raise
        hint = "; use --force to overwrite" if isinstance(exc, FileExistsError) else ""
        print(f"hilrig: error: {exc}{hint}", file=sys.stderr)
        return code


def run(argv: list[str] | None = None) -> int:
    """The `hilrig` command's process: main(), then the collector frozen, so the
    interpreter's closing collections over everything numba and scipy loaded are skipped.
    That is safe only in a process about to end: the command has closed its files
    (writes are atomic) and what is still alive goes with the process. Callers whose
    process goes on call main()."""
    code = main(argv)
    gc.freeze()
    return code
