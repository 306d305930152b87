"""The Furuta rig's part of the notebook API: a Measurement of arm and pendulum, fitted by
any of identify's methods."""

from __future__ import annotations

from pathlib import Path

from hilrig.identify import IdentificationResult, Measurement, Progress, RigParams, identify
from hilrig.identify.signal import furuta_angles

from ..acquisition import Capture, to_measurement
from ..storage import CaptureLimits, read_capture
from ._kind import Arrays, DataKind, Prepared, RigSpec, check_convention, family_of

__all__ = ["FURUTA"]


def _checked(rig: RigSpec, what: str) -> RigParams | None:
    """The rig's parameters `rig` gives (None: the data's own), refused where it names
    another kind of rig."""
    if family_of(rig) not in (None, "furuta"):
        raise ValueError(f"{what} is of the Furuta rig, not {rig}")
    return rig if isinstance(rig, RigParams) else None


def _with(m: Measurement, params: RigParams | None, tilt_deg: float | None) -> Measurement:
    params = params or m.rig
    if tilt_deg is not None:
        params = params.model_copy(update={"tilt_deg": tilt_deg})
    return m if params is m.rig else Measurement(
        angles=m.angles, sample_index=m.sample_index, rate_hz=m.rate_hz, rig=params,
        resolution_rad=m.resolution_rad, capture_id=m.capture_id, t0_s=m.t0_s)


def _from_capture(capture: Capture, rig: RigSpec, tilt_deg: float | None,
                  _friction_law: str | None) -> Prepared:
    params = _checked(rig, f"capture {capture.capture_id}")
    return Prepared(_with(to_measurement(capture), params, tilt_deg), FURUTA)


def _from_data(m: Measurement, rig: RigSpec, tilt_deg: float | None,
               _friction_law: str | None) -> Prepared:
    return Prepared(_with(m, _checked(rig, "a Measurement"), tilt_deg), FURUTA)


def _from_csv(path: Path, rig: RigSpec, unit: str | None, zero: str | None,
              tilt_deg: float | None, friction_law: str | None,
              limits: CaptureLimits | None) -> Prepared:
    # (a CSV of t,theta0,theta1 is read as a capture, its unit and zero checked there)
    return _from_capture(read_capture(path, limits=limits, unit=unit, zero=zero), rig,
                         tilt_deg, friction_law)


def _from_arrays(a: Arrays, rig: RigSpec) -> Measurement:
    if a.angles.shape[1] != 2:
        raise ValueError(f"from_arrays: the Furuta rig has 2 joints (arm, pendulum), the "
                         f"angles have {a.angles.shape[1]}; a chain rig is rig='single' or "
                         "'nlink:N'")
    zero = a.zero or "hanging"
    check_convention(a, ("arm", "pendulum"), zero, [False, True])
    return Measurement(angles=furuta_angles(a.angles, a.unit, zero),
                       sample_index=a.sample_index, rate_hz=a.rate_hz, t0_s=a.t0_s,
                       capture_id=a.capture_id,
                       rig=rig if isinstance(rig, RigParams) else RigParams())


def _fit(p: Prepared, method: str, progress: Progress | None) -> IdentificationResult:
    assert isinstance(p.data, Measurement)  # (from_capture and from_data make one)
    return identify(p.data, method=method, progress=progress)


FURUTA = DataKind(
    name="furuta", data_type=Measurement, from_capture=_from_capture, from_data=_from_data,
    from_csv=_from_csv, from_arrays=_from_arrays, fit=_fit,
    numerical_hint="check the angles' unit and zero and the rig's parameters, or try "
                   "another method")
