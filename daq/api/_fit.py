"""fit: identify a capture, a CSV or arrays with any method, as `hilrig identify` does."""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from hilrig.identify import (
    DEFAULT_METHOD,
    METHOD_NAMES,
    IdentificationResult,
    Progress,
)

from ._data import RigSpec, Source, prepared

__all__ = ["FitError", "fit"]


class FitError(RuntimeError):
    """A fit that failed numerically, in one line naming the data and what to try."""


class _TextProgress:
    """Progress on one line of stderr, ended by end() where anything was shown."""

    def __init__(self, label: str) -> None:
        self.label, self.shown = label, False

    def __call__(self, fraction: float, message: str) -> None:
        self.shown = True
        print(f"\r{self.label}: {100 * fraction:3.0f} % {message[:60]:<60}", end="",
              file=sys.stderr, flush=True)

    def end(self) -> None:
        if self.shown:
            print(file=sys.stderr)


def fit(source: Source, *, method: str = DEFAULT_METHOD, rig: RigSpec = None,
        unit: str | None = None, zero: str | None = None, tilt_deg: float | None = None,
        friction_law: str | None = None,
        progress: bool | Callable[[float, str], None] = False) -> IdentificationResult:
    """Identify `source`: a capture file (.h5), a CSV, a Capture, or what `read` and
    `from_arrays` give.

    method: any of identify's methods for the Furuta rig (default the recommended
    estimator, which picks its friction law from the data); a chain rig has that one.
    rig: "furuta", "single", "nlink:N", RigParams or ChainRig, else what the data say;
    tilt_deg and friction_law ("auto", "coulomb-viscous", ...; chain rigs) amend it.
    progress: True shows it on stderr, or a callable(fraction, message).

    The result's repr is one line and Jupyter shows its table; to_dataframe() gives the
    estimates with their 95 % intervals, to_dataframe("response") the fitted response.
    Bad input is a ValueError (CaptureFileError for a file) before any fitting; a fit
    that fails numerically a FitError.
    """
    if method not in METHOD_NAMES:
        raise ValueError(f"unknown identification method {method!r}; choose from "
                         f"{', '.join(METHOD_NAMES)}")
    data = prepared(source, rig=rig, unit=unit, zero=zero, tilt_deg=tilt_deg,
                    friction_law=friction_law)
    name = data.data.capture_id or "the data"
    text = _TextProgress(f"fit {name}") if progress is True else None
    show: Progress | None = text or (progress if callable(progress) else None)
    try:
        return data.fit(method, show)
    except (np.linalg.LinAlgError, ArithmeticError) as exc:
        raise FitError(f"{name}: the fit failed numerically "
                       f"({' '.join(str(exc).split()) or type(exc).__name__}); "
                       f"{data.kind.numerical_hint}") from None
    finally:
        if text is not None:
            text.end()
