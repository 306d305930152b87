"""What the Monte Carlo benches print alike: a parameter's spread against its bound."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def efficiency_row(label: str, pairs: Sequence[tuple[float, float]]) -> str:
    """One line: the rms and mean of the relative errors, the median Cramer-Rao bound
    the results reported, the rms of error / bound (goal: at most 1.5) and how many
    errors lie beyond 3 bounds; `pairs` holds (relative error, relative bound)."""
    e, b = np.array(pairs, dtype=float).T
    z = e / b
    return (f"  {label} rms error {100 * np.sqrt(np.mean(e ** 2)):6.2f} %, "
            f"mean {100 * np.mean(e):+6.2f} %, median bound {100 * np.median(b):6.2f} %, "
            f"rms of error/bound {np.sqrt(np.mean(z ** 2)):5.2f} over {len(z):2d}, "
            f"beyond 3 bounds {int(np.sum(np.abs(z) > 3))}")
