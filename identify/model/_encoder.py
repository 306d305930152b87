"""The rig's incremental encoders: counts per revolution and the angle of one count."""

from __future__ import annotations

import math

import numpy as np

#: counts per revolution of both joints' encoders
COUNTS_PER_REV = 40_000


def encoder_quantum(counts_per_rev: int) -> float:
    """The angle of one count, rad: 2 pi / counts_per_rev."""
    if counts_per_rev <= 0:
        raise ValueError(f"counts_per_rev must be positive, got {counts_per_rev}")
    return 2 * math.pi / counts_per_rev


#: the angle of one count of the rig's encoders, rad (2 pi / 40,000)
QUANTUM = encoder_quantum(COUNTS_PER_REV)


def quantisation_rms(quantum: float = QUANTUM) -> float:
    """The rms error of rounding to a count of `quantum`, Q / sqrt(12) (uniform over one
    count): what a right model leaves at worst on a capture without other noise."""
    return quantum / math.sqrt(12.0)


def to_counts(angles: np.ndarray, quantum: float = QUANTUM) -> np.ndarray:
    """Angles (rad) as the encoder reads them: the nearest whole count, int32."""
    return np.rint(np.asarray(angles, dtype=np.float64) / quantum).astype(np.int32)
