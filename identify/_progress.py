"""The progress callback of long-running functions: progress(fraction, message)."""

from __future__ import annotations

from collections.abc import Callable

#: called with the fraction done (0 to 1) and what is being done
Progress = Callable[[float, str], None]


def no_progress(_fraction: float, _message: str) -> None:
    """A Progress that reports nothing (the default when a caller passes none)."""
