"""Logs that stay readable when a library repeats itself: at most a few lines per minute
from any one place in a library, each one line.

A client of the embedded broker that never acknowledges made amqtt log 1,835 lines, 917
of them with a traceback, in 15 s; a process out of descriptors made asyncio log
"socket.accept() out of system resource" until 426 MB of log filled the disk. From the
libraries named here, a log statement (one place in their code) is shown at most `burst`
times per `window_s`; what it said meanwhile is counted and the count said with its next
line; its traceback, if any, is cut to the exception's one line. hilrig's own records
pass untouched.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..config import one_line

__all__ = ["LIBRARIES", "LibraryLogLimit", "limit_library_logs"]

#: loggers of the libraries whose repetition is held back
LIBRARIES = ("amqtt", "asyncio", "websockets", "transitions", "paho", "aiomqtt", "distributed",
             "tornado")


@dataclass
class _Site:
    since: float  # the window's start
    shown: int = 0  # lines shown in this window
    held: int = 0  # lines not shown since the last shown


class LibraryLogLimit(logging.Filter):
    """A handler's filter: library records limited per call site (module docstring)."""

    def __init__(self, burst: int = 5, window_s: float = 60.0,
                 libraries: tuple[str, ...] = LIBRARIES) -> None:
        super().__init__()
        self.burst, self.window_s, self.libraries = burst, window_s, libraries
        self._sites: dict[tuple[str, int], _Site] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.split(".")[0] not in self.libraries:
            return True
        now = time.monotonic()
        key = (record.pathname, record.lineno)
        site = self._sites.get(key)
        if site is None or now - site.since >= self.window_s:
            site = self._sites[key] = _Site(now, held=site.held if site else 0)
            if len(self._sites) > 1000:  # many places: forget the oldest windows
                for old in sorted(self._sites, key=lambda k: self._sites[k].since)[:500]:
                    if old != key:
                        del self._sites[old]
        if site.shown >= self.burst:
            site.held += 1
            return False
        site.shown += 1
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f": {type(exc).__name__}: {exc}"
        if site.held:
            text += f" ({site.held} more like this not shown)"
            site.held = 0
        if site.shown == self.burst:
            text += f" (more like this within {self.window_s:g} s are counted, not shown)"
        record.msg, record.args = one_line(text), ()
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def limit_library_logs(handlers: Sequence[logging.Handler]) -> None:
    """Put the limit on `handlers` (the ones the command set up: a host's own, a test
    runner's say, are left as they are)."""
    for handler in handlers:
        if not any(isinstance(f, LibraryLogLimit) for f in handler.filters):
            handler.addFilter(LibraryLogLimit())
