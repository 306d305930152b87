"""What the notebook API asks of a rig kind: its data from each source, and its fit.

Each of the estimator's rig kinds (identify.model.rig_family: furuta, chain) supplies one
DataKind; `prepared`, `read`, `from_arrays` and `fit` find the kind (the capture's, the
data's, or the one `rig` names) and call its part, never branching on a kind's name.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hilrig.identify import (
    ChainRig,
    IdentificationResult,
    Measurement,
    Progress,
    Record,
    RigParams,
    rig_family,
)
from hilrig.identify.signal import angle_convention_problem

from ..acquisition import Capture
from ..storage import CaptureLimits

__all__ = ["Arrays", "DataKind", "Prepared", "RigSpec", "Source", "check_convention",
           "family_of"]

#: a rig as the API takes it: a kind's name ("furuta", "single", "nlink:2"), the Furuta
#: rig's parameters, or a chain rig's description; None: what the data say
RigSpec = str | RigParams | ChainRig | None
Source = str | os.PathLike[str] | Capture | Measurement | Record


def family_of(rig: RigSpec) -> str | None:
    """The estimator's rig kind `rig` names (None: it names none, the data say)."""
    if rig is None:
        return None
    if isinstance(rig, RigParams):
        return "furuta"
    return rig_family(rig.kind if isinstance(rig, ChainRig) else rig)


@dataclass(frozen=True)
class Arrays:
    """from_arrays' angles (n, joints) on their sample grid, as given (unit, zero)."""

    angles: np.ndarray
    sample_index: np.ndarray
    rate_hz: float
    t0_s: float
    unit: str
    zero: str | None
    capture_id: str | None


def check_convention(a: Arrays, names: tuple[str, ...], zero: str,
                     hanging: list[bool] | None) -> None:
    """A ValueError with the likely fix where the angles cannot be a.unit from `zero`, as
    a CSV is checked (identify.signal.angle_convention_problem)."""
    problem = angle_convention_problem(a.angles, names, a.rate_hz, a.unit, zero, hanging)
    if problem is None:
        return
    fix = " ".join(f"{k}={v!r}" for k, v in (("unit", problem.unit), ("zero", problem.zero))
                   if v)
    raise ValueError(f"from_arrays: {problem.message}" + (f"; try {fix}" if fix else ""))


@dataclass(frozen=True)
class Prepared:
    """The data as one rig kind's estimator takes them, and the kind that fits them."""

    data: Measurement | Record
    kind: DataKind
    #: what the kind's fit is told of the rig beyond the data (a chain's ChainRig)
    rig: ChainRig | None = None

    def fit(self, method: str, progress: Progress | None) -> IdentificationResult:
        return self.kind.fit(self, method, progress)


@dataclass(frozen=True)
class DataKind:
    """One rig kind's part of the notebook API."""

    #: the estimator's rig kind (identify.model.rig_family)
    name: str
    #: the in-memory data of the kind (read and from_arrays give it, fit takes it)
    data_type: type
    #: a capture of the kind, with the rig, tilt (deg) and friction law the caller gave
    from_capture: Callable[[Capture, RigSpec, float | None, str | None], Prepared]
    #: data of data_type, with the same
    from_data: Callable[[Any, RigSpec, float | None, str | None], Prepared]
    #: a CSV file of the kind: (path, rig, unit, zero, tilt, friction law, limits)
    from_csv: Callable[[Path, RigSpec, str | None, str | None, float | None, str | None,
                        CaptureLimits | None], Prepared]
    #: arrays as the kind's data, their unit and zero checked
    from_arrays: Callable[[Arrays, RigSpec], Measurement | Record]
    #: identify prepared data with `method` (checked against the identify's method names)
    fit: Callable[[Prepared, str, Progress | None], IdentificationResult]
    #: what to try when the kind's fit fails numerically
    numerical_hint: str
