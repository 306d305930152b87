"""The terminal as a status display: one live line, redrawn in place, under the lines that
stay (a capture finished, a result, a warning).

On a terminal the last line is the rig's state (idle, armed, recording with its elapsed
time and samples), the link's health and the session's n of N with its ETA, redrawn at
most 4 times a second; every line that stays is printed above it. Piped to a file there
is no live line: the session's progress is a line per change, as a log should be.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any, TextIO

__all__ = ["StatusLine", "rig_status_text"]


class StatusLine:
    """say(text): a line that stays; show(part, text): a part of the live line."""

    REDRAW_S = 0.25

    def __init__(self, stream: TextIO | None = None, tty: bool | None = None) -> None:
        self._stream = stream  # None: the sys.stdout in use at each write
        self.tty = self.stream.isatty() if tty is None else tty
        self.parts: dict[str, str] = {}
        self._drawn = False
        self._last = 0.0

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stdout

    def say(self, text: str) -> None:
        self._clear()
        self.stream.write(text + "\n")
        self._draw(force=True)

    def show(self, part: str, text: str) -> None:
        """Set one part of the live line ("rig", "link", "session"); "" removes it."""
        if text:
            self.parts[part] = text
        else:
            self.parts.pop(part, None)
        self._draw()

    def close(self) -> None:
        self._clear()
        self.stream.flush()

    def _line(self) -> str:
        text = " | ".join(self.parts[k] for k in ("rig", "link", "session") if k in self.parts)
        width = shutil.get_terminal_size((100, 20)).columns - 1
        return text[:width]

    def _clear(self) -> None:
        if self.tty and self._drawn:
            self.stream.write("\r\x1b[K")
            self._drawn = False

    def _draw(self, force: bool = False) -> None:
        if not self.tty or not self.parts:
            self.stream.flush()
            return
        now = time.monotonic()
        if not force and now - self._last < self.REDRAW_S:
            return
        self._last = now
        self.stream.write("\r\x1b[K" + self._line())
        self.stream.flush()
        self._drawn = True


def rig_status_text(status: dict[str, Any]) -> str:
    """The rig's part of the live line from a policy's status (state, capture, samples)."""
    state = status.get("state", "?")
    if state == "recording":
        return (f"recording {status.get('capture_id')}: {status.get('duration_s', 0.0):.1f} s, "
                f"{status.get('samples', 0):,} samples")
    return f"rig {state}"
