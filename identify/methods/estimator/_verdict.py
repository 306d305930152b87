"""The identifiability rule every rig kind reports its fitted parameters by.

A fitted value with its standard error (after the widening for model error) is one of:

1. **not identifiable** from this record: the fit ran to a bound of its range, or the
   data cannot tell it: a log-fitted value's 95 % interval spans more than
   UNIDENTIFIABLE_FACTOR either side, a linear one's is wider than the value (a torque
   the fit keeps at or above zero is then "indistinguishable from zero: at most ...");
2. **an estimate, not identified with confidence** (the value in `assumed`, the local
   interval shown): the kind says why (`caveat`: the Stribeck pair, a transition the
   fit cannot resolve), or a log-fitted value's standard error is above WALD_LOG_SD,
   where intervals from the local curvature (Wald) missed the truth more often than not
   (a value the motion's equations hold linearly, as a chain's torques, keeps its
   interval up to the value's width: the chain Monte Carlo's few such intervals held);
3. **identified**: the value and its 95 % interval.

Seed 000's methods keep their own rule (identify.methods._pipeline): they reproduce the
papers, this one is the recommended estimator's.
"""

from __future__ import annotations

import math

from ...results import ParameterEstimate
from ._stages import TOO_WIDE_NOTE, WEAK_NOTE, log_interval, too_wide, weakly_determined

Z95 = 1.959964

#: the Stribeck pair (the breakaway friction and the transition velocity: mu_s and
#: omega_t of a Furuta joint, Fs and v_t of a chain's) acts only near zero velocity and
#: trades along a curved valley: its Wald intervals, however narrow, held the truth too
#: rarely to be reported as identified (Furuta: bench_real_rig.py; chains: 228 of 271,
#: 84 %, over seeds 1 and 2 of bench_chain_coverage.py, v_t at +874 % with z = 13)
STRIBECK_NOTE = ("estimated, not identified with confidence: the breakaway friction and "
                 "the transition velocity act only near zero velocity and trade off along "
                 "a curved valley; the interval shown is the local (Wald) one and is not "
                 "trusted")


def judged(value: float, sd: float, *, log: bool, at_bound: bool = False,
           caveat: str | None = None, nonnegative: bool = False, note: str = ""
           ) -> ParameterEstimate:
    """One fitted parameter under the rule (module docstring).

    value: the fitted value (not its log); sd: its standard error, of the log where `log`
    (a relative one), else absolute. at_bound: the fit stopped at a bound of its range.
    caveat: the kind's reason this value is an estimate at best. nonnegative: a torque
    kept at or above zero (its interval is cut there). note: what an identified value
    says of itself (its meaning, for a chain's parameter).
    """
    if log:
        _, ci = log_interval(math.log(value), sd)
        wide = too_wide(sd)
        wide_note = TOO_WIDE_NOTE
    else:
        half = Z95 * sd
        ci = (value - half, value + half)
        wide = not half < abs(value)
        wide_note = "its 95 % interval is wider than the value"
        if wide and nonnegative:
            ci = (max(ci[0], 0.0), ci[1])
            wide_note = f"indistinguishable from zero: at most {ci[1]:.3g} (95 %)"
    if not (math.isfinite(ci[0]) and math.isfinite(ci[1])):
        # the data leave it unbounded (an infinite variance): no interval, and JSON has
        # none to keep (an arm cable's rest angle so judged made a result that did not
        # read back from its JSON)
        return ParameterEstimate(value=None, ci95=None, identifiable=False, assumed=value,
                                 note="not identifiable from this capture: the data do not "
                                      "bound it")
    if at_bound or wide:
        why = f"the fit ran to its bound {value:.3g}" if at_bound else wide_note
        return ParameterEstimate(value=None, ci95=ci, identifiable=False, assumed=value,
                                 note="not identifiable from this capture: " + why)
    if caveat is not None:
        return ParameterEstimate(value=None, ci95=ci, identifiable=False, assumed=value,
                                 note=caveat)
    if log and weakly_determined(sd):
        return ParameterEstimate(value=None, ci95=ci, identifiable=False, assumed=value,
                                 note=WEAK_NOTE)
    return ParameterEstimate(value=value, ci95=ci, identifiable=True, note=note)


__all__ = ["STRIBECK_NOTE", "Z95", "judged"]
