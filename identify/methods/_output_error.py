"""Output-error identification as a controls researcher runs it ("output-error").

Simulate the model and fit the measured angles (identify.methods._oe_problem), with what
the recommended estimator skips for speed:
- multi-start: the seed's own initial guesses (seed 000 Table III, about 10x the
  truth, where a plain fit ends in a local minimum, as the seed reports) and the
  data-informed regression start; the lowest cost wins and every start is reported;
- fixed parameters, and several captures fitted at once with shared friction;
- profile-likelihood 95 % intervals for the weakly identified parameters: the other
  parameters are re-fitted at each trial value until the deviance
  2 (cost - cost_min) / (s^2 k) exceeds 3.84 (chi-square, 1 dof, 95 %), where k is
  the residual autocorrelation inflation.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

import numpy as np

from .._progress import Progress, no_progress
from ..model import JOINT_NAMES, PARAM_NAMES
from ..results import IdentificationResult, ParameterEstimate
from ..signal import Measurement
from ._names import OUTPUT_ERROR
from ._oe_problem import LOG_BOUNDS, OEFit, fit_output_error, fit_output_error_many
from ._pipeline import FREE, Prepared, build_result, capture_fit, parameter_estimates, prepare

METHOD = OUTPUT_ERROR

#: seed 000 Table III "Initial Guess" row, the start of the seed's failing optimisation
SEED_INITIAL_GUESS = np.array([5.135e-3, 5.875e-3, 2.531e-3, 4.853e-2, 1.029e-1,
                               5.705e-3, 6.683e-3, 2.399e-3, 4.820e-2, 9.720e-2])
CHI2_95_1DOF = 3.841458820694124
WEAK_FACTOR = 1.2  # Wald 95 % interval wider than x1.2 either side: profile it
MAX_PROFILE_STEPS = 8


def _free_and_start(start: np.ndarray, fixed: dict[str, float] | None
                    ) -> tuple[list[int], np.ndarray]:
    s = np.asarray(start, dtype=np.float64).copy()
    free = list(FREE)
    for name, value in (fixed or {}).items():
        if name not in PARAM_NAMES:
            raise ValueError(f"unknown parameter to fix: {name!r}")
        k = PARAM_NAMES.index(name)
        s[k] = float(value)
        if k in free:
            free.remove(k)
    return free, s


def profile_interval(p: Prepared, oe: OEFit, free: list[int], k: int,
                     progress: Progress | None = None) -> tuple[float, float] | None:
    """95 % profile-likelihood interval of parameter k (index in PARAM_NAMES)."""
    j = free.index(k)
    dof = max(1, 2 * p.d.q.shape[0] - oe.z.size)
    s2k = 2.0 * oe.extras["cost"] / dof * oe.inflation
    limit = 0.5 * CHI2_95_1DOF * s2k  # allowed cost increase
    sigma = float(oe.log_std[j]) or 0.1
    others = [i for i in free if i != k]
    init = replace(p.init, t0=oe.t0, q0=oe.x0[:2].copy(), v0=oe.x0[2:].copy())
    ends = []
    for direction in (-1.0, 1.0):
        prev_log, prev_gain = math.log(oe.params[k]), 0.0
        end = None
        for step in range(1, MAX_PROFILE_STEPS + 1):
            trial = math.log(oe.params[k]) + direction * sigma * 1.5 * step
            lo_b, hi_b = LOG_BOUNDS[k]
            if not math.log(lo_b) <= trial <= math.log(hi_b):
                end = lo_b if direction < 0 else hi_b  # the interval runs to the bound
                break
            start = oe.params.copy()
            start[k] = math.exp(trial)
            refit = fit_output_error(p.d, p.m.rig, start, others, init)
            gain = refit.extras["cost"] - oe.extras["cost"]
            if progress:
                progress(step / MAX_PROFILE_STEPS, f"profile {PARAM_NAMES[k]}")
            if gain >= limit:  # crossed: interpolate in log parameter
                f = (limit - prev_gain) / max(gain - prev_gain, 1e-300)
                end = math.exp(prev_log + f * (trial - prev_log))
                break
            prev_log, prev_gain = trial, max(gain, 0.0)
        if end is None:
            return None  # not closed within the steps: say so rather than guess
        ends.append(end)
    return (min(ends), max(ends))


def _with_profiles(p: Prepared, oe: OEFit, free: list[int], progress: Progress | None
                   ) -> tuple[dict[str, ParameterEstimate], dict[str, Any]]:
    params = parameter_estimates(oe, free)
    profiled: dict[str, Any] = {}
    for k in free:
        name = PARAM_NAMES[k]
        est = params[name]
        if est.ci95 is None:
            continue
        wald = est.ci95
        val = float(oe.params[k])
        if max(wald[1] / val, val / wald[0]) < WEAK_FACTOR:
            continue
        ci = profile_interval(p, oe, free, k, progress)
        profiled[name] = {"wald": list(wald), "profile": list(ci) if ci else None}
        if ci is None:
            params[name] = ParameterEstimate(
                value=None, ci95=None, identifiable=False, assumed=val,
                note="not identifiable: the profile likelihood does not close within "
                     f"{1.5 * MAX_PROFILE_STEPS:g} standard errors")
        else:
            params[name] = est.model_copy(update={
                "ci95": ci, "note": (est.note + "; " if est.note else "")
                + "95 % profile-likelihood interval"})
    return params, profiled


def identify_output_error(m: Measurement, progress: Progress | None = None, *,
                          start: np.ndarray | None = None, fixed: dict[str, float] | None = None,
                          profile: bool = True) -> IdentificationResult:
    """Multi-start output-error fit of one capture, with profile intervals."""
    report = progress or no_progress
    t0 = time.perf_counter()
    p = prepare(m)
    given = SEED_INITIAL_GUESS if start is None else np.asarray(start, dtype=np.float64)
    candidates = {"seed initial guess" if start is None else "given start": given,
                  "regression": p.start}
    fits: dict[str, tuple[OEFit, list[int]]] = {}
    for n, (label, s) in enumerate(candidates.items()):
        free, s = _free_and_start(s, fixed)
        report(0.1 + 0.4 * n / len(candidates), f"start: {label}")
        fits[label] = (fit_output_error(p.d, m.rig, s, free, p.init), free)
    best = min(fits, key=lambda lab: fits[lab][0].extras["cost"])
    oe, free = fits[best]
    t_check = time.perf_counter()  # every method: the estimate is timed, not its validation
    starts = {lab: {"cost": f.extras["cost"], "fit_percent": capture_fit(m, f),
                    "chosen": lab == best} for lab, (f, _) in fits.items()}
    t0 += time.perf_counter() - t_check
    params, profiled = (_with_profiles(p, oe, free, lambda f, s: report(0.5 + 0.4 * f, s))
                        if profile else (parameter_estimates(oe, free), {}))
    for name, value in (fixed or {}).items():
        params[name] = ParameterEstimate(value=None, ci95=None, identifiable=False,
                                         assumed=float(value),
                                         note="not identified: fixed by the user")
    elapsed = time.perf_counter() - t0
    return build_result(METHOD, p, oe, free, elapsed, parameters=params,
                        extra={"starts": starts, "profile_likelihood": profiled})


def identify_output_error_many(ms: list[Measurement], progress: Progress | None = None, *,
                               fixed: dict[str, float] | None = None) -> IdentificationResult:
    """One set of friction parameters fitted to several captures of the same rig at once."""
    if not ms:
        raise ValueError("no captures to fit")
    t0 = time.perf_counter()
    preps = [prepare(m) for m in ms]
    start = np.exp(np.mean([np.log(np.clip(p.start, 1e-12, None)) for p in preps], axis=0))
    free, start = _free_and_start(start, fixed)
    fits = fit_output_error_many([p.experiment for p in preps], start, free)
    elapsed = time.perf_counter() - t0
    result = build_result(METHOD, preps[0], fits[0], free, elapsed, extra={
        "captures": [m.capture_id for m in ms],
        "fit_percent_per_capture": [capture_fit(p.m, f) for p, f in zip(preps, fits)]})
    worst = {j: min(c[j] for c in result.diagnostics["fit_percent_per_capture"])
             for j in JOINT_NAMES}
    return result.model_copy(update={
        "capture_id": "+".join(str(m.capture_id) for m in ms), "fit_percent": worst,
        "capture_seconds": sum(m.duration_s for m in ms),
        "samples": sum(int(m.angles.shape[0]) for m in ms),
        "lost_samples": sum(m.lost_samples for m in ms)})
