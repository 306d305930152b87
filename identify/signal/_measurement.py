"""Measured records as identification sees them: times, angles, missing data.

Record holds any number of joints (the chain rig kinds); Measurement is the Furuta
pendulum's record of two joints, arm and pendulum, with the rig it was taken on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np

from ..model import RigParams
from ._differentiate import contiguous_segments


@dataclass(frozen=True, kw_only=True)
class Record:
    """Angles of n joints on a uniform sample grid, possibly with gaps.

    sample_index counts samples of the grid (rate_hz); a jump larger than one marks
    lost samples, which every method must treat as missing, never as contiguous.
    """

    angles: np.ndarray  # (k, n) rad
    sample_index: np.ndarray  # (k,) int64
    rate_hz: float
    resolution_rad: float | None = None  # encoder quantum, if the data are counts
    capture_id: str | None = None
    t0_s: float = 0.0  # time of sample_index[0] on the file's own clock

    def __post_init__(self) -> None:
        a = np.asarray(self.angles, dtype=np.float64)
        idx = np.asarray(self.sample_index, dtype=np.int64)
        if a.ndim == 1:
            a = a[:, None]
        if a.ndim != 2 or not 1 <= a.shape[1] <= 3:
            raise ValueError(f"angles must have shape (k, joints) with 1-3 joints, got {a.shape}")
        if idx.shape != (a.shape[0],):
            raise ValueError(f"sample_index must have shape ({a.shape[0]},), got {idx.shape}")
        if a.shape[0] < 10:
            raise ValueError(f"a measurement needs at least 10 samples, got {a.shape[0]}")
        if np.any(np.diff(idx) <= 0):
            raise ValueError("sample_index must increase strictly")
        if not np.all(np.isfinite(a)):
            raise ValueError("angles contain NaN or infinite values")
        if not self.rate_hz > 0:
            raise ValueError(f"rate_hz must be positive, got {self.rate_hz}")
        object.__setattr__(self, "angles", a)
        object.__setattr__(self, "sample_index", idx)

    @classmethod
    def from_times(cls, t: np.ndarray, angles: np.ndarray, **kw: Any) -> Self:
        """Build from sample times in seconds (uniform apart from gaps)."""
        t = np.asarray(t, dtype=np.float64)
        if t.size < 2:
            raise ValueError("need at least two samples")
        step = float(np.median(np.diff(t)))
        if not step > 0:
            raise ValueError("sample times must increase")
        idx = np.rint((t - t[0]) / step).astype(np.int64)
        return cls(angles=np.asarray(angles), sample_index=idx, rate_hz=1.0 / step,
                   t0_s=float(t[0]), **kw)

    @property
    def joints(self) -> int:
        return int(self.angles.shape[1])

    @property
    def t(self) -> np.ndarray:
        """Seconds from the first sample (gaps show as jumps)."""
        return (self.sample_index - self.sample_index[0]) / self.rate_hz

    @property
    def duration_s(self) -> float:
        return float((self.sample_index[-1] - self.sample_index[0]) / self.rate_hz)

    def segments(self) -> list[slice]:
        return contiguous_segments(self.sample_index)

    @property
    def lost_samples(self) -> int:
        return int(self.sample_index[-1] - self.sample_index[0] + 1 - self.sample_index.size)


@dataclass(frozen=True, kw_only=True)
class Measurement(Record):
    """The Furuta pendulum's record: angles (k, 2) of arm and pendulum, and its rig."""

    rig: RigParams = field(default_factory=RigParams)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.angles.shape[1] != 2:
            raise ValueError(f"angles must have shape (n, 2), got {self.angles.shape}")
