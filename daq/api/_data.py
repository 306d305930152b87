"""What identification takes, from a file, a capture or arrays: the data as the rig kind's
estimator takes them (a Furuta rig's Measurement, a chain rig's Record with the ChainRig
that says how to fit it). The kind is the capture's, the data's, or the one `rig` names;
each kind's part is its DataKind (._furuta, ._chain)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from hilrig.identify import Measurement, Record

from ..acquisition import Capture, kind_of
from ..storage import CaptureLimits, read_capture
from ._chain import CHAIN
from ._furuta import FURUTA
from ._kind import Arrays, DataKind, Prepared, RigSpec, Source, family_of

__all__ = ["DATA_KINDS", "Prepared", "RigSpec", "from_arrays", "prepared", "read"]

#: each of the estimator's rig kinds (identify.model.RIG_FAMILIES' values) and its part
DATA_KINDS: Mapping[str, DataKind] = {kind.name: kind for kind in (FURUTA, CHAIN)}


def _named(rig: RigSpec) -> DataKind:
    """The kind `rig` names; the Furuta rig where it names none."""
    return DATA_KINDS[family_of(rig) or FURUTA.name]


def prepared(source: Source, *, rig: RigSpec = None, unit: str | None = None,
             zero: str | None = None, tilt_deg: float | None = None,
             friction_law: str | None = None,
             limits: CaptureLimits | None = None) -> Prepared:
    """The source as its rig kind's estimator takes it (see read)."""
    if isinstance(source, Capture):
        kind = DATA_KINDS[kind_of(source.kind).family]
        return kind.from_capture(source, rig, tilt_deg, friction_law)
    for kind in DATA_KINDS.values():
        if isinstance(source, kind.data_type):
            return kind.from_data(source, rig, tilt_deg, friction_law)
    if not isinstance(source, str | os.PathLike):
        raise TypeError(f"source: a capture file's path, a Capture, or what read or "
                        f"from_arrays give, not {type(source).__name__}")
    path = Path(source)
    if path.suffix.lower() == ".csv":
        return _named(rig).from_csv(path, rig, unit, zero, tilt_deg, friction_law, limits)
    if unit or zero:
        raise ValueError(f"{path}: unit and zero are a CSV's; a capture file records its own")
    return prepared(read_capture(path, limits=limits), rig=rig, tilt_deg=tilt_deg,
                    friction_law=friction_law)


def read(source: str | os.PathLike[str], *, rig: RigSpec = None, unit: str | None = None,
         zero: str | None = None, tilt_deg: float | None = None) -> Measurement | Record:
    """A capture file (.h5) or CSV as identification takes it.

    A Furuta capture or CSV (t,theta0,theta1) gives a Measurement: angles (n, 2) in rad,
    arm and pendulum, the pendulum 0 hanging, with `.t` in s and the rig's parameters. A
    chain rig's capture, or a CSV t,theta1[,...] read with rig="single" or "nlink:N",
    gives a Record: absolute link angles, rad from upright. A CSV's angles are in `unit`
    (rad, deg) from `zero` (upright, hanging), else as its `# unit= zero=` comment says;
    angles that cannot be so are refused with the likely fix (CaptureFileError).
    """
    return prepared(source, rig=rig, unit=unit, zero=zero, tilt_deg=tilt_deg).data


def from_arrays(angles: np.ndarray, *, t: np.ndarray | None = None,
                rate_hz: float | None = None, rig: RigSpec = "furuta", unit: str = "rad",
                zero: str | None = None, capture_id: str | None = None
                ) -> Measurement | Record:
    """Angles (n, joints) sampled at `t` (s; gaps allowed) or at `rate_hz`, as `read`
    gives them: the Furuta rig's arm and pendulum (zero "hanging" by default), or a chain
    rig's absolute link angles (rig "single", "nlink:N"; zero "upright" by default).
    Checked as a CSV is: angles that cannot be `unit` from `zero` are a ValueError with
    the likely fix."""
    a = np.asarray(angles, dtype=np.float64)
    a = a[:, None] if a.ndim == 1 else a
    if (t is None) == (rate_hz is None):
        raise ValueError("from_arrays: give the sample times t (s) or rate_hz, not both")
    if t is not None:
        times = np.asarray(t, dtype=np.float64)
        if times.shape != (a.shape[0],):
            raise ValueError(f"from_arrays: t has shape {times.shape}, angles {a.shape}")
        grid = Record.from_times(times, a)  # the sample grid, its gaps as index jumps
        rate, index = grid.rate_hz, grid.sample_index
    else:
        assert rate_hz is not None
        rate, index = float(rate_hz), np.arange(a.shape[0], dtype=np.int64)
    given = Arrays(angles=a, sample_index=index, rate_hz=rate,
                   t0_s=float(t[0]) if t is not None else 0.0, unit=unit, zero=zero,
                   capture_id=capture_id)
    return _named(rig).from_arrays(given, rig)
