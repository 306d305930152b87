"""The extra terms a Furuta fit chose (drag, the arm's cable), each judged by the friction's
rule: what the result reports, and what the model search asks before it keeps a term.
"""

from __future__ import annotations

import math
from typing import Any

from .._stages import at_bound, standard_error, widening
from .._verdict import judged
from ._fit import ShootingFit

__all__ = ["EXTRA_JOINT", "EXTRA_NOTES", "extra_estimates", "needed"]


#: the joint each extra term acts on, whose excess over the noise widens its interval
EXTRA_JOINT = {"drag1": 1, "spring0": 0, "spring_rest0": 0}
#: what each extra term is, said with its value among the rig quantities
EXTRA_NOTES = {"drag1": "the pendulum's air drag (a torque c w|w|)",
                "spring0": "the arm's cable stiffness (a torque -k (q0 - q_rest))",
                "spring_rest0": "the arm's cable rest angle"}


def extra_estimates(fit: ShootingFit) -> dict[str, dict[str, Any]]:
    """The extra terms fitted (logs for drag and spring), each under the friction's rule
    (estimator._verdict.judged): its interval widened by its joint's model error, and not
    identified where the fit ran to a bound, the motion no longer feels it (a drag run
    down to 5.7e-10 came out with an interval of +-0.001 %) or the interval is too wide."""
    p = fit.problem
    lo, hi = p.bounds()
    out: dict[str, dict[str, Any]] = {}
    first = p.n_global - len(p.extras)
    for k, name in enumerate(p.extras):
        i = first + k
        sd = standard_error(fit.cov, i) * float(widening(fit.excess)[EXTRA_JOINT[name]])
        if name == "spring_rest0":
            v = float(fit.z[i])
            est, unit = judged(v, sd, log=False), "rad"
        else:
            v = math.exp(float(fit.z[i]))
            est = judged(v, sd, log=True,
                         at_bound=at_bound(float(fit.z[i]), float(lo[i]), float(hi[i])))
            unit = "N m s^2" if name == "drag1" else "N m/rad"
        # an interval the data leave unbounded (an infinite variance: a term the motion
        # no longer feels) is no interval: JSON has no infinity, and a result holding one
        # did not read back
        ci = est.ci95 if est.ci95 and all(map(math.isfinite, est.ci95)) else None
        out[name] = {"value": v, "ci95": None if ci is None else [ci[0], ci[1]],
                     "unit": unit, "identifiable": est.identifiable, "note": est.note}
    return out


def needed(fit: ShootingFit, without: ShootingFit, terms: tuple[str, ...]) -> bool:
    """Whether `fit` may keep the extra `terms` that `without` lacks: each one identified
    (the cable by its stiffness: its rest angle may sit at zero, where no interval is
    narrower than the value), or acting on a joint `without` leaves above the noise,
    where a term the data cannot pin down may still carry what is missing (a true drag
    of bench_coverage's seed 1, refused, left mu_v1 +14 % off)."""
    judged_terms = extra_estimates(fit)
    return all(judged_terms[name]["identifiable"] or without.excess[EXTRA_JOINT[name]] > 1.0
               for name in terms if name in judged_terms and name != "spring_rest0")
