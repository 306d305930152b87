"""Estimates of one quantity from several captures, put together: a mean, a straight line
in a covariate (through a positive quantity's values, relative_line), and each capture
against the line through the others.

Each capture i gives y_i (a log for a positive quantity) with a standard error of its
own, s_i (what another capture of the rig does not share), and a part common to all
captures, c_i (the rig's scale, set by the same weighed masses for each: it does not
average out). Captures of a real rig scatter beyond their s_i (the model's error
depends on the release), by tau, estimated from the scatter itself (DerSimonian &
Laird 1986; for a line, its method-of-moments extension), each capture then weighed
by 1 / (s_i^2 + tau^2). Standard errors follow Knapp & Hartung (2003): the weighted
scatter about the fit, q = sum w_i r_i^2 / (K - p), scales them and a t distribution
with K - p degrees of freedom gives the intervals and tests, which keeps their level
with a handful of captures whatever tau is. q is taken at least 1 (Roever, Knapp &
Friede 2015): captures that agree better than their stated errors do not make an
interval narrower than those errors allow. Without it, on 80 simulated sessions of 10
captures the pooled tilt's, reduced length's and L1's intervals were 11-15 times
narrower than one capture's and held the truth in 71-72 of them; with it, 78 of 80 at
3.7 times narrower (bench_session_pooled, 2026-12-08). The common part is added to a mean's or
a level's variance (mean of c_i^2), never to a slope's or a departure's (differences
between captures cancel it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import stdtr, stdtrit

__all__ = ["Departure", "Line", "Mean", "departures", "line", "mean", "relative_line"]


def _t_sf(t: float, df: int) -> float:
    """P(T > t), T Student's t with df degrees of freedom (scipy.special: the session's
    command loads in 0.3 s where scipy.stats takes 0.9)."""
    return float(stdtr(df, -t))


def _t_isf(q: float, df: int) -> float:
    """t with P(T > t) = q."""
    return float(-stdtrit(df, q))


@dataclass(frozen=True)
class Mean:
    value: float
    se: float  # the whole standard error: the scatter's (Knapp-Hartung) and the common part
    df: int
    tau: float  # scatter between captures beyond their own standard errors

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        half = _t_isf((1 - level) / 2, self.df) * self.se
        return self.value - half, self.value + half


@dataclass(frozen=True)
class Line:
    """y = level + slope x (x as given: centre it for the level at its mean)."""

    level: float
    slope: float
    level_se: float  # with the common part
    slope_se: float
    df: int
    tau: float
    q: float  # Knapp-Hartung's scale, at least 1
    cov: np.ndarray  # (2, 2) of (level, slope), without the common part

    @property
    def p_slope(self) -> float:
        if not self.slope_se > 0:
            return 0.0 if self.slope != 0 else 1.0
        return 2 * _t_sf(abs(self.slope) / self.slope_se, self.df)

    def slope_interval(self, level: float = 0.95) -> tuple[float, float]:
        half = _t_isf((1 - level) / 2, self.df) * self.slope_se
        return self.slope - half, self.slope + half

    def level_interval(self, level: float = 0.95) -> tuple[float, float]:
        half = _t_isf((1 - level) / 2, self.df) * self.level_se
        return self.level - half, self.level + half


@dataclass(frozen=True)
class Departure:
    """Capture i against the line through the others: y_i - prediction, its t statistic
    and two-sided p-value (K - 3 degrees of freedom)."""

    index: int
    departure: float
    t: float
    p_value: float


def _tau2(y: np.ndarray, s: np.ndarray, design: np.ndarray) -> float:
    """The scatter beyond s (method of moments) about the weighted least-squares fit of
    y on `design`."""
    w = 1.0 / s ** 2
    xtwx = design.T @ (design * w[:, None])
    inv = np.linalg.pinv(xtwx)
    beta = inv @ (design.T @ (w * y))
    r = y - design @ beta
    q_e = float(np.sum(w * r * r))
    k, p = design.shape
    trace = float(np.sum(w) - np.trace(inv @ (design.T @ (design * (w * w)[:, None]))))
    return max(0.0, (q_e - (k - p)) / trace) if trace > 0 else 0.0


def _fit(y: np.ndarray, s: np.ndarray, design: np.ndarray
         ) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Random-effects weighted fit: coefficients, their Knapp-Hartung covariance, tau,
    q."""
    s = np.maximum(s, 1e-12)
    tau2 = _tau2(y, s, design)
    w = 1.0 / (s ** 2 + tau2)
    inv = np.linalg.pinv(design.T @ (design * w[:, None]))
    beta = inv @ (design.T @ (w * y))
    r = y - design @ beta
    k, p = design.shape
    q = max(1.0, float(np.sum(w * r * r) / (k - p))) if k > p else 1.0
    return beta, q * inv, math.sqrt(tau2), q


