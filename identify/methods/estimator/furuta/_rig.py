"""The rig as a free decay identifies it: each quantity with its 95 % interval, and the
ones it cannot separate, each with what would separate it.

A free decay sees the rig through seven base parameters (identify.model._base) and only
up to one common factor. Scale-free quantities (the tilt, the pendulum's reduced length,
the arm length L1 from P3/P4 and P4/(m2 l2)) come from the data alone. Absolute ones
(m2 l2, the inertias, the arm's static moment) need the scale: a weighed m2 l2 gives it
to the weighing's uncertainty; otherwise all the nominal values together give it, each
weighed by its stated uncertainty, and that uncertainty is in their intervals.
Intervals: the delta method on the fit's covariance of the rig variables (logs of
RIG_VARIABLES and the tilt), which holds the data's information and the prior's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ....model import RIG_QUANTITIES, rig_quantities
from ....results import ParameterEstimate
from ._prior import RigPrior

__all__ = ["NOT_SEPARABLE", "SCALE_FREE", "rig_estimates"]

#: those the data fix without any scale
SCALE_FREE = ("tilt_deg", "reduced_length", "L1")

#: the values a free decay cannot separate: what it sees of each, and what would fix it
NOT_SEPARABLE: dict[str, str] = {
    "m1": "only in m1 l1 (arm_moment) and j1z + m1 l1^2 (arm_inertia), and in Fn0; weigh "
          "the arm and locate its centre of gravity to separate it",
    "l1": "only in m1 l1 (arm_moment) and j1z + m1 l1^2 (arm_inertia); locate the arm's "
          "centre of gravity (balance it on an edge) to separate it",
    "j1z": "only in the arm's inertia about its axis (arm_inertia); m1 and l1 measured "
           "separate it",
    "m2": "only in m2 l2 and in Fn1 = m2 g; weigh the pendulum to separate it",
    "l2": "only in m2 l2 and j2x + m2 l2^2; locate the pendulum's centre of gravity to "
          "separate it",
    "j2x": "only in j2x + m2 l2^2 (pendulum_inertia_at_joint); m2 and l2 measured separate "
           "it",
    "j2y": "only in K = m2 l2^2 + j2y - j2z and j2z in arm_inertia; a CAD value is the "
           "practical source",
    "j2z": "only in K and arm_inertia, with j2y; a CAD value is the practical source",
}


def _jacobian(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    base = f(x)
    jac = np.zeros((base.size, x.size))
    for i in range(x.size):
        step = 1e-6
        xp = x.copy()
        xp[i] += step
        jac[:, i] = (f(xp) - base) / step
    return jac


def rig_estimates(w: np.ndarray, cov: np.ndarray,
                  prior: RigPrior) -> dict[str, ParameterEstimate]:
    """Every rig quantity of RIG_QUANTITIES, with its 95 % interval, then each value of
    NOT_SEPARABLE as not identifiable, with the nominal value it was assumed at.

    w: the fitted rig variables (logs of RIG_VARIABLES, then the tilt in radians); cov:
    their covariance (data and prior together).
    """
    def quantities(x: np.ndarray) -> np.ndarray:
        return np.array(list(rig_quantities(prior.rig(x)).values()))

    values = quantities(w)
    jac = _jacobian(quantities, w)
    var = np.einsum("ij,jk,ik->i", jac, cov, jac)
    scale = ("its scale from the weighed m2 l2" if prior.m2_l2 is not None else
             "its scale from all nominal values together, weighed by their uncertainty; "
             "weigh m2 l2 to fix it")
    out: dict[str, ParameterEstimate] = {}
    for (name, unit), v, s2 in zip(RIG_QUANTITIES.items(), values, var):
        sd = math.sqrt(max(float(s2), 0.0))
        note = (f"{unit}; from the data alone" if name in SCALE_FREE else f"{unit}; {scale}")
        out[name] = ParameterEstimate(value=float(v), ci95=(float(v - 1.96 * sd),
                                                            float(v + 1.96 * sd)),
                                      identifiable=True, note=note)
    for name, why in NOT_SEPARABLE.items():
        out[name] = ParameterEstimate(
            value=None, ci95=None, identifiable=False,
            note=f"not identifiable from a free decay: it enters {why}",
            assumed=float(getattr(prior.nominal, name)))
    return out
