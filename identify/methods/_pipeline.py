"""What the methods share: where a decay starts, a capture made ready for fitting, its result.

Every method that simulates the capture starts where release_state says (the rest pose
at the release time); those that simulate the full model do it with simulate_capture.
The output-error methods (grey-box, output-error, simplex) share the rest:

1. Find the rest pose and the release time (identify.signal.find_release).
2. Decimate 10 kHz -> 1 kHz and differentiate (Holoborodko N = 51 and 101, seed 002).
3. Regression: Coulomb + viscous friction per joint from inverse dynamics: a start close
   enough that output error converges (from the seed's 10x guesses it does not).
4. After the fit: 95 % intervals from the log-parameter covariance (inflated for
   correlated residuals), Fn_t flagged not identifiable (only mu_v tanh(4 Fn/Fn_t)
   enters the model when the normal force is constant), goodness of fit (seed 000
   eq. 53) from a fresh simulation at the capture's own sample rate, and the
   diagnostics every output-error result carries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import (
    PARAM_NAMES,
    QUANTUM,
    joint_params,
    param_index,
    param_indices,
    param_name,
    quantisation_rms,
    simulate_from,
    term_of,
)
from ..results import IdentificationResult, ParameterEstimate, Response, fit_percent, response_of
from ..signal import Decimated, Measurement, Release, decimate, find_release
from ._joint_regression import JointRegression, regression_estimate
from ._oe_problem import LOG_BOUNDS, Experiment, InitialState, OEFit
from .estimator import UNIDENTIFIABLE_FACTOR, too_wide

#: what output error fits: mu_d, mu_s, mu_v, omega_t of both joints (Fn_t is not identifiable)
FREE_NAMES = joint_params("mu_d", "mu_s", "mu_v", "omega_t")
#: the same as indices in PARAM_NAMES, as the fitting machinery takes them
FREE = param_indices(FREE_NAMES)
FN_T = joint_params("Fn_t")
#: mu_s and omega_t trade off along a curved, sometimes multimodal valley: in the Monte
#: Carlo of bench/bench_coverage.py their Wald intervals wider than +-5 % covered the truth
#: far less than 95 % of the time (near-equal minima), narrower ones did
STRIBECK = joint_params("mu_s", "omega_t")
STRIBECK_MAX_FACTOR = 1.05
FN_T_NOTE = ("not identifiable: with a constant normal force only mu_v*tanh(4 Fn/Fn_t) "
             "enters the model; the fit assumes tanh = 1 (Fn_t <= Fn/5) and simulates with "
             "the assumed value")
#: the output-error start where the regression gives no usable value, per friction term
GENERIC_START = {"mu_d": 1e-3, "mu_s": 1.2e-3, "mu_v": 1e-4, "omega_t": 1e-2, "Fn_t": 0.0}
#: the start's Stribeck excess: mu_s = 1.2 mu_d
START_MU_S_OVER_MU_D = 1.2


# --- where the free decay starts ----------------------------------------------------------

@dataclass(frozen=True)
class StartState:
    """Where a simulation of the capture starts: angles, velocities, time."""

    q: np.ndarray  # (2,) rad, arm and pendulum
    v: np.ndarray  # (2,) rad/s
    t: float  # s on Measurement.t's clock
    at_rest: bool  # released from rest: q the rest pose, v zero, t the release time

    @property
    def x0(self) -> np.ndarray:
        """(theta0, theta1, theta0', theta1'): the simulators' state vector."""
        return np.concatenate([self.q, self.v])


def decay_start_s(m: Measurement, release: Release) -> float:
    """When the free decay starts: the release time, or the first sample if not at rest."""
    return release.time_s if release.at_rest else float(m.t[0])


def release_state(release: Release) -> StartState | None:
    """The state a capture released from rest starts from; None if it begins in motion.

    From rest: the rest pose, zero velocity, at the release time (friction is zero at
    rest, so nothing else is needed). A capture that begins in motion has no such state;
    each method then starts from the first state its own data define, e.g.
    `release_state(rel) or first_defined_state(d)`.
    """
    if not release.at_rest:
        return None
    return StartState(q=release.rest_angles, v=np.zeros(2), t=release.time_s, at_rest=True)


def first_defined_state(d: Decimated) -> StartState:
    """Angles, velocity and time at the first decimated sample whose velocity is defined.

    The velocity is undefined within (N1 - 1)/2 samples of a segment's ends; if it is
    nowhere defined, the first sample with zero velocity.
    """
    first = np.flatnonzero(np.isfinite(d.v).all(axis=1))
    if not first.size:
        return StartState(q=d.q[0], v=np.zeros(2), t=float(d.t[0]), at_rest=False)
    k = int(first[0])
    return StartState(q=d.q[k], v=np.nan_to_num(d.v[k]), t=float(d.t[k]), at_rest=False)


