"""How a capture file fails: one error type, one line naming the file (and the line)."""

from __future__ import annotations

__all__ = ["CaptureFileError", "one_line_text"]


class CaptureFileError(ValueError):
    """A capture file problem, with a one-line message naming the file (and line)."""


def one_line_text(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
