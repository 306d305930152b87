"""What the Monte Carlo benches print alike: a parameter's spread against its bound."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: resamples of the captures for the interval of the rms of error / bound
BOOTSTRAP_DRAWS = 4000


def rms_interval(z: np.ndarray, level: float = 0.95, draws: int = BOOTSTRAP_DRAWS
                 ) -> tuple[float, float]:
    """The percentile bootstrap interval of sqrt(mean(z^2)) over resampled captures.

    With a dozen captures one error far out sets the rms: the interval says how far
    another draw of as many captures could put it (seeded, so a run repeats).
    """
    z = np.asarray(z, dtype=float)
    rng = np.random.default_rng(0)
    picks = rng.integers(0, z.size, (draws, z.size))
    rms = np.sqrt(np.mean(z[picks] ** 2, axis=1))
    lo, hi = np.quantile(rms, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def efficiency_row(label: str, pairs: Sequence[tuple[float, float]]) -> str:
    """One line: the rms and mean of the relative errors, the median Cramer-Rao bound
    the results reported, the rms of error / bound (goal: at most 1.5) with its 95 %
    bootstrap interval over the captures and its value without the capture farthest
    out, and how many errors lie beyond 3 bounds; `pairs` holds (relative error,
    relative bound)."""
    e, b = np.array(pairs, dtype=float).T
    z = e / b
    lo, hi = rms_interval(z)
    rest = np.delete(z, np.argmax(np.abs(z)))
    without = f"{np.sqrt(np.mean(rest ** 2)):5.2f}" if rest.size else "    -"
    return (f"  {label} rms error {100 * np.sqrt(np.mean(e ** 2)):6.2f} %, "
            f"mean {100 * np.mean(e):+6.2f} %, median bound {100 * np.median(b):6.2f} %, "
            f"rms of error/bound {np.sqrt(np.mean(z ** 2)):5.2f} [{lo:4.2f}, {hi:4.2f}] "
            f"over {len(z):2d} ({without} without the farthest), "
            f"beyond 3 bounds {int(np.sum(np.abs(z) > 3))}")
