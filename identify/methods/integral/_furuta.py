"""The Furuta method "integral": equivalent linear damping and stiffness per joint and segment.

Each joint is treated on its own as theta'' + c(t) theta' + k(t) (theta - theta_eq) = 0
(seed 004 eq. 4 with u = 0 and a constant forcing e_i = k_i theta_eq,i per segment for the
equilibrium offset), c and k piecewise constant over `segments` equal segments of its
free decay (release to the end of its motion). What comes out is a picture of how the
friction departs from viscous: a viscous joint has one c at every amplitude; Coulomb
friction F_c acts, by its describing function, like c_eq = 4 F_c / (pi omega A) (per unit
inertia), so c_eq grows as the amplitude A falls. The table of c_i against A_i is fitted
by c_i = c_v + (4 / pi) f_c / (omega_i A_i), omega_i = sqrt(k_i), for the split.

The Brown-McPhee parameters are not identified (reported identifiable = False). Goodness
of fit (seed 000 eq. 53): the identified piecewise-linear model of each joint, decoupled,
simulated exactly from the release (rest pose, zero velocity) through the joins, against
the measured angles at the capture's own rate. The coupling between the joints is not in
that model: a joint driven by the other one (the arm, by the swinging pendulum) fits poorly,
and its c_i, k_i describe the driven motion rather than the joint alone.
"""

from __future__ import annotations

import math
import time
from typing import Any, SupportsFloat

import numpy as np

from ..._progress import Progress, no_progress
from ...model import JOINT_NAMES, PARAM_NAMES, QUANTUM
from ...results import IdentificationResult, ParameterEstimate, fit_percent
from ...signal import Decimated, Measurement, decimate, find_release
from .._names import INTEGRAL
from .._pipeline import StartState, decay_start_s, release_state
from ._core import integral_identify
from ._fit import IntegralFit
from ._piecewise import simulate_piecewise

METHOD = INTEGRAL
NOTE = ("integral reconstruction identifies an equivalent linear damping and stiffness per "
        "segment, not the Brown-McPhee parameters")
#: a joint has stopped once it stays within this fraction of its largest excursion
#: (or 5 encoder counts) of its final angle
STOP_FRACTION = 0.01


def _num(x: SupportsFloat) -> float | None:
    """x as a float, None if not finite (JSON has no NaN)."""
    x = float(x)
    return x if math.isfinite(x) else None


def _motion_end(q: np.ndarray, quantum: float) -> int:
    """Last row where the joint is farther from its final angle than the stop threshold."""
    dev = np.abs(q - q[-1])
    thr = max(5.0 * quantum, STOP_FRACTION * float(dev.max()))
    moving = np.flatnonzero(dev > thr)
    return int(moving[-1]) if moving.size else 0


def describing_function_split(c: np.ndarray, k: np.ndarray, amp: np.ndarray) -> dict:
    """Fit c_i = c_v + (4/pi) f_c / (omega_i A_i) (c_v, f_c >= 0): viscous and Coulomb parts.

    Both are per unit inertia: c_v in 1/s (mu_v / J), f_c in rad/s^2 (Coulomb torque / J).
    """
    x = 4.0 / (math.pi * np.sqrt(k) * amp)
    ok = np.isfinite(x) & np.isfinite(c)
    if ok.sum() < 3:
        return {"viscous_per_inertia": None, "coulomb_per_inertia": None, "rms_misfit": None}
    a = np.column_stack([np.ones(ok.sum()), x[ok]])
    from scipy.optimize import nnls  # on use: scipy.optimize is slow to import

    sol, rnorm = nnls(a, c[ok])
    return {"viscous_per_inertia": float(sol[0]), "coulomb_per_inertia": float(sol[1]),
            "rms_misfit": float(rnorm / math.sqrt(ok.sum()))}


def identify_integral(m: Measurement, progress: Progress | None = None,
                      segments: int = 8) -> IdentificationResult:
    """Equivalent damping and stiffness of each joint against amplitude (seed 004)."""
    report = progress or no_progress
    t_start = time.perf_counter()
    report(0.0, "finding the release")
    rel = find_release(m)
    t0 = decay_start_s(m, rel)
    quantum = m.resolution_rad or QUANTUM
    report(0.1, "decimating")
    d = decimate(m, t0, 1000.0)
    rows = np.flatnonzero(m.t >= t0 - 1e-12)
    fits: dict[str, float | None] = {}
    joints: dict[str, dict[str, Any]] = {}
    validation_s = 0.0  # every method: the estimate is timed, not its validation
    for j, name in enumerate(JOINT_NAMES):
        report(0.2 + 0.35 * j, f"integral reconstruction: {name}")
        last = _motion_end(d.q[:, j], quantum)
        fit, why = _fit_joint(d, j, last, segments)
        if fit is None:
            fits[name] = float("nan")
            joints[name] = {"identified": False, "note": why}
            continue
        table, amps = _segment_table(fit, d, j, segments)
        t_check = time.perf_counter()
        fit_pct = _joint_fit_percent(m, rows, fit, release_state(rel), j)
        validation_s += time.perf_counter() - t_check
        fits[name] = fit_pct
        joints[name] = _joint_report(fit, table, amps, float(d.t[last]), fit_pct)
    elapsed = time.perf_counter() - t_start - validation_s
    report(1.0, "done")
    params = {n: ParameterEstimate(value=None, ci95=None, identifiable=False, note=NOTE)
              for n in PARAM_NAMES}
    return IdentificationResult.of_measurement(
        m, method=METHOD, parameters=params,
        fit_percent=fits, compute_seconds=elapsed,
        diagnostics={
            "model": "theta'' + c_i theta' + k_i (theta - theta_eq,i) = 0 per joint, "
                     "decoupled; c_i, k_i > 0; C0 continuity at the joins (seed 004)",
            "release_time_s": t0,
            "released_from_rest": rel.at_rest,
            "decimated_rate_hz": 1.0 / d.h,
            "segments": segments,
            "joints": joints,
            "notes": [
                "c_1_s, k_1_s2: theta'' + c theta' + k (theta - equilibrium) = 0 per segment; "
                "damping_ratio = c / (2 sqrt k); amplitude_rad = half the peak-to-peak",
                "c_std, k_std propagate the measurement noise only; the decoupled model's "
                "own error is larger: judge it by fit_percent",
                "describing_function: c = viscous + (4/pi) coulomb / (omega A), per unit "
                "inertia; Coulomb friction makes c grow as the amplitude A falls",
            ],
        },
    )


