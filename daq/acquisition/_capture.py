"""A capture: one free decay cut out of the sample stream, as the engine hands it on.

Encoder counts (or, for a CSV import, angles) per sample, the device sample index
(a step > 1 marks lost samples), the rig and source that produced it, and how the
trigger cut it. `storage` writes and reads it as HDF5 or CSV; `to_measurement` turns it
into what `identify` takes.
"""

from __future__ import annotations

import math
import os
import re
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from hilrig.drivers import SourceInfo
from hilrig.identify import (
    SOFTWARE_VERSION,
    Measurement,
    RigParams,
    encoder_quantum,
    utc_now,
)

from ..config import RigKindConfig

__all__ = ["COVARIATE_NAME", "Capture", "TriggerInfo", "capture_resolution", "capture_summary",
           "checked_covariates", "covariate_value", "new_capture_id", "to_measurement"]


#: rates a capture may have: a rig samples at 100 Hz to 100 kHz, imports may differ
MIN_RATE_HZ, MAX_RATE_HZ = 1.0, 1e6
#: imported angles beyond this (about 160,000 turns) are no measurement of a joint
MAX_ANGLE_RAD = 1e6


def new_capture_id() -> str:
    """Sortable and unique: UTC time plus a random suffix."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


class TriggerInfo(BaseModel):
    """How the trigger cut the capture out of the stream (device sample indices).

    All fields are optional: captures imported from CSV have none of them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    trigger_index: int | None = None  # sample at which motion crossed the threshold
    onset_index: int | None = None  # first sample off the rest band
    release_estimate: float | None = None  # fitted release moment (fractional sample index)
    start_index: int | None = None  # first sample kept (pre-trigger history included)
    end_index: int | None = None  # one past the last sample kept
    end_reason: str | None = None  # "settled", "max_duration", ...
    started_utc: str | None = None  # ISO 8601 wall-clock time of the trigger


