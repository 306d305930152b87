"""A fit that fails inside numpy or scipy is one line naming the capture and what to try.

Input that passed every check can still defeat a fit: a singular matrix, an overflow.
That is a failure of the run (FitFailed, exit status 1), said in the project's words;
numpy's warnings on the way there go with it. identify's own ValueError says what the
capture lacks (too short, no free swing): bad input, exit status 2, as before.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ._usage import FitFailed, UsageError

__all__ = ["fit_guard"]

_NUMERICS = ("numpy", "scipy")


def _raised_in_numerics(exc: BaseException) -> bool:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    module = tb.tb_frame.f_globals.get("__name__", "") if tb is not None else ""
    return str(module).split(".")[0] in _NUMERICS


@contextmanager
def fit_guard(path: str, hint: str) -> Iterator[None]:
    """Run a fit of the capture at `path`: a numerical failure becomes FitFailed naming
    it and `hint` (what to try), identify's own ValueError a UsageError naming it. The
    warnings the fit raised are shown once it succeeded, dropped if it failed."""
    with warnings.catch_warnings(record=True) as caught:
        try:
            yield
        except (np.linalg.LinAlgError, ArithmeticError) as exc:
            raise FitFailed(_failed(path, exc, hint)) from None
        except ValueError as exc:
            if _raised_in_numerics(exc):
                raise FitFailed(_failed(path, exc, hint)) from None
            raise UsageError(f"{path}: {_one_line(exc)}") from None
    for w in caught:
        warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _failed(path: str, exc: BaseException, hint: str) -> str:
    return f"{path}: the fit failed numerically ({_one_line(exc)}); {hint}"
