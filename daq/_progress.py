"""A terminal progress bar for long offline work, shown only when stdout is a terminal."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Callable as progress(fraction, message); draws on stderr, throttled to 10 Hz."""

    def __init__(self, label: str, enabled: bool | None = None, stream: TextIO = sys.stderr,
                 width: int = 30) -> None:
        self.label, self.stream, self.width = label, stream, width
        self.enabled = sys.stdout.isatty() if enabled is None else enabled
        self._last = 0.0
        self._start = time.monotonic()

    def __call__(self, fraction: float, message: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and fraction < 1.0:
            return
        self._last = now
        f = min(1.0, max(0.0, fraction))
        filled = int(round(f * self.width))
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {f * 100:5.1f}% {now - self._start:5.1f}s "
                          f"{message[:40]:<40}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self(1.0, "done")
            self.stream.write("\n")
            self.stream.flush()
