"""Whether a result's model explains its capture: its residuals over the capture's noise.

The estimator judges its own fits by it (its adequacy check, its restarts) and reports the
ratio per joint in diagnostics["residual_over_noise"]; a session leaves a capture whose
ratio passes it out of its answer (identify.session)."""

from __future__ import annotations

__all__ = ["ADEQUATE_EXCESS"]

#: residuals above this many times the noise: the model misses something the data show
ADEQUATE_EXCESS = 1.5

