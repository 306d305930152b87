"""What identification takes, from a file, a capture or arrays: a Furuta rig's
Measurement, or a chain rig's Record with the ChainRig that says how to fit it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hilrig.identify import ChainRig, Measurement, Record, RigParams, rig_family
from hilrig.identify.signal import angle_convention_problem, chain_angles, furuta_angles

from ..acquisition import Capture, kind_of, to_measurement, to_record
from ..storage import CaptureLimits, read_capture, read_joint_csv

__all__ = ["Prepared", "RigSpec", "from_arrays", "prepared", "read"]

#: a rig as the API takes it: a kind's name ("furuta", "single", "nlink:2"), the Furuta
#: rig's parameters, or a chain rig's description; None: what the data say
RigSpec = str | RigParams | ChainRig | None
Source = str | os.PathLike[str] | Capture | Record


@dataclass(frozen=True)
class Prepared:
    """The data as one rig kind's estimator takes them."""

    data: Measurement | Record
    chain: ChainRig | None  # None: the Furuta rig (data is a Measurement)


def _chain_rig(rig: RigSpec, joints: int, tilt_deg: float | None,
               friction_law: str | None) -> ChainRig:
    if isinstance(rig, RigParams):
        raise ValueError(f"rig: RigParams describe the Furuta rig; these data hold {joints} "
                         "link(s) of a chain (say rig='single' or 'nlink:N')")
    base = rig if isinstance(rig, ChainRig) else ChainRig(
        kind=rig or ("single" if joints == 1 else f"nlink:{joints}"))
    update = {k: v for k, v in (("tilt_deg", tilt_deg), ("friction", friction_law))
              if v is not None}
    chain = ChainRig(**{**base.model_dump(), **update}) if update else base
    if chain.links != joints:
        raise ValueError(f"rig {chain.kind} has {chain.links} link(s); the data hold {joints}")
    return chain


def _is_chain(rig: RigSpec) -> bool:
    if rig is None or isinstance(rig, RigParams):
        return False
    kind = rig.kind if isinstance(rig, ChainRig) else rig
    return rig_family(kind) == "chain"


def _furuta(m: Measurement, rig: RigSpec, tilt_deg: float | None) -> Measurement:
    params = rig if isinstance(rig, RigParams) else m.rig
    if tilt_deg is not None:
        params = params.model_copy(update={"tilt_deg": tilt_deg})
    return m if params is m.rig else Measurement(
        angles=m.angles, sample_index=m.sample_index, rate_hz=m.rate_hz, rig=params,
        resolution_rad=m.resolution_rad, capture_id=m.capture_id, t0_s=m.t0_s)


def _of_capture(capture: Capture, rig: RigSpec, tilt_deg: float | None,
                friction_law: str | None) -> Prepared:
    if kind_of(capture.kind).family == "chain":
        record, recorded = to_record(capture)
        given = recorded if rig is None or isinstance(rig, str) and rig == recorded.kind \
            else rig
        return Prepared(record, _chain_rig(given, record.joints, tilt_deg, friction_law))
    if _is_chain(rig):
        raise ValueError(f"capture {capture.capture_id} is of the Furuta rig, not {rig}")
    return Prepared(_furuta(to_measurement(capture), rig, tilt_deg), None)


def prepared(source: Source, *, rig: RigSpec = None, unit: str | None = None,
             zero: str | None = None, tilt_deg: float | None = None,
             friction_law: str | None = None,
             limits: CaptureLimits | None = None) -> Prepared:
    """The source as its rig kind's estimator takes it (see read)."""
    if isinstance(source, Capture):
        return _of_capture(source, rig, tilt_deg, friction_law)
    if isinstance(source, Measurement):
        if _is_chain(rig):
            raise ValueError(f"a Measurement is of the Furuta rig, not {rig}")
        return Prepared(_furuta(source, rig, tilt_deg), None)
    if isinstance(source, Record):
        return Prepared(source, _chain_rig(rig, source.joints, tilt_deg, friction_law))
    path = Path(source)
    if path.suffix.lower() == ".csv" and _is_chain(rig):
        table = read_joint_csv(path, unit=unit, zero=zero, limits=limits)
        record = Record(angles=table.angles, sample_index=table.sample_index,
                        rate_hz=table.rate_hz, t0_s=float(table.t[0]), capture_id=path.stem)
        return Prepared(record, _chain_rig(rig, record.joints, tilt_deg, friction_law))
    if (unit or zero) and path.suffix.lower() != ".csv":
        raise ValueError(f"{path}: unit and zero are a CSV's; a capture file records its own")
    return _of_capture(read_capture(path, limits=limits, unit=unit, zero=zero), rig,
                       tilt_deg, friction_law)


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
    chain = _is_chain(rig)
    zero = zero or ("upright" if chain else "hanging")
    names = tuple(f"theta{j + 1}" for j in range(a.shape[1])) if chain else ("arm", "pendulum")
    if not chain and a.shape[1] != 2:
        raise ValueError(f"from_arrays: the Furuta rig has 2 joints (arm, pendulum), the "
                         f"angles have {a.shape[1]}; a chain rig is rig='single' or 'nlink:N'")
    problem = angle_convention_problem(a, names, rate, unit, zero,
                                       None if chain else [False, True])
    if problem is not None:
        fix = " ".join(f"{k}={v!r}" for k, v in (("unit", problem.unit),
                                                  ("zero", problem.zero)) if v)
        raise ValueError(f"from_arrays: {problem.message}" + (f"; try {fix}" if fix else ""))
    t0 = float(t[0]) if t is not None else 0.0
    if chain:
        return Record(angles=chain_angles(a, unit, zero), sample_index=index, rate_hz=rate,
                      t0_s=t0, capture_id=capture_id)
    params = rig if isinstance(rig, RigParams) else RigParams()
    return Measurement(angles=furuta_angles(a, unit, zero), sample_index=index, rate_hz=rate,
                       t0_s=t0, capture_id=capture_id, rig=params)
