"""A chain rig's part of the notebook API (single, nlink:N): a Record of absolute link
angles with the ChainRig that says how to fit it, by the recommended estimator."""

from __future__ import annotations

from pathlib import Path

from hilrig.identify import (
    DEFAULT_METHOD,
    ChainRig,
    IdentificationResult,
    Progress,
    Record,
    RigParams,
    identify_chain,
)
from hilrig.identify.signal import chain_angles

from ..acquisition import Capture, to_record
from ..storage import CaptureLimits, read_joint_csv
from ._kind import Arrays, DataKind, Prepared, RigSpec, check_convention

__all__ = ["CHAIN"]


def _rig(rig: RigSpec, joints: int, tilt_deg: float | None,
         friction_law: str | None) -> ChainRig:
    """The ChainRig `rig` gives (a kind's name or a ChainRig; None: the data's joints say)
    amended by tilt_deg and friction_law, refused where it names another rig or another
    number of links."""
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


def _from_capture(capture: Capture, rig: RigSpec, tilt_deg: float | None,
                  friction_law: str | None) -> Prepared:
    record, recorded = to_record(capture)
    given = recorded if rig is None or isinstance(rig, str) and rig == recorded.kind else rig
    return Prepared(record, CHAIN, _rig(given, record.joints, tilt_deg, friction_law))


def _from_data(record: Record, rig: RigSpec, tilt_deg: float | None,
               friction_law: str | None) -> Prepared:
    return Prepared(record, CHAIN, _rig(rig, record.joints, tilt_deg, friction_law))


def _from_csv(path: Path, rig: RigSpec, unit: str | None, zero: str | None,
              tilt_deg: float | None, friction_law: str | None,
              limits: CaptureLimits | None) -> Prepared:
    table = read_joint_csv(path, unit=unit, zero=zero, limits=limits)
    record = Record(angles=table.angles, sample_index=table.sample_index,
                    rate_hz=table.rate_hz, t0_s=float(table.t[0]), capture_id=path.stem)
    return _from_data(record, rig, tilt_deg, friction_law)


def _from_arrays(a: Arrays, _rig_spec: RigSpec) -> Record:
    zero = a.zero or "upright"
    check_convention(a, tuple(f"theta{j + 1}" for j in range(a.angles.shape[1])), zero, None)
    return Record(angles=chain_angles(a.angles, a.unit, zero), sample_index=a.sample_index,
                  rate_hz=a.rate_hz, t0_s=a.t0_s, capture_id=a.capture_id)


def _fit(p: Prepared, method: str, progress: Progress | None) -> IdentificationResult:
    assert isinstance(p.data, Record) and p.rig is not None  # (as every _from_* makes it)
    if method != DEFAULT_METHOD:
        raise ValueError(f"method {method} is for the Furuta rig; a {p.rig.kind} rig is "
                         f"identified by {DEFAULT_METHOD}")
    return identify_chain(p.data, p.rig, progress=progress)


CHAIN = DataKind(
    name="chain", data_type=Record, from_capture=_from_capture, from_data=_from_data,
    from_csv=_from_csv, from_arrays=_from_arrays, fit=_fit,
    numerical_hint="check the angles' unit and zero, the rig's tilt, or try another "
                   "friction_law")