# --- a capture made ready for fitting ------------------------------------------------------

@dataclass(frozen=True)
class Prepared:
    """A capture made ready for fitting: release, decimated data, regression start."""

    m: Measurement
    release: Release
    d: Decimated
    regression: tuple[JointRegression, JointRegression]
    start: np.ndarray  # (10,) regression estimate, Stribeck and Fn_t guesses
    init: InitialState

    @property
    def experiment(self) -> Experiment:
        return Experiment(self.d, self.m.rig, self.init)


def regression_start(regression: tuple[JointRegression, JointRegression], fn_t: float
                     ) -> np.ndarray:
    """The output-error start (10,): mu_d, mu_v from the regression, mu_s = 1.2 mu_d.

    Where a joint's regression gives no positive value, GENERIC_START stands in; every
    Fn_t is fn_t.
    """
    start = np.array([GENERIC_START[term_of(name)] for name in PARAM_NAMES])
    for j, jr in enumerate(regression):
        if np.isfinite(jr.mu_d) and jr.mu_d > 0:
            start[param_index(param_name("mu_d", j))] = jr.mu_d
            # a Stribeck excess to start from
            start[param_index(param_name("mu_s", j))] = START_MU_S_OVER_MU_D * jr.mu_d
        if np.isfinite(jr.mu_v) and jr.mu_v > 0:
            start[param_index(param_name("mu_v", j))] = jr.mu_v
    start[param_indices(FN_T)] = fn_t
    return start


def prepare(m: Measurement, decimate_to_hz: float = 1000.0) -> Prepared:
    """Release detection, decimation, differentiation and the regression start."""
    rel = find_release(m)
    quantum = m.resolution_rad or QUANTUM
    d = decimate(m, decay_start_s(m, rel), decimate_to_hz)
    reg0, reg1 = regression_estimate(d, m.rig)
    # any Fn_t well below Fn saturates tanh(4 Fn/Fn_t); 1/100 of the smaller Fn does
    start = regression_start((reg0, reg1), min(m.rig.fn0, m.rig.fn1) / 100.0)
    s = release_state(rel) or _fit_start_in_motion(d)
    init = InitialState(s.at_rest, s.t, s.q, s.v, quantum)
    return Prepared(m, rel, d, (reg0, reg1), start, init)


def _fit_start_in_motion(d: Decimated) -> StartState:
    """The fit's start when the capture begins in motion: the first decimated sample's
    angles and time with the first defined velocity (the fit refines pose and velocity)."""
    return StartState(q=d.q[0], v=first_defined_state(d).v, t=float(d.t[0]), at_rest=False)


# --- simulating the capture, judging a fit ---------------------------------------------------

