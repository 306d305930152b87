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


#: how often a calibrated 95 % interval misses, narrow or not
MISS_RATE = 0.05


def narrow_rows(narrow: Sequence[tuple[str, str, bool]]) -> list[str]:
    """Lines on the intervals narrower than +-1 %: in all and per parameter, how many
    missed against how often a calibrated 95 % interval does (MISS_RATE), with the
    binomial probability of missing that often or more, and how many captures the misses
    come from (the rig's quantities share its scale, so one capture's scale miss counts
    several times); `narrow` holds (capture, parameter, missed) per narrow interval."""
    from scipy.stats import binom

    def row(label: str, items: Sequence[tuple[str, str, bool]]) -> str:
        n = len(items)
        missed = [i for i in items if i[2]]
        p = float(binom.sf(len(missed) - 1, n, MISS_RATE)) if missed else 1.0
        captures = len({i[0] for i in missed})
        return (f"{label} {n:4d} narrow, {len(missed):3d} missed ({len(missed) / n:5.1%}; "
                f"P(as many or more at {MISS_RATE:.0%}) = {p:.2f}), from {captures} capture(s)")

    if not narrow:
        return ["intervals narrower than +-1 %: none"]
    lines = [row("intervals narrower than +-1 % (a calibrated 95 % interval misses 5 %):",
                 narrow)]
    for name in sorted({i[1] for i in narrow}):
        lines.append(row(f"  {name:26s}", [i for i in narrow if i[1] == name]))
    return lines