def mean(y: np.ndarray, s: np.ndarray, common: np.ndarray) -> Mean:
    """The random-effects mean of y (module); one capture: its own value and errors."""
    y, s, common = (np.asarray(a, dtype=float) for a in (y, s, common))
    if y.size == 1:
        return Mean(float(y[0]), math.hypot(float(s[0]), float(common[0])), 1_000_000, 0.0)
    beta, cov, tau, _ = _fit(y, s, np.ones((y.size, 1)))
    se = math.sqrt(float(cov[0, 0]) + float(np.mean(common ** 2)))
    return Mean(float(beta[0]), se, y.size - 1, tau)


def line(y: np.ndarray, s: np.ndarray, x: np.ndarray, common: np.ndarray) -> Line:
    """The random-effects straight line of y in x (module); needs 3 captures."""
    y, s, x, common = (np.asarray(a, dtype=float) for a in (y, s, x, common))
    if y.size < 3:
        raise ValueError(f"a line through {y.size} captures is no test: 3 needed")
    design = np.column_stack([np.ones(y.size), x])
    beta, cov, tau, q = _fit(y, s, design)
    return Line(float(beta[0]), float(beta[1]),
                math.sqrt(float(cov[0, 0]) + float(np.mean(common ** 2))),
                math.sqrt(max(float(cov[1, 1]), 0.0)), y.size - 2, tau, q, cov)


def relative_line(y: np.ndarray, s: np.ndarray, x: np.ndarray, common: np.ndarray) -> Line:
    """The random-effects straight line of a positive quantity's values, exp(y), in x
    (centred: its level is at x's mean), given as `line` gives one of y: the level's log,
    and the slope, the standard errors and the scatter as fractions of the level.

    A drift is a straight line in the quantity itself (a viscous term rising by a share of
    its value per hour), not in its log. Through the logs a 10 % rise over a night bends
    by about 8e-4 of the level about the line, more than a capture's own error (1e-4 of
    mu_v1 on simulated sessions): the random-effects scatter took the bend for scatter
    between captures (tau 4e-4 on drifting sessions, 0 on steady ones), and the slope's
    interval came out twice as wide as its error (40 drifting sessions of 10 captures:
    error over standard error 0.53 rms, the true slope held 40/40; through the values,
    1.01 and 39/40). y, s, common: as for `line`, in the log (s and common relative)."""
    y, s, x, common = (np.asarray(a, dtype=float) for a in (y, s, x, common))
    values = np.exp(y)
    fit = line(values, values * s, x, values * common)
    level = fit.level  # a weighted mean of positive values: positive
    return Line(math.log(level), fit.slope / level, fit.level_se / level,
                fit.slope_se / level, fit.df, fit.tau / level, fit.q, fit.cov / level ** 2)


def departures(y: np.ndarray, s: np.ndarray, x: np.ndarray) -> list[Departure]:
    """Each capture against the random-effects line through the others (needs 4): its
    departure over the prediction's and its own scatter, both scaled by the others' q."""
    y, s, x = (np.asarray(a, dtype=float) for a in (y, s, x))
    out: list[Departure] = []
    if y.size < 4:
        return out
    for i in range(y.size):
        rest = np.arange(y.size) != i
        fit = line(y[rest], s[rest], x[rest], np.zeros(int(rest.sum())))
        at = np.array([1.0, x[i]])
        pred = fit.level + fit.slope * x[i]
        var = fit.q * (s[i] ** 2 + fit.tau ** 2) + float(at @ fit.cov @ at)
        t = (y[i] - pred) / math.sqrt(var) if var > 0 else math.inf
        out.append(Departure(i, float(y[i] - pred), float(t),
                             2 * _t_sf(abs(t), fit.df)))
    return out