def simulate_capture(m: Measurement, params: np.ndarray, x0: np.ndarray, t0: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Simulate the model from (x0, t0) at the capture's own rate; return (rows, angles).

    rows are the measurement rows at or after t0, angles the simulated (len(rows), 2).
    """
    t = m.t
    rows = np.flatnonzero(t >= t0 - 1e-12)
    idx = m.sample_index[rows] - m.sample_index[rows[0]]
    sim = simulate_from(m.rig.as_array(), params, x0, t0, float(t[rows[0]]), 1.0 / m.rate_hz,
                        int(idx[-1]) + 1, 1)
    return rows, sim[idx]


def capture_fit(m: Measurement, oe: OEFit) -> dict[str, float | None]:
    """Seed 000 eq. 53 per joint, simulating the fitted model over the whole capture."""
    return capture_fit_and_response(m, oe)[0]


def capture_fit_and_response(m: Measurement, oe: OEFit
                             ) -> tuple[dict[str, float | None], Response]:
    """`capture_fit`, and the simulated response beside the measured one (one simulation)."""
    rows, sim = simulate_capture(m, oe.params, oe.x0, oe.t0)
    fit = fit_percent(sim, m.angles[rows])
    response = response_of([(m.t[rows], m.angles[rows], sim)], ("arm", "pendulum"))
    return {"arm": float(fit[0]), "pendulum": float(fit[1])}, response


def parameter_estimates(oe: OEFit, free: list[int], fixed: dict[str, str] | None = None
                        ) -> dict[str, ParameterEstimate]:
    """Values with 95 % intervals from the log-parameter covariance, or 'cannot tell'.

    free: the fitted parameters (indices in PARAM_NAMES, as oe.free); every other one is
    reported held fixed, with the note fixed[name] if given.
    """
    fixed = fixed or {}
    params: dict[str, ParameterEstimate] = {}
    for k, name in enumerate(PARAM_NAMES):
        if name in FN_T:
            params[name] = ParameterEstimate(value=None, ci95=None, identifiable=False,
                                             note=FN_T_NOTE, assumed=float(oe.params[k]))
        elif k not in free:
            params[name] = ParameterEstimate(
                value=None, ci95=None, identifiable=False, assumed=float(oe.params[k]),
                note=fixed.get(name, "not identified: held fixed in this fit"))
        else:
            params[name] = _fitted_estimate(name, float(oe.params[k]),
                                            float(oe.log_std[free.index(k)]))
    return params


def _fitted_estimate(name: str, val: float, log_std: float) -> ParameterEstimate:
    """One fitted parameter: the Wald interval val x/ exp(1.96 std(log val)) within its
    fitting bounds, or 'not identifiable' when it ran to a bound, spans more than
    UNIDENTIFIABLE_FACTOR either side, or is a Stribeck parameter wider than
    STRIBECK_MAX_FACTOR."""
    half = 1.96 * log_std
    # A capture with almost no motion leaves log_std huge: exp() of it must not overflow.
    spread = math.exp(min(half, 700.0)) if math.isfinite(half) else math.inf
    lo_b, hi_b = LOG_BOUNDS[param_index(name)]
    ci = None
    if math.isfinite(half):
        ci = (max(val / spread, lo_b), min(val * spread, hi_b))
    at_bound = val <= lo_b * (1 + 1e-6) or val >= hi_b * (1 - 1e-6)
    ok = not too_wide(log_std) and not at_bound
    weak_stribeck = name in STRIBECK and ok and spread > STRIBECK_MAX_FACTOR
    note = ""
    if name.startswith("mu_v"):
        note = "coefficient of the viscous term with tanh(4 Fn/Fn_t) = 1"
    if ci is not None and (ci[0] == lo_b or ci[1] == hi_b):
        note = (note + "; " if note else "") + "interval cut at the fitting bound"
    if at_bound:
        return ParameterEstimate(
            value=None, ci95=ci, identifiable=False, assumed=val,
            note=f"not identifiable from this capture: the fit ran to its bound {val:.3g}"
                 + (" (a transition sharper than the simulation resolves)"
                    if name.startswith("omega_t") else ""))
    if weak_stribeck:
        return ParameterEstimate(
            value=None, ci95=ci, identifiable=False, assumed=val,
            note=(f"not identifiable with confidence: the Wald interval spans x{spread:.2f} and "
                  "mu_s, omega_t trade off along a curved valley with near-equal minima; "
                  "the output-error method gives its profile-likelihood interval"))
    if not ok:
        return ParameterEstimate(
            value=None, ci95=ci, identifiable=False, assumed=val,
            note=(f"not identifiable from this capture: the 95 % interval spans more than "
                  f"a factor {UNIDENTIFIABLE_FACTOR:g} either side"))
    return ParameterEstimate(value=val, ci95=ci, identifiable=True, note=note)


def build_result(method: str, p: Prepared, oe: OEFit, free: list[int], elapsed: float,
                 extra: dict[str, Any] | None = None,
                 parameters: dict[str, ParameterEstimate] | None = None) -> IdentificationResult:
    m = p.m
    reg0, reg1 = p.regression
    corr = oe.correlation()[: len(free), : len(free)]
    diagnostics: dict[str, Any] = {
        "release_time_s": oe.t0,
        "released_from_rest": p.release.at_rest,
        "initial_state": [float(x) for x in oe.x0],
        "regression": {
            "arm": {"mu_d": reg0.mu_d, "mu_v": reg0.mu_v, "points": reg0.points},
            "pendulum": {"mu_d": reg1.mu_d, "mu_v": reg1.mu_v, "points": reg1.points},
        },
        "residual_rms_rad": {"arm": float(oe.residual_rms[0]),
                             "pendulum": float(oe.residual_rms[1])},
        "residual_autocorrelation": oe.extras.get("whiteness"),
        "covariance_inflation": oe.inflation,
        "evaluations": oe.nfev,
        "jacobians": oe.extras.get("jacobians"),
        "converged": oe.success,
        "solver_message": oe.message,
        "max_abs_correlation": float(np.max(np.abs(corr - np.eye(len(free))))) if free else 0.0,
        "correlation": {"names": [PARAM_NAMES[k] for k in free],
                        "matrix": np.round(corr, 4).tolist()},
        "mean_substeps": oe.extras.get("substep_mean"),
    }
    diagnostics.update(extra or {})
    fit, response = capture_fit_and_response(m, oe)
    return IdentificationResult.of_measurement(
        m, method=method, parameters=parameters or parameter_estimates(oe, free),
        fit_percent=fit, compute_seconds=elapsed, diagnostics=diagnostics, response=response,
    )


def noise_floor(p: Prepared) -> float:
    """Rms of encoder quantisation (identify.model.quantisation_rms)."""
    return quantisation_rms(p.init.quantum)