#: a recorded covariate's name: lower case, digits and underscores, the unit last
COVARIATE_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def checked_covariates(covariates: Any) -> dict[str, float]:
    """`covariates` as {name: finite float}, or a one-line ValueError naming the entry."""
    if not isinstance(covariates, dict):
        raise ValueError(f"covariates must be a mapping of names to numbers, got "
                         f"{type(covariates).__name__}")
    out = {}
    for name, value in covariates.items():
        if not (isinstance(name, str) and COVARIATE_NAME.fullmatch(name)):
            raise ValueError(f"covariate name {name!r}: lower case letters, digits and "
                             f"underscores, starting with a letter (temperature_c)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise ValueError(f"covariate {name}: {value!r} is not a finite number")
        out[name] = float(value)
    return out


def covariate_value(covariates: dict[str, float], name: str) -> float:
    """The covariate `name` of a capture's `covariates`; a one-line ValueError saying what
    it records instead."""
    if name not in covariates:
        raise ValueError(f"records no covariate {name!r} (it records: "
                         f"{', '.join(sorted(covariates)) or 'none'})")
    return covariates[name]


@dataclass(frozen=True, kw_only=True, eq=False)
class Capture:
    """One free-decay capture: either encoder counts or (CSV imports) angles, per sample.

    Construct with keywords. Exactly one of `counts` and `imported_angles_rad` is given;
    read angles through `angles_rad` whichever it is. Arrays are validated and
    normalised (sample_index to int64) but not copied when already right.
    """

    capture_id: str
    sample_index: np.ndarray  # int64 (n,), strictly increasing device sample counter
    counts: np.ndarray | None  # int32 (n, 2): arm, pendulum; None for angle imports
    sample_rate_hz: float
    counts_per_rev: tuple[int, int]
    rig: RigParams
    source: SourceInfo
    trigger: TriggerInfo = field(default_factory=TriggerInfo)
    software_version: str = SOFTWARE_VERSION
    created_utc: str = field(default_factory=utc_now)
    imported_angles_rad: np.ndarray | None = None  # float64 (n, 2), only without counts
    kind: RigKindConfig | None = None  # which rig the channels are on; None: the Furuta rig
    #: conditions recorded with the capture (a lab's temperature, say: temperature_c), which
    #: a session's friction can be pooled against instead of its hours
    covariates: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        si = np.asarray(self.sample_index)
        # can_cast: any integer type that fits int64 losslessly (not uint64).
        if (si.ndim != 1 or si.dtype.kind not in "iu" or not np.can_cast(si.dtype, np.int64)
                or si.shape[0] < 1):
            raise ValueError(f"sample_index must be a non-empty 1-D integer array, got "
                             f"{si.dtype} {si.shape}")
        si = si.astype(np.int64, copy=False)
        if si.shape[0] > 1 and not bool(np.all(np.diff(si) > 0)):
            k = int(np.argmax(np.diff(si) <= 0)) + 1
            raise ValueError(f"sample_index must increase strictly (row {k}: "
                             f"{si[k]} after {si[k - 1]})")
        object.__setattr__(self, "sample_index", si)
        n = si.shape[0]
        if (self.counts is None) == (self.imported_angles_rad is None):
            raise ValueError("exactly one of counts and imported_angles_rad must be given")
        if self.counts is not None:
            c = self.counts
            if not isinstance(c, np.ndarray) or c.dtype != np.int32 or c.shape != (n, 2):
                raise ValueError(f"counts must be int32 ({n}, 2), got "
                                 f"{getattr(c, 'dtype', type(c))} {getattr(c, 'shape', '')}")
        else:
            a = self.imported_angles_rad
            if not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.shape != (n, 2):
                raise ValueError(f"imported_angles_rad must be float64 ({n}, 2), got "
                                 f"{getattr(a, 'dtype', type(a))} {getattr(a, 'shape', '')}")
            if not bool(np.all(np.isfinite(a))):
                raise ValueError("imported_angles_rad must be finite")
            if a.size and float(np.abs(a).max()) > MAX_ANGLE_RAD:
                raise ValueError(f"an angle of {float(np.abs(a).max()):.3g} rad: more than "
                                 f"{MAX_ANGLE_RAD:g} rad is no joint angle")
        rate = float(self.sample_rate_hz)
        if not (math.isfinite(rate) and MIN_RATE_HZ <= rate <= MAX_RATE_HZ):
            raise ValueError(f"sample_rate_hz must lie in [{MIN_RATE_HZ:g}, {MAX_RATE_HZ:g}] Hz, "
                             f"got {self.sample_rate_hz}")
        object.__setattr__(self, "sample_rate_hz", rate)
        cpr = tuple(int(x) for x in self.counts_per_rev)
        if len(cpr) != 2 or min(cpr) < 1:
            raise ValueError(f"counts_per_rev must be two positive integers, got "
                             f"{self.counts_per_rev}")
        object.__setattr__(self, "counts_per_rev", cpr)
        object.__setattr__(self, "covariates", checked_covariates(self.covariates))

    def __len__(self) -> int:
        return int(self.sample_index.shape[0])

    @property
    def angles_rad(self) -> np.ndarray:
        """Joint angles float64 (n, 2), radians. Computed anew from counts on each call."""
        if self.counts is None:
            assert self.imported_angles_rad is not None  # guaranteed by __post_init__
            return self.imported_angles_rad
        scale = np.array([2.0 * math.pi / c for c in self.counts_per_rev])
        return self.counts * scale

    def times(self) -> np.ndarray:
        """Seconds since the first sample, from sample_index: lost samples show as jumps."""
        return (self.sample_index - self.sample_index[0]) / self.sample_rate_hz

    def gaps(self) -> list[tuple[int, int]]:
        """Lost samples as (first missing sample index, number missing), in order."""
        step = np.diff(self.sample_index)
        at = np.flatnonzero(step > 1)
        return [(int(self.sample_index[k]) + 1, int(step[k]) - 1) for k in at]

    @property
    def duration_s(self) -> float:
        """Time from the first to the last sample (350,001 samples at 10 kHz: 35.0 s)."""
        return float(self.sample_index[-1] - self.sample_index[0]) / self.sample_rate_hz


def capture_summary(capture: Capture, path: Path) -> dict[str, Any]:
    """What a capture record says of a capture: sizes, losses, trigger moments, its file."""
    idx = capture.sample_index
    expected = int(idx[-1] - idx[0] + 1)
    trig = capture.trigger
    rate = capture.sample_rate_hz
    return {
        "capture_id": capture.capture_id,
        "file": os.fspath(path),
        "samples": int(idx.size),
        "lost_samples": expected - int(idx.size),
        "gaps": len(capture.gaps()),
        "duration_s": capture.duration_s,
        "sample_rate_hz": rate,
        "start_index": int(idx[0]),
        "end_index": int(idx[-1]) + 1,
        "trigger_index": trig.trigger_index,
        "onset_index": trig.onset_index,
        "release_estimate": trig.release_estimate,
        "pre_trigger_s": (None if trig.onset_index is None
                          else (trig.onset_index - int(idx[0])) / rate),
        "end_reason": trig.end_reason,
        "started_utc": trig.started_utc,
        "source": capture.source.identity,
        "max_abs_counts": np.abs(capture.counts).max(axis=0).tolist()
        if capture.counts is not None else None,
    }


def capture_resolution(capture: Capture) -> float | None:
    """The angle of one encoder count, if the angles are counts (recorded, or exported ones)."""
    step = encoder_quantum(max(capture.counts_per_rev))
    if capture.counts is not None:
        return step
    # CSV angles that sit on the count grid came from an encoder of that resolution
    counts = capture.angles_rad / step
    return step if bool(np.all(np.abs(counts - np.rint(counts)) < 1e-6)) else None


def to_measurement(capture: Capture, rig: RigParams | None = None) -> Measurement:
    """The capture's angles on its sample grid, as identification takes them; gaps stay gaps."""
    return Measurement(angles=capture.angles_rad, sample_index=capture.sample_index,
                       rate_hz=capture.sample_rate_hz, rig=rig or capture.rig,
                       resolution_rad=capture_resolution(capture), capture_id=capture.capture_id)
