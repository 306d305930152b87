"""What is known of the rig before the capture: nominal values with their uncertainty.

A free decay fixes the rig's base parameters only up to one common factor
(docs/identification.md); the nominal values fix the rest. Each enters the fit as a
prior residual (log x - log x_nominal) / sd(log x): a CAD value with +-5 % (the
default), a measured one with its own, smaller, uncertainty. Where nothing was
measured, the scale comes from all of them together, weighed by their uncertainty, and
that uncertainty reaches every interval that depends on the scale. A measured static
moment m2 l2 (the pendulum weighed held horizontal at its pivot) is a prior on that
product alone.

The fit's rig variables are the logs of RIG_VARIABLES and the tilt in radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ....model import RIG_ERROR_FIELDS, RigParams

__all__ = ["CAD_UNCERTAINTY", "RIG_VARIABLES", "TILT_UNCERTAINTY_DEG", "WEIGHED_UNCERTAINTY",
           "RigPrior"]

#: the rig quantities the fit carries, each as its log
RIG_VARIABLES: tuple[str, ...] = RIG_ERROR_FIELDS
#: relative standard uncertainty of a value nobody measured (a CAD model, a data sheet)
CAD_UNCERTAINTY = 0.05
#: standard uncertainty of a tilt set by eye, degrees
TILT_UNCERTAINTY_DEG = 3.0
#: relative standard uncertainty of a static moment weighed on a kitchen scale
WEIGHED_UNCERTAINTY = 0.01


@dataclass(frozen=True)
class RigPrior:
    """The nominal rig and how well each of its quantities is known.

    uncertainty: relative standard uncertainty per quantity of RIG_VARIABLES (default
    CAD_UNCERTAINTY); tilt_sd_deg: the tilt's, in degrees; m2_l2: a measured static
    moment (value kg m, relative uncertainty), or None.
    """

    nominal: RigParams
    uncertainty: dict[str, float] = field(default_factory=dict)
    tilt_sd_deg: float = TILT_UNCERTAINTY_DEG
    m2_l2: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        for name, sd in self.uncertainty.items():
            if name not in RIG_VARIABLES:
                raise ValueError(f"no rig quantity {name!r} to give an uncertainty to")
            if not (math.isfinite(sd) and sd > 0):
                raise ValueError(f"the uncertainty of {name} must be positive, got {sd}")
        if not (math.isfinite(self.tilt_sd_deg) and self.tilt_sd_deg > 0):
            raise ValueError(f"the tilt's uncertainty must be positive, got {self.tilt_sd_deg}")
        if self.m2_l2 is not None and not (self.m2_l2[0] > 0 and self.m2_l2[1] > 0):
            raise ValueError(f"a measured m2 l2 needs a positive value and uncertainty, got "
                             f"{self.m2_l2}")

    @classmethod
    def of(cls, rig: RigParams) -> RigPrior:
        """What the rig's own fields state: its values as the nominal, each value's
        uncertainty (rig.uncertainty, else rig.cad_uncertainty) and a weighed m2 l2."""
        known = rig.uncertainty
        moment = None if rig.m2_l2 is None else (rig.m2_l2, known.get("m2_l2",
                                                                      WEIGHED_UNCERTAINTY))
        return cls(rig, {n: known.get(n, rig.cad_uncertainty) for n in RIG_VARIABLES},
                   known.get("tilt_deg", TILT_UNCERTAINTY_DEG), moment)

    def sd(self, name: str) -> float:
        """Standard deviation of log(name) (a relative uncertainty, for small ones)."""
        return math.log1p(self.uncertainty.get(name, CAD_UNCERTAINTY))

    def start(self) -> np.ndarray:
        """The rig variables at the nominal rig: logs of RIG_VARIABLES, then the tilt."""
        return np.array([*(math.log(getattr(self.nominal, n)) for n in RIG_VARIABLES),
                         self.nominal.tilt_rad])

    def rig(self, w: np.ndarray) -> RigParams:
        """The rig of variables w (logs of RIG_VARIABLES, then the tilt in radians)."""
        values = {n: float(math.exp(w[k])) for k, n in enumerate(RIG_VARIABLES)}
        return self.nominal.model_copy(update={**values,
                                               "tilt_deg": math.degrees(float(w[-1]))})

    def residuals(self, w: np.ndarray) -> np.ndarray:
        """Prior residuals of variables w, each in standard deviations."""
        nom = self.start()
        r = [(w[k] - nom[k]) / self.sd(n) for k, n in enumerate(RIG_VARIABLES)]
        r.append((w[-1] - nom[-1]) / math.radians(self.tilt_sd_deg))
        if self.m2_l2 is not None:
            value, rel = self.m2_l2
            im2, il2 = RIG_VARIABLES.index("m2"), RIG_VARIABLES.index("l2")
            r.append((w[im2] + w[il2] - math.log(value)) / math.log1p(rel))
        return np.array(r)

    def jacobian(self) -> np.ndarray:
        """d residuals / d w (constant)."""
        n = len(RIG_VARIABLES) + 1
        rows = [np.eye(n)[k] / self.sd(name) for k, name in enumerate(RIG_VARIABLES)]
        rows.append(np.eye(n)[-1] / math.radians(self.tilt_sd_deg))
        if self.m2_l2 is not None:
            row = np.zeros(n)
            row[RIG_VARIABLES.index("m2")] = row[RIG_VARIABLES.index("l2")] = 1.0
            rows.append(row / math.log1p(self.m2_l2[1]))
        return np.array(rows)
