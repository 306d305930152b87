"""Per-joint Coulomb + viscous friction from inverse dynamics: the output-error start.

Friction torque implied by the motion, f = -(H q'' + B + G) (model.md), regressed per
joint on [Fn sign(q'), q'] by ordinary least squares where |q'| > v_min: mu_d and mu_v
close enough to the truth that output error converges from them. The grey-box start,
kept as it was; the "regression" method (identify.methods.identify_regression) is the
reported estimator of the same linear model, with reversals cut out and HAC intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import RigParams, inverse_dynamics
from ..signal import Decimated


@dataclass(frozen=True)
class JointRegression:
    """One joint's regression: estimates, their standard deviations, and its quality."""

    mu_d: float
    mu_v: float
    std: tuple[float, float]
    condition: float
    points: int
    residual_rms: float


def regress_joint(v: np.ndarray, f: np.ndarray, fn: float, v_min: float) -> JointRegression:
    """OLS of f = mu_d Fn sign(v) + mu_v v on the samples with |v| > v_min (NaN below 10)."""
    m = np.isfinite(v) & np.isfinite(f) & (np.abs(v) > v_min)
    if m.sum() < 10:
        return JointRegression(float("nan"), float("nan"), (float("inf"),) * 2, float("inf"),
                               int(m.sum()), float("nan"))
    w = np.column_stack([fn * np.sign(v[m]), v[m]])
    sol, *_ = np.linalg.lstsq(w, f[m], rcond=None)
    r = f[m] - w @ sol
    s2 = float(r @ r) / max(1, r.size - 2)
    cov = s2 * np.linalg.inv(w.T @ w)
    return JointRegression(float(sol[0]), float(sol[1]), tuple(np.sqrt(np.diag(cov))),
                           float(np.linalg.cond(w)), int(m.sum()), float(np.sqrt(s2)))


def regression_estimate(d: Decimated, rig: RigParams, v_min: float = 0.05
                        ) -> tuple[JointRegression, JointRegression]:
    """Per-joint Coulomb + viscous regression on the decimated, differentiated capture.

    The grey-box method's start, kept as it was (v_min 0.05 rad/s, no reversal guard,
    per-joint OLS); identify_regression is the reported method.
    """
    ok = np.isfinite(d.a).all(axis=1) & np.isfinite(d.v).all(axis=1)
    f = np.full_like(d.q, np.nan)
    if ok.any():
        f[ok] = inverse_dynamics(rig.as_array(), d.q[ok], d.v[ok], d.a[ok])
    return (regress_joint(d.v[:, 0], f[:, 0], rig.fn0, v_min),
            regress_joint(d.v[:, 1], f[:, 1], rig.fn1, v_min))
