"""The Furuta rig's result: friction and rig quantities with their intervals, the fit over
the capture and per segment, the release, and the models tried.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ...._progress import Progress, no_progress
from ....model import (
    JOINT_NAMES,
    PARAM_NAMES,
    QUANTUM,
    blas_on_one_thread,
    ensure_compiled,
    equivalent_rigs,
    simulate_from,
    simulate_jobs,
)
from ....results import IdentificationResult, ParameterEstimate, Response, fit_percent, response_of
from ....signal import Measurement, cubic_at
from ..._names import ESTIMATOR
from ..._pipeline import FN_T, FN_T_NOTE
from .._stages import excess_warning, standard_error, widening
from .._verdict import STRIBECK_NOTE, judged
from ._extras import EXTRA_NOTES, extra_estimates
from ._fit import ShootingFit
from ._prior import RIG_VARIABLES, RigPrior
from ._problem import FINE_FLOOR, FRICTION_FREE, friction_bounds
from ._rig import rig_estimates
from ._select import select_model, unresolved_joints

#: the Stribeck pair of each joint (estimator._verdict.STRIBECK_NOTE)
STRIBECK_NAMES = ("mu_s0", "omega_t0", "mu_s1", "omega_t1")
UNRESOLVED_NOTE = ("estimated, not identified with confidence: the friction transition is "
                   f"sharper than the fit resolves (omega_t at its floor, {FINE_FLOOR[0]:g} "
                   "rad/s, after a refit with the finer floor) and "
                   "the joint spends long near zero velocity, where the viscous term takes "
                   "up the difference; the interval shown is the local one")


def _friction_estimates(fit: ShootingFit, tried: list[dict[str, Any]]
                        ) -> dict[str, ParameterEstimate]:
    """mu and omega_t with 95 % intervals (mu_d, mu_s carry the masses' uncertainty); a
    term the joint's chosen law leaves out is said so, never given as a number."""
    p = fit.problem
    out: dict[str, ParameterEstimate] = {}
    unresolved = unresolved_joints(fit)
    f_lo, f_hi = friction_bounds(p.floor[0])
    whole = p.friction_of(fit.z[:p.n_global])
    for k, name in enumerate(FRICTION_FREE):
        i = p.friction_index(name)
        if i is None:
            out[name] = ParameterEstimate(value=None, ci95=None, identifiable=False,
                                          assumed=float(whole[k]),
                                          note=_left_out(name, p.laws, fit, tried))
            continue
        sd = standard_error(fit.cov, i)
        sd *= float(widening(fit.excess)[int(name[-1])])  # the model error
        v = math.exp(float(fit.z[i]))
        caveat = (STRIBECK_NOTE if name in STRIBECK_NAMES else
                  UNRESOLVED_NOTE if name.startswith("mu_v") and name[-1] in unresolved
                  else None)
        out[name] = judged(v, sd, log=True, caveat=caveat,
                           at_bound=v <= float(f_lo[k]) * 1.0001 or v >= float(f_hi[k]) * 0.9999)
    for name in FN_T:
        out[name] = ParameterEstimate(value=None, ci95=None, identifiable=False,
                                      note=FN_T_NOTE, assumed=1e-2)
    return {n: out[n] for n in PARAM_NAMES}


def _cramer_rao(fit: ShootingFit) -> dict[str, float]:
    """The Cramer-Rao bound of each friction parameter fitted, as a relative standard
    deviation (one sigma): what the capture's noise allows any unbiased estimator."""
    p = fit.problem
    if fit.crb is None:
        return {}
    return {n: float(fit.crb[i]) for n in p.friction_names
            if (i := p.friction_index(n)) is not None}


def _within_rig(fit: ShootingFit) -> dict[str, float]:
    """Each fitted friction parameter's standard error with the rig held at its estimate,
    relative (of its log), the model error's widening included: the part of its
    uncertainty another capture of the same rig does not share. The rest is the rig's
    (mostly its scale, which the weighed masses set for every capture alike), so pooling
    captures narrows only this part (identify.session)."""
    p = fit.problem
    n_rig = p.n_rig
    cov = np.where(np.isfinite(fit.cov), fit.cov, 0.0)
    rr = cov[:n_rig, :n_rig]
    out: dict[str, float] = {}
    for name in p.friction_names:
        k = p.friction_index(name)
        if k is None or not np.isfinite(fit.cov[k, k]):
            continue
        cross = cov[k, :n_rig]
        var = float(cov[k, k] - cross @ np.linalg.pinv(rr, hermitian=True) @ cross)
        widen = float(widening(fit.excess)[int(name[-1])])
        out[name] = math.sqrt(max(var, 0.0)) * widen
    return out


def _left_out(name: str, laws: tuple[str, str], fit: ShootingFit,
              tried: list[dict[str, Any]]) -> str:
    """Why a term is not in its joint's chosen law, and what the law with it scored (the
    selection always fits Brown-McPhee first)."""
    joint = int(name[-1])
    note = f"not in the chosen friction law of this joint ({laws[joint]})"
    with_it = [t for t in tried if "bic" in t and t["laws"][joint] == "brown-mcphee"]
    if with_it:
        other = min(with_it, key=lambda t: t["bic"])
        note += f"; the fit with it scored a BIC {other['bic'] - fit.bic:+.1f} worse"
    return note + "; the fit simulates with the value assumed"


def _extra_rig_estimates(extras: dict[str, dict[str, Any]]) -> dict[str, ParameterEstimate]:
    """The extra terms the fit chose, as rig quantities with their intervals: a term the
    diagnostics switched on is a finding about the rig, not a footnote."""
    out = {}
    for name, e in extras.items():
        what = f"{e['unit']}; {EXTRA_NOTES[name]}, a term the diagnostics chose"
        ci = None if e["ci95"] is None else (e["ci95"][0], e["ci95"][1])
        if e["identifiable"]:
            out[name] = ParameterEstimate(value=e["value"], ci95=ci, identifiable=True,
                                          note=what)
        else:
            out[name] = ParameterEstimate(value=None, ci95=ci, identifiable=False,
                                          assumed=e["value"], note=f"{what}; {e['note']}")
    return out


def _stitched_fit(m: Measurement, fit: ShootingFit
                  ) -> tuple[dict[str, float | None], list[dict[str, Any]], Response]:
    """Seed 000 eq. 53 over the capture, each segment simulated from its own state over its
    own span (segment_angles); per segment; and the response drawn from them."""
    t = m.t
    sims, meas, per_segment, times = [], [], [], []
    for rows, sim in segment_angles(m, fit):
        sims.append(sim)
        meas.append(m.angles[rows])
        times.append(t[rows])
        f = fit_percent(sim, m.angles[rows])
        per_segment.append({"span_s": [float(t[rows.start]), float(t[rows.stop - 1])],
                            "fit_percent": {n: _finite(f[j]) for j, n in enumerate(JOINT_NAMES)}})
    whole = fit_percent(np.concatenate(sims), np.concatenate(meas))
    response = response_of(list(zip(times, meas, sims, strict=True)), JOINT_NAMES)
    return {n: _finite(whole[j]) for j, n in enumerate(JOINT_NAMES)}, per_segment, response


def segment_angles(m: Measurement, fit: ShootingFit) -> list[tuple[slice, np.ndarray]]:
    """The fit's angles at the capture's samples, span by span: each segment from its own
    state, over the samples from its start to the next segment's (the last: to the end).

    Each segment is simulated on the fit's own grid and RK4 schedule (h apart, the
    substeps the fit was judged with) and read at the samples by the local cubic
    (identify.signal.cubic_at). Simulated anew at the capture's rate instead, as before,
    it took 0.1 s of a 1 s identification and was the less exact of the two where a
    transition is sharp: up to 3.4e-5 rad from a simulation at 8 times that rate on a
    transition at 1e-4 rad/s, where this stays within 7e-7 (docs/estimator-log.md)."""
    p = fit.problem
    rig, fr = equivalent_rigs(p.u_of(fit.z[:p.n_global]))
    states = p.states(fit.z)
    t = m.t
    t_end = [float(p.seg_t0[s + 1]) if s + 1 < p.seg.count else float(t[-1]) + 1.0
             for s in range(p.seg.count)]
    # t ascends: each span's samples t0 - 1e-12 <= t < t_end are one run of rows
    lo = np.searchsorted(t, p.seg_t0 - 1e-12, side="left")
    hi = np.searchsorted(t, t_end, side="left")
    spans = [(s, slice(int(lo[s]), int(hi[s]))) for s in range(p.seg.count)
             if hi[s] - lo[s] >= 3]
    if not spans:
        return []
    which = np.array([s for s, _ in spans], np.int64)
    count = which.size
    # the grid to two points past each span's last sample (the cubic's), at least 4;
    # past the schedule's end (a capture's last samples after its last grid point, or a
    # piece after lost frames too short for one), that interval's substeps again
    first = p.seg.start[which].astype(np.int64)
    need = np.array([int((t[rows.stop - 1] - p.seg_t0[s]) / p.d.h) + 3 for s, rows in spans],
                    np.int64)
    length = np.maximum(need, 4)
    sched = p.kernel_schedule
    past = int((first + length).max()) - sched.size
    if past > 0:
        sched = np.concatenate([sched, np.full(past, sched[-1])])
    offset = np.concatenate([[0], np.cumsum(length)[:-1]]).astype(np.int64)
    sim_all = simulate_jobs(np.repeat(rig, count, axis=0), np.repeat(fr, count, axis=0),
                            states[which], np.arange(count, dtype=np.int64), p.seg_t0[which],
                            first, length, p.d.h, sched, offset, int(length.sum()))
    # a sample on a grid point may come out a rounding before the segment's start
    return [(rows, cubic_at(sim_all[o:o + n], np.maximum((t[rows] - p.seg_t0[s]) / p.d.h, 0.0)))
            for (s, rows), o, n in zip(spans, offset, length, strict=True)]


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _release(m: Measurement, fit: ShootingFit, t_start: float) -> dict[str, Any]:
    """The release: the first segment's state simulated backward until it leaves the data
    (3 noise sigmas on either joint); the time and state there."""
    p = fit.problem
    rig, fr = equivalent_rigs(p.u_of(fit.z[:p.n_global]))
    x0 = p.states(fit.z)[0]
    t0 = float(p.seg_t0[0])
    t = m.t
    rows = np.flatnonzero((t < t0) & (t >= t0 - 2.0))[::-1]
    if rows.size < 2:
        return {"time_s": t0, "state": [float(v) for v in x0], "found": False}
    h = 1.0 / m.rate_hz
    # backward in time: the same RK4, step -h (friction makes this stable over ~1 s)
    n = int(round((t0 - t[rows[-1]]) / h)) + 1
    back = simulate_from(rig[0], fr[0], x0, 0.0, 0.0, -h, n, 1)
    at = np.rint((t0 - t[rows]) / h).astype(np.int64)
    ok = at < n
    rows, at = rows[ok], at[ok]
    tol = 3 * np.maximum(p.sigma, m.resolution_rad or QUANTUM)
    off = np.abs(back[at] - m.angles[rows]) > tol
    bad = np.flatnonzero(off.any(axis=1))
    k = int(bad[0]) if bad.size else rows.size
    k = max(k - 1, 0)
    t_r = float(t[rows[k]]) if rows.size else t0
    steps = int(round((t0 - t_r) / h))
    state = simulate_from(rig[0], fr[0], x0, 0.0, 0.0, -h, steps + 1, 1)[-1] if steps else x0[:2]
    return {"time_s": t_r, "motion_plain_s": t_start, "angles_rad": [float(v) for v in state],
            "found": bool(bad.size)}


@blas_on_one_thread
def identify_multiple_shooting(m: Measurement, progress: Progress | None = None, *,
                               prior: RigPrior | None = None,
                               extras: tuple[str, ...] | None = None) -> IdentificationResult:
    """Friction, the rig's identifiable quantities and the release of one capture.

    extras: the extra terms to fit (EXTRA_TERMS); None: chosen by the diagnostics.
    """
    report = progress or no_progress
    # once after an install, out of process and outside the compute time
    compile_s = ensure_compiled("furuta", lambda f, msg: report(0.05 * f, msg))
    t_start = time.perf_counter()
    report(0.0, "multiple shooting")
    fit, t_motion, tried = select_model(
        m, prior, extras=extras, progress=lambda f, msg: report(0.05 + 0.85 * f, msg))
    report(0.92, "goodness of fit")
    whole, per_segment, response = _stitched_fit(m, fit)
    chosen_extras = extra_estimates(fit)
    n_rig = len(RIG_VARIABLES) + 1
    diagnostics: dict[str, Any] = {
        "friction_laws": {n: law for n, law in zip(JOINT_NAMES, fit.problem.laws)},
        "cramer_rao": _cramer_rao(fit),
        "within_rig_sd": _within_rig(fit),
        "extra_terms": chosen_extras,
        "models_tried": tried,
        "release": _release(m, fit, t_motion),
        "segments": per_segment,
        "noise_rad": {n: float(s) for n, s in zip(JOINT_NAMES, fit.noise)},
        "residual_over_noise": {n: round(float(x), 3) for n, x in zip(JOINT_NAMES, fit.excess)},
        "residual_rms_rad": {n: float(s) for n, s in zip(JOINT_NAMES, fit.residual_rms)},
        "covariance_inflation": fit.inflation,
        "evaluations": fit.nfev, "jacobians": fit.njev, "solver_message": fit.message,
        # once after an install: the kernels compiled ahead, not in compute_seconds
        "compile_seconds": round(compile_s, 2),
    }
    warning = excess_warning(fit.excess, JOINT_NAMES)
    diagnostics["warnings"] = [warning + " (with every extra term the diagnostics asked for)"
                               ] if warning else []
    parameters = _friction_estimates(fit, tried)
    rig = {**rig_estimates(fit.z[:n_rig], fit.cov[:n_rig, :n_rig], fit.problem.prior),
           **_extra_rig_estimates(chosen_extras)}
    # the estimator's whole work: the fit, its goodness over the capture, the release and
    # the estimates (0.2-0.3 s after the fit itself, once left out)
    elapsed = time.perf_counter() - t_start
    return IdentificationResult.of_measurement(
        m, method=ESTIMATOR, parameters=parameters, fit_percent=whole,
        compute_seconds=elapsed, diagnostics=diagnostics, rig=rig, response=response)


__all__ = ["STRIBECK_NAMES", "identify_multiple_shooting", "segment_angles"]
