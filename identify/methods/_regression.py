"""Friction from inverse dynamics and linear least squares: the "regression" method.

(Its per-joint ordinary least-squares cousin, the start of output-error fitting, is
identify.methods.regression_estimate.)

Friction torque implied by the motion, f = -(H q'' + B + G) (model.md), with q' and q''
from the Holoborodko differentiators (N = 51, 101 at 1 kHz, seed 002). Per joint i the
Brown-McPhee model (model.md) is

    f_i = Fn_i mu_d_i tanh(4 r) + Fn_i (mu_s_i - mu_d_i) r / (r^2/4 + 3/4)^2
          + mu_v_i tanh(4 Fn_i / Fn_t_i) q'_i,                      r = q'_i / omega_t_i.

What is linear in the parameters:
  * with omega_t_i and Fn_t_i fixed, f_i is linear in (mu_d_i, mu_s_i, mu_v_i): the bump
    enters as mu_s_i Fn_i bump(r) - mu_d_i Fn_i bump(r). omega_t_i (inside tanh and the
    bump) and Fn_t_i (inside tanh) enter non-linearly and cannot be part of a linear model.
  * mu_s_i, though linear once omega_t_i is fixed, is not included: the bump only acts for
    |q'| below a few omega_t (5e-3 rad/s here), under the velocity resolution (~3e-3 rad/s
    rms at 1 kHz) and exactly where the 101-point acceleration filter smears the friction
    step of every reversal. An estimate would be decided by the assumed omega_t, not by
    the data.
  * What is included: away from reversals (|q'_i| > v_min, and more than (101-1)/2 samples
    from any sign change of q'_i, where q'' is contaminated by the friction step) the
    bump has decayed (it is ~16/r^3 for large r: with omega_t = 5e-3 rad/s, 0.18 at
    v_min = 0.02 rad/s, 0.015 at 0.05, 0.002 at 0.1, times (mu_s - mu_d) Fn; few samples
    lie that close to v_min once reversals are cut out) and tanh(4 r) = sign(q'_i), so
        f_i = mu_d_i [Fn_i sign(q'_i)] + mu_v_i' q'_i,   mu_v_i' = mu_v_i tanh(4 Fn_i/Fn_t_i),
    linear in (mu_d_i, mu_v_i'); mu_v_i' = mu_v_i whenever Fn_t_i << Fn_i (the shared model).

Both joints are stacked into one system Y = W theta (seed 002 eq. 20), theta = (mu_d0,
mu_v0, mu_d1, mu_v1), rows joint-major, solved by OLS and by the seed's WLS (each joint's
rows weighted by 1/sigma_i^2 from the OLS residuals;
identify.solvers.group_weighted_least_squares). W is block diagonal (no parameter is
shared between joints), so WLS gives the same theta as OLS; it changes the covariance:
one pooled sigma^2 (OLS) against one per joint (WLS).

Intervals. Eq. 24 assumes white residuals. These residuals are mostly encoder
quantisation noise passed through the second-derivative filter: strongly correlated over
~5 samples, with negative lobes, and almost no power at the slow frequencies of the
regressors. Inflating sigma^2 by the residual's integrated autocorrelation time (tau ~ 6.5
on the public case; reported as `residual_autocorrelation_time`) would widen the intervals
by ~2.5x although they are already too wide. The default (ci="hac") therefore uses the
Newey-West covariance (identify.solvers.hac_covariance, Bartlett window of 1 s),
whose per-parameter ratio to eq. 24 is the effective-sample-size factor n / n_eff actually
reported (`variance_factor`): it accounts for the autocorrelation of the residuals *and*
of the regressors, and can be below 1. ci="ess" gives the conservative inflation by the
residual's autocorrelation time instead. Measured on 10 simulated captures (releases at
100-140 deg, arm at 0 and 0.37 deg, Table III truth, 35 s): the spread (std) of the
estimates was 0.03 % (mu_d0), 1.3 % (mu_v0), 0.24 % (mu_d1), 0.21 % (mu_v1); the mean
standard deviations reported were, HAC: 0.12, 5.1, 0.31, 0.31 %; eq. 24 (white): 0.26,
11.7, 0.94, 1.1 %; eq. 24 x tau: 0.65, 30, 2.4, 2.9 %. HAC is still conservative (1.3-4x)
and its 95 % intervals held the truth in 40 of 40 cases. No interval covers a bias of the
model (the neglected Stribeck bump, filter distortion), which is why the samples near
reversals are cut out (measured bias: mean error 0.002, 0.5, 0.06, -0.03 %; the largest
single error 0.07, 2.3, 0.53, 0.44 %).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._progress import Progress, no_progress
from ..model import PARAM_NAMES, RigParams, inverse_dynamics, joint_of, joint_params, param_name
from ..results import IdentificationResult, ParameterEstimate, fit_percent, response_of
from ..signal import Decimated, Measurement, decimate, find_release
from ..solvers import (
    LinearFit,
    group_weighted_least_squares,
    hac_covariance,
    integrated_autocorrelation,
)
from ._names import REGRESSION
from ._pipeline import decay_start_s, first_defined_state, release_state, simulate_capture

METHOD = REGRESSION
#: |q'| below this (rad/s) is left out: Coulomb switch and Stribeck bump (model.md)
V_MIN = 0.02
#: the acceleration filter's half-width (N = 101): samples this close to a reversal are left out
REVERSAL_GUARD = 50
#: Bartlett window of the HAC covariance, seconds
HAC_WINDOW_S = 1.0
#: assumed transition velocity when simulating the fitted model, rad/s
OMEGA_T_ASSUMED = 1e-2
#: the parameters of the linear model, in the order of its columns
LINEAR_NAMES = joint_params("mu_d", "mu_v")

_MU_S_NOTE = ("not identifiable by this method: mu_s acts only through the Stribeck bump at "
              "|velocity| of a few omega_t, below the velocity resolution and inside the "
              "samples cut out around reversals; simulated with mu_s = mu_d (no Stribeck "
              "excess)")
_OMEGA_T_NOTE = ("not identifiable by this method: omega_t enters non-linearly (inside tanh "
                 "and the Stribeck bump) and only near reversals, which the linear model "
                 "excludes; with mu_s = mu_d it only sets the width of the Coulomb switch, "
                 "assumed below the velocity resolution")
_FN_T_NOTE = ("not identifiable: with a constant normal force only mu_v*tanh(4 Fn/Fn_t) "
              "enters the model; mu_v is reported with tanh = 1 (Fn_t <= Fn/5) and the "
              "simulation uses the assumed value")



def reversal_mask(v: np.ndarray, guard: int) -> np.ndarray:
    """True within `guard` samples of a sign change of v (NaN rows are skipped over)."""
    v = np.asarray(v, dtype=np.float64)
    idx = np.flatnonzero(np.isfinite(v))
    near = np.zeros(v.size, dtype=bool)
    if idx.size < 2:
        return near
    s = np.sign(v[idx])
    change = np.zeros(v.size)
    change[idx[1:][s[1:] != s[:-1]]] = 1.0
    change[idx[:-1][s[1:] != s[:-1]]] = 1.0
    if guard > 0:
        change = np.convolve(change, np.ones(2 * guard + 1), mode="same")
    return change > 0


@dataclass(frozen=True)
class FrictionRegression:
    """The stacked linear friction regression of one capture."""

    ols: LinearFit
    wls: LinearFit
    W: np.ndarray  # (rows, 4)
    joint: np.ndarray  # (rows,) 0 arm, 1 pendulum
    position: np.ndarray  # (rows,) decimated grid index of each row
    points: tuple[int, int]


def friction_regression(d: Decimated, rig: RigParams, v_min: float = V_MIN,
                        guard: int = REVERSAL_GUARD) -> FrictionRegression:
    """OLS and WLS of f_i = mu_d_i Fn_i sign(q'_i) + mu_v_i q'_i on both joints, stacked."""
    ok = np.isfinite(d.a).all(axis=1) & np.isfinite(d.v).all(axis=1)
    f = np.full_like(d.q, np.nan)
    if ok.any():
        f[ok] = inverse_dynamics(rig.as_array(), d.q[ok], d.v[ok], d.a[ok])
    fn = (rig.fn0, rig.fn1)
    ws, ys, js, ps, pts = [], [], [], [], []
    for j in range(2):
        v = np.where(ok, d.v[:, j], np.nan)
        sel = ok & np.isfinite(f[:, j]) & (np.abs(d.v[:, j]) > v_min) & ~reversal_mask(v, guard)
        wj = np.zeros((int(sel.sum()), 4))
        wj[:, LINEAR_NAMES.index(param_name("mu_d", j))] = fn[j] * np.sign(d.v[sel, j])
        wj[:, LINEAR_NAMES.index(param_name("mu_v", j))] = d.v[sel, j]
        ws.append(wj)
        ys.append(f[sel, j])
        js.append(np.full(wj.shape[0], j))
        ps.append(d.grid[sel])
        pts.append(int(sel.sum()))
    if min(pts) < 10:
        raise ValueError(f"too few samples away from reversals for a regression: {pts}")
    w = np.vstack(ws)
    joint = np.concatenate(js)
    ols, wls = group_weighted_least_squares(w, np.concatenate(ys), joint, LINEAR_NAMES)
    return FrictionRegression(ols=ols, wls=wls, W=w, joint=joint, position=np.concatenate(ps),
                              points=(pts[0], pts[1]))


def identify_regression(m: Measurement, progress: Progress | None = None, weighted: bool = True,
                        *, v_min: float = V_MIN, ci: str = "hac",
                        decimate_to_hz: float = 1000.0) -> IdentificationResult:
    """Coulomb + viscous friction of both joints by linear least squares (method "regression").

    weighted: report the seed's WLS (per-joint weights) rather than OLS; same estimates
    here, different covariance (see the module docstring). ci: "hac" (Newey-West, default)
    or "ess" (eq. 24 inflated by the residual autocorrelation time of each joint).
    """
    if ci not in ("hac", "ess"):
        raise ValueError(f"ci must be 'hac' or 'ess', got {ci!r}")
    report = progress or no_progress
    t_start = time.perf_counter()
    report(0.0, "finding the release")
    rel = find_release(m)
    report(0.1, "decimating and differentiating")
    d = decimate(m, decay_start_s(m, rel), decimate_to_hz)
    report(0.3, "regression")
    reg = friction_regression(d, m.rig, v_min)
    fit = reg.wls if weighted else reg.ols
    iv = _intervals(fit, reg, d, ci)
    report(0.5, "goodness of fit")
    params, used = _linear_estimates(fit, iv.half)
    fn_t_assumed = min(m.rig.fn0, m.rig.fn1) / 100.0
    params.update(_outside_the_linear_model(used, fn_t_assumed))
    params = {name: params[name] for name in PARAM_NAMES}
    sim_params = np.array([p.value if p.value is not None else p.assumed
                           for p in params.values()], dtype=np.float64)
    start = release_state(rel) or first_defined_state(d)
    elapsed = time.perf_counter() - t_start  # every method: the estimate, not its validation
    rows, sim = simulate_capture(m, sim_params, start.x0, start.t)
    fitp = fit_percent(sim, m.angles[rows])
    report(1.0, "done")
    diagnostics = {
        "release_time_s": float(start.t),
        "released_from_rest": rel.at_rest,
        "initial_state": [float(x) for x in start.x0],
        **_diagnostics(fit, reg, iv, weighted=weighted, v_min=v_min, ci=ci, h=d.h,
                       fn_t_assumed=fn_t_assumed),
    }
    return IdentificationResult.of_measurement(
        m, method=METHOD, parameters=params,
        fit_percent={"arm": float(fitp[0]), "pendulum": float(fitp[1])}, compute_seconds=elapsed,
        diagnostics=diagnostics,
        response=response_of([(m.t[rows], m.angles[rows], sim)], ("arm", "pendulum")))


@dataclass(frozen=True)
class _Intervals:
    """95 % half-widths of the linear parameters and the variance factors behind them."""

    half: np.ndarray  # (4,) in LINEAR_NAMES order
    factor: np.ndarray  # (4,) the factor used: HAC or effective sample size
    hac_factor: np.ndarray  # (4,) diag(HAC covariance) / diag(eq. 24 covariance)
    taus: list[float]  # residual autocorrelation time per joint


def _intervals(fit: LinearFit, reg: FrictionRegression, d: Decimated, ci: str) -> _Intervals:
    """Half-widths 1.96 sqrt(var_24 x factor), var_24 the white-noise variance of eq. 24.

    factor: diag(Cov_HAC) / var_24 with the Newey-West covariance (Bartlett window of
    HAC_WINDOW_S, joints uncorrelated), or the residual autocorrelation time tau of the
    parameter's joint (ci="ess", identify.solvers.integrated_autocorrelation).
    """
    white_var = np.diag(fit.covariance)
    taus = _autocorrelation_times(fit, reg, d)
    lags = int(round(HAC_WINDOW_S / d.h))
    hac = hac_covariance(fit, reg.W, lags, groups=reg.joint, position=reg.position)
    with np.errstate(divide="ignore", invalid="ignore"):
        hac_factor = np.diag(hac) / white_var
    ess_factor = np.array([taus[joint_of(name)] for name in LINEAR_NAMES])
    factor = hac_factor if ci == "hac" else ess_factor
    std = np.sqrt(white_var * factor)
    return _Intervals(half=1.959963984540054 * std, factor=factor, hac_factor=hac_factor,
                      taus=taus)


def _autocorrelation_times(fit: LinearFit, reg: FrictionRegression, d: Decimated
                           ) -> list[float]:
    """Integrated autocorrelation time of each joint's residuals on the decimated grid
    (NaN where a sample was left out), summed over lags up to HAC_WINDOW_S."""
    taus = []
    for j in range(2):
        sel = reg.joint == j
        series = np.full(int(d.grid[-1] - d.grid[0]) + 1, np.nan)
        series[reg.position[sel] - d.grid[0]] = fit.residuals[sel]
        tau, _ = integrated_autocorrelation(series, max_lag=int(HAC_WINDOW_S / d.h))
        taus.append(tau)
    return taus


def _linear_estimates(fit: LinearFit, half: np.ndarray
                      ) -> tuple[dict[str, ParameterEstimate], dict[str, float]]:
    """mu_d, mu_v of both joints: value +- half, identifiable if the interval excludes 0.

    Also returns the values a simulation uses (negative or undefined ones as 0).
    """
    poor = set(fit.poorly_identified_names)
    est = dict(zip(LINEAR_NAMES, (float(x) for x in fit.theta)))
    params: dict[str, ParameterEstimate] = {}
    used: dict[str, float] = {}
    for k, name in enumerate(LINEAR_NAMES):
        val, h = est[name], float(half[k])
        ci95 = (val - h, val + h) if math.isfinite(h) else None
        used[name] = max(val, 0.0) if math.isfinite(val) else 0.0
        if not (math.isfinite(val) and math.isfinite(h) and val - h > 0):
            params[name] = ParameterEstimate(
                value=None, ci95=ci95, identifiable=False, assumed=used[name],
                note="not identifiable from this capture: the 95 % interval does not lie "
                     "above zero")
            continue
        notes = []
        if name.startswith("mu_v"):
            notes.append("coefficient of the viscous term with tanh(4 Fn/Fn_t) = 1")
        if name in poor:
            notes.append("poorly identified (seed 002: relative std more than 10x the smallest)")
        params[name] = ParameterEstimate(value=val, ci95=ci95, identifiable=True,
                                         note="; ".join(notes))
    return params, used


def _outside_the_linear_model(used: dict[str, float], fn_t_assumed: float
                              ) -> dict[str, ParameterEstimate]:
    """mu_s, omega_t, Fn_t of both joints: not identifiable here, with what is assumed
    (mu_s = mu_d, omega_t = OMEGA_T_ASSUMED, Fn_t = fn_t_assumed)."""
    params: dict[str, ParameterEstimate] = {}
    for j in (0, 1):
        mu_d = used[param_name("mu_d", j)]
        params[param_name("mu_s", j)] = ParameterEstimate(
            value=None, identifiable=False, note=_MU_S_NOTE, assumed=mu_d)
        params[param_name("omega_t", j)] = ParameterEstimate(
            value=None, identifiable=False, note=_OMEGA_T_NOTE, assumed=OMEGA_T_ASSUMED)
        params[param_name("Fn_t", j)] = ParameterEstimate(
            value=None, identifiable=False, note=_FN_T_NOTE, assumed=fn_t_assumed)
    return params


def _clean(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def _diagnostics(fit: LinearFit, reg: FrictionRegression, iv: _Intervals, *, weighted: bool,
                 v_min: float, ci: str, h: float, fn_t_assumed: float) -> dict[str, Any]:
    """The seed 002 report of the regression (condition, rank, relative std, 10x rule),
    the interval method and its factors, residuals, both fits and what was assumed."""
    poor = set(fit.poorly_identified_names)
    return {
        "estimator": "WLS" if weighted else "OLS",
        "linear_model": ("f_i = mu_d_i Fn_i sign(v_i) + mu_v_i v_i for |v_i| > v_min and "
                         "away from reversals; mu_s, omega_t, Fn_t are not in it"),
        "v_min_rad_s": v_min,
        "reversal_guard_s": REVERSAL_GUARD * h,
        "points": {"arm": reg.points[0], "pendulum": reg.points[1]},
        "condition_number": _clean(fit.condition),
        "condition_number_scaled": _clean(fit.condition_scaled),
        "rank": fit.rank,
        "relative_std_percent": {n: _clean(r) for n, r in
                                 zip(LINEAR_NAMES, fit.relative_std_percent)},
        "poorly_identified": sorted(poor),
        "poorly_identified_rule": ("seed 002: a parameter whose relative standard "
                                   "deviation (eq. 24) exceeds 10x the smallest"),
        "interval_method": ("Newey-West (Bartlett, 1 s)" if ci == "hac" else
                            "eq. 24 x residual autocorrelation time"),
        "variance_factor": {n: _clean(x) for n, x in zip(LINEAR_NAMES, iv.factor)},
        "hac_variance_factor": {n: _clean(x) for n, x in zip(LINEAR_NAMES, iv.hac_factor)},
        "residual_autocorrelation_time": {"arm": iv.taus[0], "pendulum": iv.taus[1]},
        "residual_rms": {
            "arm": float(np.sqrt(np.mean(fit.residuals[reg.joint == 0] ** 2))),
            "pendulum": float(np.sqrt(np.mean(fit.residuals[reg.joint == 1] ** 2))),
        },
        "ols": reg.ols.as_dict(),
        "wls": reg.wls.as_dict(),
        "assumed_for_simulation": {"mu_s": "mu_d", "omega_t": OMEGA_T_ASSUMED,
                                   "Fn_t": fn_t_assumed},
    }
