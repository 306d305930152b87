"""The stages every rig kind's identification shares.

A Furuta capture and a single or n-link record go through the same steps; what differs
per kind is only its model (simulator, regressor, parameters) and the friction laws or
extra terms it tries:

1. Where the free motion starts (identify.signal.motion_start): a hold and a hand letting
   go stay out, as do spans held out for validation (`free_motion`).
2. Decimation to the fit's rate by block means and Holoborodko derivatives (N = 51, 101,
   seed 002) per gap-free run (identify.signal.decimate), the means then made point
   values (identify.signal.point_values); each run a slice (`runs`).
3. Noise per joint (`noise_sigma`), the weight of each joint's residuals.
4. A start from the kind's regression on the derivatives.
5. Output error over segments, each from its own state (`cubic_state` to start):
   Levenberg-Marquardt on a BlockJacobian (identify.solvers).
6. Intervals: (J^T J)^-1 of the weighted residuals, the data's part inflated by the
   residuals' correlation (`joint_inflation`); log-fitted values by `log_interval`.
7. Model choice by Schwarz's criterion (`schwarz_bic`) and the adequacy check
   (`ADEQUATE_EXCESS`, `excess_warning`): residuals this far above the noise mean the
   model misses something, and the intervals are widened by that factor (`widening`).
8. One result shape, identify.results.IdentificationResult.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ...model import quantisation_rms
from ...results import ADEQUATE_EXCESS
from ...signal import (
    Decimated,
    Record,
    contiguous_segments,
    decimate,
    motion_start,
    point_values,
    savgol_coefficients,
    savgol_filter,
)
from .._oe_problem import residual_inflation

#: a gap-free run shorter than this many decimated samples is left out
MIN_RUN = 10


def free_motion(record: Record, exclude: Sequence[tuple[float, float]] = ()) -> Record:
    """The record from its free motion on (identify.signal.motion_start), without the spans
    `exclude` (seconds on the record's own clock, t0_s + t), which become gaps."""
    t = record.t0_s + record.t
    keep = t >= record.t0_s + motion_start(record) - 1e-9
    for lo, hi in exclude:
        keep &= ~((t >= lo) & (t <= hi))
    if keep.sum() < 10:
        raise ValueError("no free motion left to fit outside the held-out spans")
    if keep.all():
        return record
    first = int(np.argmax(keep))
    return replace(record, angles=record.angles[keep], sample_index=record.sample_index[keep],
                   t0_s=float(t[first]))


def runs(d: Decimated, min_rows: int = MIN_RUN) -> list[slice]:
    """The decimated record's gap-free runs of at least `min_rows` samples."""
    return [s for s in contiguous_segments(d.grid) if s.stop - s.start >= min_rows]


def decimated_runs(record: Record, exclude: Sequence[tuple[float, float]], rate_hz: float
                   ) -> tuple[Decimated, list[slice]]:
    """Stages 1-2: the free motion outside `exclude` decimated to rate_hz (its times on the
    record's own clock, t0_s + t; the angles at those times, identify.signal.point_values)
    and its gap-free runs."""
    free = free_motion(record, exclude)
    d = point_values(decimate(free, 0.0, rate_hz), free.rate_hz)
    d = replace(d, t=d.t + free.t0_s)
    return d, runs(d)


def noise_sigma(d: Decimated, quantum: float) -> np.ndarray:
    """Each joint's measurement noise (rad): what a local cubic over 11 points (22 ms at
    500 Hz, where a swing is a cubic to 1e-7 rad) leaves, corrected for the smoother's
    own degrees of freedom; never below the rms of one encoder quantum, Q / sqrt(12)
    (a joint that moves slowly keeps its quantisation error across a whole block)."""
    window, order = 11, 3
    # the central weight h0 of the local cubic: the residual's variance is (1 - h0) sigma^2
    h0 = float(savgol_coefficients(window, order)[window // 2])
    joints = d.q.shape[1]
    out = np.zeros(joints)
    pieces = [r for r in np.split(np.arange(d.grid.size),
                                  np.flatnonzero(np.diff(d.grid) != 1) + 1) if r.size > window]
    for j in range(joints):
        res = np.concatenate([d.q[r, j] - savgol_filter(d.q[r, j], window, order)
                              for r in pieces]) if pieces else np.zeros(1)
        out[j] = float(np.sqrt(np.mean(res ** 2) / (1.0 - h0)))
    return np.maximum(out, quantisation_rms(quantum))


def cubic_state(t: np.ndarray, q: np.ndarray, window_s: float) -> np.ndarray:
    """(angles, velocities) at t[0] from a cubic fitted to the samples within window_s of
    it (at least 5): noise-robust where a difference quotient is not."""
    k = max(5, int(np.searchsorted(t, t[0] + window_s)))
    tt = t[:k] - t[0]
    # per joint, numpy.polyfit: the arithmetic the Furuta fit's Monte Carlo was measured with
    coef = [np.polyfit(tt, q[:k, j], min(3, k - 2)) for j in range(q.shape[1])]
    return np.array([c[-1] for c in coef] + [c[-2] for c in coef])


def joint_inflation(residuals: np.ndarray) -> float:
    """The variance inflation of the worse joint's residuals (N, n): 1 + 2 sum rho_k
    (identify.methods.residual_inflation)."""
    return max(residual_inflation(residuals[:, j]) for j in range(residuals.shape[1]))


def schwarz_bic(residual_rms: np.ndarray, points: int, parameters: int) -> float:
    """Schwarz's criterion (1978) over the joints, each with its own noise level:
    sum_j n log(RSS_j / n) + k log(n * joints), n the points per joint and k the
    parameters the models being compared do not share (every model fitted on the same
    segments has the same segment states)."""
    rms = np.asarray(residual_rms, dtype=np.float64)
    rss = points * rms ** 2  # as RSS / n, the arithmetic model choices were measured with
    return float(np.sum(points * np.log(rss / points))
                 + parameters * math.log(points * rms.size))


def unseen(inverse: np.ndarray, info: np.ndarray) -> np.ndarray:
    """Which variables a pseudo-inverse `inverse` of the information `info` dropped: a
    true inverse has diag(A^-1) >= 1 / diag(A), so a product below 1/2 is a direction
    the data do not see (a term run down to where the motion no longer feels it)."""
    return np.asarray(np.diag(inverse) * np.diag(info) < 0.5)


def bound_sd(info: np.ndarray, inverse: np.ndarray | None = None) -> np.ndarray:
    """The Cramer-Rao bound of every variable from the information A = J^T J (residuals
    in noise units): sqrt(diag(A^-1)), infinite where the pseudo-inverse dropped the
    variable (`unseen`): no bound holds it. `inverse`: A's pseudo-inverse, if at hand."""
    inv = np.linalg.pinv(info, hermitian=True) if inverse is None else inverse
    return np.where(unseen(inv, info), np.inf, np.sqrt(np.clip(np.diag(inv), 0.0, None)))


def log_interval(log_value: float, log_sd: float) -> tuple[float, tuple[float, float]]:
    """A parameter fitted by its logarithm: the value and its 95 % interval, a factor
    exp(1.96 sd) either side (capped: a wild interval must not overflow)."""
    half = min(1.96 * log_sd, 700.0)
    v = math.exp(log_value)
    return v, (v * math.exp(-half), v * math.exp(half))


#: a log-fitted value whose 95 % interval spans more than this factor either side: the
#: data cannot tell it
UNIDENTIFIABLE_FACTOR = 10.0
TOO_WIDE_NOTE = (f"the 95 % interval spans more than a factor {UNIDENTIFIABLE_FACTOR:g} "
                 "either side")


#: a log-fitted friction value with a standard error above this is no longer trusted to
#: its Wald interval: over bench_coverage's seeds 1 and 2 (120 captures) the intervals
#: of mu_d and mu_v held the truth 386 times in 411 below it and 4 in 9 from 0.2 to 0.6
#: (Table V's arm mu_v at +513, +1455 and +9938 %, where the likelihood is far from its
#: quadratic); such a value is reported as an estimate with its interval, not identified
WALD_LOG_SD = 0.2
WEAK_NOTE = (f"estimated, not identified with confidence: its standard error is above "
             f"{100 * WALD_LOG_SD:.0f} % of the value, where intervals from the local "
             "curvature (Wald) were measured to miss the truth more often than not; the "
             "interval shown is that one")


def weakly_determined(log_sd: float) -> bool:
    """Whether a value fitted by its logarithm is too loosely held for its Wald interval
    (WALD_LOG_SD)."""
    return not log_sd <= WALD_LOG_SD


def too_wide(log_sd: float) -> bool:
    """Whether a value fitted by its logarithm, with this standard error, is out of the
    data's reach: its 95 % interval spans more than UNIDENTIFIABLE_FACTOR either side."""
    return not 1.96 * log_sd < math.log(UNIDENTIFIABLE_FACTOR)


def transition_unsupported(log_value: float, lo: float, hi: float, log_sd: float) -> bool:
    """Whether the data cannot carry a joint's Stribeck pair: its transition velocity,
    fitted by its logarithm, at a bound [lo, hi] of the fit, or its interval a factor
    UNIDENTIFIABLE_FACTOR either side (`too_wide`). Such a joint is tried without it
    (Coulomb + viscous, mu_s = mu_d): on seed 000's Table V noise a Furuta pendulum's
    omega_t escaped a hundredfold and its hump soaked up the viscous term."""
    return at_bound(log_value, lo, hi) or too_wide(log_sd)


def standard_error(cov: np.ndarray, k: int) -> float:
    """The standard error of variable k of a fit with covariance cov (a negative rounding
    of the diagonal read as 0)."""
    return math.sqrt(max(float(cov[k, k]), 0.0))


def out_of_reach(z: np.ndarray, cov: np.ndarray, bounds: tuple[np.ndarray, np.ndarray],
                 k: int) -> bool:
    """transition_unsupported for variable k (fitted by its logarithm) of a fit at z with
    covariance cov within bounds: the one lookup every rig kind makes."""
    lo, hi = bounds
    return transition_unsupported(float(z[k]), float(lo[k]), float(hi[k]),
                                  standard_error(cov, k))


def at_bound(log_value: float, lo: float, hi: float) -> bool:
    """Whether a value fitted by its logarithm stopped at a bound [lo, hi] of its range."""
    return bool(log_value <= lo + 1e-4 or log_value >= hi - 1e-4)


def at_noise_floor(noise: np.ndarray, floor_noise: float) -> np.ndarray:
    """Per joint, whether its measured noise is the quantum's floor (`floor_noise`): the
    data show less, so the residuals' excess over the noise is blind there."""
    return np.asarray(noise) <= floor_noise * 1.001


def widening(excess: np.ndarray) -> np.ndarray:
    """The factor each joint's intervals are widened by: its residuals' excess over the
    noise where that passes ADEQUATE_EXCESS (the model error, which the noise does not
    measure, bends the estimates: a 15 s Furuta capture had mu_d0 9.8 % off with a
    +-3.4 % interval at 3.5 times the noise), else 1."""
    x = np.asarray(excess, dtype=np.float64)
    return np.where(x > ADEQUATE_EXCESS, x, 1.0)


#: a fitted transition velocity below the lowest start by more than this factor has left
#: the starts' reach as surely as one above the highest
ESCAPE_BELOW = 10.0


def escaped_transition(transitions: np.ndarray, starts: Sequence[float], noise: np.ndarray,
                       floor_noise: float) -> bool:
    """Whether a joint whose noise is the quantum's floor (`floor_noise`: the data show
    less, so its residuals' excess over the noise is blind to a wrong valley) has its
    fitted transition velocity (`transitions`, NaN for a joint without one) above every
    start or below the lowest by ESCAPE_BELOW. On noise-free records:

    - a Furuta pendulum's omega_t went from 1e-2 to 0.92 rad/s (truth 0.071), its hump
      taking up the viscous term (mu_d1 -12 %, mu_v1 +11 %) at 0.41 times that floor;
      restarted from 1e-1, 23,500 lower in BIC and within 0.5 %;
    - a double pendulum's v_t1 ran down to 1.4e-4 rad/s (truth 0.050), Fs1 +166 %, Fc1
      and b1 0.4 % off with z = 30 and -20, at 0.78 of it; restarted from 0.3, 4,400
      lower in BIC and within 0.03 %.

    On a noisy record an escaped transition is the noise's doing, and restarts there (a
    Furuta Table V capture) found nothing better in 8-9 s more."""
    v = np.asarray(transitions, dtype=np.float64)
    out = (v > max(starts)) | (v < min(starts) / ESCAPE_BELOW)
    return bool(np.any(out & at_noise_floor(noise, floor_noise) & np.isfinite(v)))


def excess_warning(excess: np.ndarray, names: Sequence[str]) -> str | None:
    """The adequacy check's one-line verdict, or None when every joint is within
    ADEQUATE_EXCESS times its noise."""
    over = [(n, float(x)) for n, x in zip(names, excess, strict=True) if x > ADEQUATE_EXCESS]
    if not over:
        return None
    return ("residuals above the noise (" + ", ".join(
        f"x{x:.1f} {n}" for n, x in zip(names, excess, strict=True)) + "): the model misses "
        "something the data show; the intervals of each joint so far above its noise "
        "are widened by that factor (" + ", ".join(f"{n} x{x:.1f}" for n, x in over)
        + ") for the model error the noise does not measure")


__all__ = ["ADEQUATE_EXCESS", "ESCAPE_BELOW", "TOO_WIDE_NOTE", "UNIDENTIFIABLE_FACTOR",
           "WALD_LOG_SD", "WEAK_NOTE", "at_bound", "at_noise_floor", "bound_sd", "cubic_state",
           "decimated_runs",
           "escaped_transition", "excess_warning", "free_motion", "joint_inflation",
           "log_interval", "noise_sigma", "out_of_reach", "runs", "schwarz_bic",
           "standard_error", "too_wide",
           "transition_unsupported", "unseen", "weakly_determined", "widening"]
