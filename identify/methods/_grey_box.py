"""The recommended estimator ("grey-box"): regression start, output-error fit, honest intervals.

The shared pipeline (identify.methods._pipeline) finds the rest pose and the release
time, decimates 10 kHz -> 1 kHz and differentiates (Holoborodko N = 51 and 101, seed
002), and starts from the per-joint Coulomb + viscous regression (from the seed's 10x
guesses output error does not converge). This method fits output error over mu_d, mu_s,
mu_v, omega_t of both joints plus the release state, refits the Stribeck pair of a joint
left above the encoder's noise floor from other starts, and reports 95 % intervals from
the Jacobian (inflated for correlated residuals), Fn_t flagged not identifiable (only
mu_v tanh(4 Fn/Fn_t) enters the model when the normal force is constant), and the
goodness of fit (seed 000 eq. 53) from a fresh simulation at the capture's own rate.
"""

from __future__ import annotations

import time
from typing import Any

from .._progress import Progress, no_progress
from ..model import JOINT_NAMES, param_index, param_name
from ..results import IdentificationResult
from ..signal import Measurement
from ._names import GREY_BOX
from ._oe_problem import OEFit, fit_output_error
from ._pipeline import FREE, Prepared, build_result, noise_floor, prepare

METHOD = GREY_BOX

#: Stribeck starts (mu_s / mu_d, omega_t) tried when a joint's fit stays above the noise
#: floor: the first fit assumes mu_s > mu_d, and a rig with mu_s < mu_d lies in another basin
STRIBECK_RESTARTS = ((0.8, 1e-2), (1.2, 2.5e-3), (0.8, 2.5e-3))
FLOOR_FACTOR = 1.5  # residual rms above 1.5 x the rms of encoder quantisation: refit


def fit_with_restarts(p: Prepared, free: list[int], progress: Progress | None = None
                      ) -> tuple[OEFit, list[dict[str, Any]]]:
    """Output-error fit; joints left above the noise floor get their Stribeck pair restarted."""
    oe = fit_output_error(p.d, p.m.rig, p.start, free, p.init, progress=progress)
    tried: list[dict[str, Any]] = []
    floor = FLOOR_FACTOR * noise_floor(p)
    bad = [j for j in (0, 1) if oe.residual_rms[j] > floor]
    for ratio, omega in STRIBECK_RESTARTS if bad else ():
        start = oe.params.copy()
        for j in bad:
            mu_d, mu_s, omega_t = (param_index(param_name(term, j))
                                   for term in ("mu_d", "mu_s", "omega_t"))
            start[mu_s] = start[mu_d] * ratio
            start[omega_t] = omega
        alt = fit_output_error(p.d, p.m.rig, start, free, p.init)
        tried.append({"joints": bad, "mu_s_over_mu_d": ratio, "omega_t": omega,
                      "cost": alt.extras["cost"], "previous_cost": oe.extras["cost"]})
        if alt.extras["cost"] < oe.extras["cost"]:
            oe = alt
        if all(oe.residual_rms[j] <= floor for j in bad):
            break
    return oe, tried


def identify_grey_box(m: Measurement, progress: Progress | None = None,
                      decimate_to_hz: float = 1000.0) -> IdentificationResult:
    """Identify the ten friction parameters of one free-decay capture (recommended)."""
    report = progress or no_progress
    t_start = time.perf_counter()
    report(0.0, "release, decimation, regression")
    p = prepare(m, decimate_to_hz)
    oe, restarts = fit_with_restarts(p, FREE, lambda f, msg: report(0.15 + 0.75 * f, msg))
    report(0.92, "goodness of fit")
    elapsed = time.perf_counter() - t_start
    floor = noise_floor(p)
    above = {name: float(oe.residual_rms[j] / floor)
             for j, name in enumerate(JOINT_NAMES)
             if oe.residual_rms[j] > FLOOR_FACTOR * floor}
    extra: dict[str, Any] = {"stribeck_restarts": restarts,
                             "noise_floor_rad": floor}
    if above:  # the intervals assume the model fits down to the encoder's noise
        extra["warning"] = ("residuals above the encoder noise floor (x" + ", x".join(
            f"{v:.1f} {k}" for k, v in above.items()) + "): model mismatch or a local "
            "minimum; intervals of that joint are not reliable")
    return build_result(METHOD, p, oe, FREE, elapsed, extra=extra)
