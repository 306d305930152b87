"""Output error driven by seed 003's modified simplex ("simplex").

The same problem as the recommended estimator (OutputErrorProblem: simulate, fit the
measured angles, over log friction parameters and the release state) with the
derivative-free optimiser of seed 003 (identify.solvers.modified_simplex) in place of
Levenberg-Marquardt, started from the regression estimate. It needs no Jacobian but
hundreds of simulations; its intervals come from one Jacobian at the end, as for the
grey-box fit.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from .._progress import Progress
from ..results import IdentificationResult, ParameterEstimate
from ..signal import Measurement
from ..solvers import modified_simplex
from ._names import SIMPLEX
from ._oe_problem import OEFit, OutputErrorProblem, residual_inflation, whiteness
from ._pipeline import FREE, build_result, parameter_estimates, prepare

if TYPE_CHECKING:  # annotations only: scipy.optimize is slow to import
    from scipy.optimize import OptimizeResult

METHOD = SIMPLEX


def identify_simplex(m: Measurement, progress: Progress | None = None, *,
                     maxfev: int = 1500, xatol: float = 1e-6, fatol: float = 1e-12
                     ) -> IdentificationResult:
    """Friction by output error minimised with the modified simplex of seed 003.

    maxfev bounds the simulations; xatol (in log parameter, count and 0.1 ms units) and
    fatol (in cost, 0.5 ||r||^2 rad^2) are the simplex's convergence tolerances. Without
    convergence the estimates carry no interval.
    """
    t0 = time.perf_counter()
    p = prepare(m)
    prob = OutputErrorProblem(p.d, m.rig, p.start, FREE, p.init, progress, maxfev)
    res = _minimise(prob, maxfev, xatol, fatol)
    oe = _fit_at(prob, np.asarray(res.x), res)
    params = parameter_estimates(oe, FREE)
    if not res.success:  # Jacobian intervals describe a minimum; this is not one
        params = {name: (est if est.value is None else ParameterEstimate(
            value=est.value, ci95=None, identifiable=False, assumed=est.value,
            note=f"not identifiable here: the simplex stopped before converging ({res.message})"))
            for name, est in params.items()}
    elapsed = time.perf_counter() - t0
    return build_result(METHOD, p, oe, FREE, elapsed, parameters=params,
                        extra={"simplex_restarts": int(res.nrestart)})


def _minimise(prob: OutputErrorProblem, maxfev: int, xatol: float, fatol: float
              ) -> OptimizeResult:
    """The modified simplex on 0.5 ||r(z)||^2 from the problem's start, within its bounds.

    Starting steps: 10 % in each log parameter, a count in the pose, 0.1 ms (TR_UNIT) in
    the release time (or 1 rad/s in a velocity of a capture that begins in motion).
    """
    lo, hi = prob.bounds()
    z0 = np.clip(prob.z0(), lo + 1e-9, hi - 1e-9)

    def cost(z: np.ndarray) -> float:
        r = prob.fun(z)
        return 0.5 * float(r @ r)

    nfree = len(prob.free)
    scale = np.concatenate([np.full(nfree, 0.1), np.full(z0.size - nfree, 1.0)])
    return modified_simplex(cost, z0, scale=scale, bounds=list(zip(lo, hi)), maxfev=maxfev,
                            xatol=xatol, fatol=fatol, keep_history=False)


def _fit_at(prob: OutputErrorProblem, z: np.ndarray, res: OptimizeResult) -> OEFit:
    """The fit at the simplex's best point, with the covariance of one Jacobian there:
    s^2 k (J^T J)^+, s^2 = ||r||^2 / (rows - unknowns), k the residuals' inflation
    (identify.methods.residual_inflation, the worse joint), as for the grey-box fit."""
    r = prob.fun(z)
    jac = prob.jac(z, r)
    dof = max(1, r.size - z.size)
    s2 = float(r @ r) / dof
    resid = r.reshape(-1, 2)
    infl = max(residual_inflation(resid[:, 0]), residual_inflation(resid[:, 1]))
    frs, x0s, t0s = prob.unpack(z)
    return OEFit(params=frs[0], free=list(prob.free), z=z,
                 cov_z=s2 * infl * np.linalg.pinv(jac.T @ jac), x0=x0s[0], t0=float(t0s[0]),
                 residual_rms=np.sqrt((resid ** 2).mean(axis=0)), inflation=infl,
                 nfev=int(res.nfev), success=bool(res.success), message=str(res.message),
                 extras={"cost": 0.5 * float(r @ r), "substep_mean": float(prob.sched.mean()),
                         "jacobians": 1, "whiteness": whiteness(resid)})
