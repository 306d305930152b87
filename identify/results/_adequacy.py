"""Whether a result's model explains its capture: its residuals over the capture's noise.

The estimator judges its own fits by it (its adequacy check, its restarts) and reports the
ratio per joint in diagnostics["residual_over_noise"]; a session leaves a capture whose
ratio passes it out of its answer (identify.session)."""

from __future__ import annotations

from typing import Any

__all__ = ["ADEQUATE_EXCESS", "worst_excess"]

#: residuals above this many times the noise: the model misses something the data show
ADEQUATE_EXCESS = 1.5


def worst_excess(diagnostics: dict[str, Any]) -> float:
    """The largest residual over noise a result reports (0 when it reports none)."""
    ratios = diagnostics.get("residual_over_noise", {})
    return max((float(v) for v in ratios.values() if isinstance(v, (int, float))), default=0.0)
