"""What a result must hold before anyone keeps it: finite numbers in their physical domain.

A result comes from a fit of this process or from elsewhere (a worker's answer, a file);
one with NaN or infinite numbers cannot be stored as JSON and read back, and a friction
coefficient below zero with nothing in its interval at or above zero is not a friction
coefficient. `result_problems` says what is wrong, one short phrase each; an empty list
is a result fit to keep. An unconstrained estimator (a regression) may give a small
coefficient a negative value whose interval reaches zero: that is an estimate, kept; and
a parameter it reports not identifiable (no value) may carry the range the data allow,
below zero or not.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from ._result import IdentificationResult, ParameterEstimate

__all__ = ["NON_NEGATIVE", "result_problems"]

#: friction parameters of every rig kind, which no physical joint has below zero: the
#: Furuta rig's mu_d, mu_s, mu_v, omega_t, Fn_t per joint; a chain rig's Fc, Fs, vt, b, cd
NON_NEGATIVE = re.compile(r"^(mu_d|mu_s|mu_v|omega_t|Fn_t|Fc|Fs|vt|b|cd)\d+$")
_MAX_SHOWN = 5


def _finite(x: float | None) -> bool:
    return x is None or math.isfinite(x)


def _estimate_problems(name: str, p: ParameterEstimate) -> Iterable[str]:
    numbers = [p.value, p.assumed, *(p.ci95 or ())]
    if not all(_finite(x) for x in numbers):
        yield f"{name} is not a finite number"
        return
    if p.ci95 is not None and p.ci95[0] > p.ci95[1]:
        yield f"{name}'s interval is inverted"
    if NON_NEGATIVE.match(name) and p.value is not None:  # a value the result asserts
        top = p.ci95[1] if p.ci95 is not None else p.value
        if top < 0:
            yield f"{name} = {p.value:.4g} is below zero (a friction coefficient)"


def result_problems(result: IdentificationResult) -> list[str]:
    """What makes `result` unfit to keep (empty: nothing)."""
    problems: list[str] = []
    for group in (result.parameters, result.rig):
        for name, estimate in group.items():
            problems.extend(_estimate_problems(name, estimate))
    for joint, fit in result.fit_percent.items():
        if fit is not None and not (math.isfinite(fit) and fit <= 100.0):
            problems.append(f"fit of {joint} ({fit}) is not a percentage of at most 100")
    for field in ("compute_seconds", "normalized_compute_time", "capture_seconds",
                  "sample_rate_hz", "tilt_deg"):
        value = getattr(result, field)
        if not math.isfinite(value):
            problems.append(f"{field} is not a finite number")
    if not (result.compute_seconds >= 0 and result.capture_seconds > 0
            and result.sample_rate_hz > 0 and result.samples > 0 and result.lost_samples >= 0):
        problems.append("times, rate or sample counts out of range")
    r = result.response
    if r is not None:
        rows = [r.t_s, *r.measured, *r.simulated]
        if len(r.measured) != len(r.joints) or len(r.simulated) != len(r.joints) \
                or any(len(row) != len(r.t_s) for row in rows):
            problems.append("response rows of unequal lengths")
        elif not all(_finite(x) for row in rows for x in row):
            problems.append("response holds a number that is not finite")
    if len(problems) > _MAX_SHOWN:
        problems[_MAX_SHOWN:] = [f"and {len(problems) - _MAX_SHOWN} more"]
    return problems
