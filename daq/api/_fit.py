"""fit: identify a capture, a CSV or arrays with any method, as `hilrig identify` does."""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from hilrig.identify import (
    DEFAULT_METHOD,
    METHOD_NAMES,
    IdentificationResult,
    Measurement,
    Progress,
    identify,
    identify_chain,
)

from ._data import RigSpec, Source, prepared

__all__ = ["FitError", "fit"]


class FitError(RuntimeError):
    """A fit that failed numerically, in one line naming the data and what to try."""


def _text_progress(label: str) -> Progress:
    def show(fraction: float, message: str) -> None:
        print(f"\r{label}: {100 * fraction:3.0f} % {message[:60]:<60}", end="",
              file=sys.stderr, flush=True)
    return show


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
    if data.chain is not None and method != DEFAULT_METHOD:
        raise ValueError(f"method {method} is for the Furuta rig; a {data.chain.kind} rig is "
                         f"identified by {DEFAULT_METHOD}")
    name = data.data.capture_id or "the data"
    show = _text_progress(f"fit {name}") if progress is True else progress or None
    try:
        if isinstance(data.data, Measurement):
            return identify(data.data, method=method, progress=show)
        assert data.chain is not None  # a Record is always prepared with its chain rig
        return identify_chain(data.data, data.chain, progress=show)
    except (np.linalg.LinAlgError, ArithmeticError) as exc:
        hint = ("check the angles' unit and zero, the rig's tilt, or try another "
                "friction_law" if data.chain else "check the angles' unit and zero and the "
                "rig's parameters, or try another method")
        raise FitError(f"{name}: the fit failed numerically "
                       f"({' '.join(str(exc).split()) or type(exc).__name__}); {hint}") from None
    finally:
        if progress is True:
            print(file=sys.stderr)
