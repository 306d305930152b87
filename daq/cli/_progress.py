"""Progress on a terminal: a bar for long offline work, a line per change of a session."""


from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from ._usage import quiet

__all__ = ["ProgressBar", "duration_text", "session_progress_printer"]


class ProgressBar:
    """Callable as progress(fraction, message), on stderr: on a terminal a bar redrawn in
    place (10 Hz at most); piped, a line each time the stage (the message) changes, so a
    log shows what ran and for how long without a line per tick; work done within
    QUIET_S says nothing there."""

    QUIET_S = 1.0

    def __init__(self, label: str, enabled: bool | None = None, stream: TextIO | None = None,
                 width: int = 30, tty: bool | None = None) -> None:
        stream = stream if stream is not None else sys.stderr  # the one in use now
        self.label, self.stream, self.width = label, stream, width
        self.tty = stream.isatty() if tty is None else tty
        self.enabled = (not quiet()) if enabled is None else enabled
        self._last = 0.0
        self._stage: str | None = None
        self._said = False  # piped: a line went out
        self._start = time.monotonic()

    def __call__(self, fraction: float, message: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        f = min(1.0, max(0.0, fraction))
        if not self.tty:
            # the stage, not its counters ("evaluation 12", "segment 3 of 9")
            stage = re.sub(r"\d+(\.\d+)?", "", message).split(",")[0].strip()
            if stage != self._stage and now - self._start >= self.QUIET_S:
                self._stage = stage
                self._said = True
                self.stream.write(f"{self.label}: {f * 100:3.0f}% {now - self._start:5.1f}s "
                                  f"{message}\n")
                self.stream.flush()
            return
        if now - self._last < 0.1 and fraction < 1.0:
            return
        self._last = now
        filled = int(round(f * self.width))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {f * 100:5.1f}% {now - self._start:5.1f}s "
                          f"{message[:40]:<40}")
        self.stream.flush()

    def close(self) -> None:
        """End the bar: "done", unless an exception is on its way out (close() in a
        finally clause), which the error line then explains."""
        if not self.enabled:
            return
        failed = sys.exc_info()[0] is not None
        if self.tty:
            if not failed:
                self(1.0, "done")
            self.stream.write("\n")
        elif self._said and not failed:
            self(1.0, "done")
        self.stream.flush()


def session_progress_printer(say: Callable[[str], None],
                             live: Callable[[str], None] | None = None
                             ) -> Callable[[dict[str, Any]], None]:
    """A session's progress: a line per change (counts or state) with say, or, with
    `live`, the text of a status line kept up to date."""
    last: list[tuple[Any, ...]] = []

    def show(p: dict[str, Any]) -> None:
        key = (p["state"], p["done"], p["failed"], p["timeout"], p["interrupted"])
        if live is None and last and last[-1] == key:
            return
        last[:] = [key]
        planned = p["planned"]
        width = 20
        if planned:
            filled = round(width * min(1.0, (p["done"] + p["failed"]) / planned))
            bar = "[" + "#" * filled + "-" * (width - filled) + f"] {p['done']}/{planned} done"
        else:
            bar = f"{p['done']} done (until {p['until_utc']})"
        eta = "" if p["eta_s"] is None else f", ETA {duration_text(p['eta_s'])}"
        (live or say)(f"progress {bar}, {p['failed']} failed, {p['timeout']} timed out, "
                      f"{p['interrupted']} interrupted, {p['in_flight']} identifying{eta}, "
                      f"{p['rss_mb']:.0f} MB ({p['state']})")

    return show


def duration_text(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s"
