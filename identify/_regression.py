"""Friction from inverse dynamics and linear least squares: the start of output-error fitting.

Friction torque implied by the motion, f = -(H q'' + B + G) (model.md), with q' and
q'' from the Holoborodko differentiators. Away from velocity reversals
(|q'_i| > v_min, where tanh(4 r) = sign and the Stribeck bump has decayed),
    f_i = Fn_i mu_d_i sign(q'_i) + mu_v_i q'_i,
linear in (mu_d_i, mu_v_i): ordinary least squares per joint with covariance
sigma^2 (W^T W)^-1 (seed 002 eq. 20 ff.).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._decimated import Decimated
from ._model import inverse_dynamics
from ._rig import RigParams


@dataclass(frozen=True)
class JointRegression:
    mu_d: float
    mu_v: float
    std: tuple[float, float]
    condition: float
    points: int
    residual_rms: float


def regress_joint(v: np.ndarray, f: np.ndarray, fn: float, v_min: float) -> JointRegression:
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
    """Per-joint Coulomb + viscous regression on the decimated, differentiated capture."""
    ok = np.isfinite(d.a).all(axis=1) & np.isfinite(d.v).all(axis=1)
    f = np.full_like(d.q, np.nan)
    if ok.any():
        f[ok] = inverse_dynamics(rig.as_array(), d.q[ok], d.v[ok], d.a[ok])
    return (regress_joint(d.v[:, 0], f[:, 0], rig.fn0, v_min),
            regress_joint(d.v[:, 1], f[:, 1], rig.fn1, v_min))