def _fit_joint(d: Decimated, j: int, last: int, segments: int
               ) -> tuple[IntegralFit | None, str]:
    """Joint j's decoupled model fitted to its decimated decay up to row `last`: the
    release to the end of its motion in `segments` equal segments of at least 0.1 s.

    Returns the fit, or None and why not.
    """
    q = d.q[:, j]
    span = float(d.t[last] - d.t[0])
    if span < segments * 0.1:
        return None, f"moves for {span:.3g} s only: too short for {segments} segments of 0.1 s"
    bounds = np.linspace(d.t[0], d.t[last], segments + 1)
    try:
        return integral_identify(d.t[:last + 1], q[:last + 1], segments=bounds,
                                 offset=True), ""
    except ValueError as exc:  # e.g. a segment lost to a gap in the data
        return None, str(exc)


def _segment_table(fit: IntegralFit, d: Decimated, j: int, segments: int
                   ) -> tuple[list[dict[str, Any]], list[float]]:
    """Per segment: its span, amplitude A (half the peak-to-peak of joint j), c, k with
    their standard deviations, damping ratio c / (2 sqrt k), omega = sqrt k and the
    equilibrium; and the amplitudes."""
    q = d.q[:, j]
    table, amps = [], []
    for i in range(segments):
        sel = (d.t >= fit.boundaries[i]) & (d.t <= fit.boundaries[i + 1])
        amps.append(0.5 * float(np.ptp(q[sel])))
        table.append({
            "segment": i, "t_start_s": float(fit.boundaries[i]),
            "t_end_s": float(fit.boundaries[i + 1]), "amplitude_rad": amps[-1],
            "c_1_s": float(fit.c[i]), "c_std": _num(fit.coef_std[i, 0]),
            "k_1_s2": float(fit.k[i]), "k_std": _num(fit.coef_std[i, 1]),
            "damping_ratio": float(fit.damping_ratio[i]),
            "omega_rad_s": float(math.sqrt(fit.k[i])),
            "equilibrium_rad": float(fit.equilibrium[i]),
        })
    return table, amps


def _joint_fit_percent(m: Measurement, rows: np.ndarray, fit: IntegralFit,
                       start: StartState | None, j: int) -> float:
    """Seed 000 eq. 53 of joint j: its piecewise model simulated exactly over the capture.

    From the release state when released from rest; a capture in motion from the fitted
    model's own initial state at its first boundary.
    """
    if start is not None:
        x0, ts = (float(start.q[j]), float(start.v[j])), start.t
    else:
        x0, ts = (float(fit.initial_state[0, 0]), float(fit.initial_state[0, 1])), \
            float(fit.boundaries[0])
    sim, _ = simulate_piecewise(m.t[rows], fit.boundaries, fit.c, fit.k, x0, ts,
                                fit.equilibrium)
    ok = np.isfinite(sim)
    return float(fit_percent(sim[ok], m.angles[rows[ok], j]))


def _joint_report(fit: IntegralFit, table: list[dict[str, Any]], amps: list[float],
                  motion_end_s: float, fit_pct: float) -> dict[str, Any]:
    """One joint's diagnostics: the segment table, fits, residuals, noise, active
    constraints and the describing-function split of c against amplitude."""
    used = np.isfinite(fit.reconstructed)
    return {
        "identified": True,
        "segments": table,
        "motion_end_s": motion_end_s,
        "fit_percent": _num(fit_pct),
        "reconstruction_fit_percent": _num(fit_percent(fit.reconstructed[used],
                                                       fit.theta[used])),
        "residual_rms_rad": float(np.sqrt(np.mean(fit.residuals[used] ** 2))),
        "noise_std_rad": _num(fit.noise_std),
        "active_constraints": list(fit.active),
        "describing_function": describing_function_split(fit.c, fit.k, np.array(amps)),
    }
