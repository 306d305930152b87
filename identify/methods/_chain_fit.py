"""Identify a chain rig (single, nlink:N): friction laws fitted by output error over segments.

1. Segments, noise and start states from the record (_chain_data), a start from seed
   002's regression with a Coulomb column per joint.
2. Levenberg-Marquardt (identify.solvers) on each friction law in turn, each from the
   previous one's fit: viscous, Coulomb + viscous, Brown-McPhee (Fs = 1.3 Fc and
   v_t = 0.05 rad/s to start). `auto` keeps the law with the lowest BIC (Schwarz 1978,
   _fit_stages.schwarz_bic); a named law is fitted alone.
3. Intervals as for every rig kind (identify.methods._fit_stages): (J^T J)^-1 of the
   residuals in noise units, times their variance inflation (a model that falls short
   leaves correlated residuals, and each sample then carries less than one sample's
   information), widened by the residuals' excess over the noise where the model falls
   short.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._progress import Progress, no_progress
from ..model import ChainParams, ChainRig
from ..results import fit_percent
from ..signal import Record
from ..solvers import levenberg_marquardt
from ._chain_data import chain_data, chain_regression_start, free_runs
from ._chain_problem import LAW_TERMS, ChainData, ChainProblem
from ._fit_stages import joint_inflation, schwarz_bic, widening

#: every law is fitted to this many standard errors (enough to rank them by BIC, whose
#: gaps are hundreds), and the chosen one then on to FINAL_SIGMA_TOL
SCOUT_SIGMA_TOL = 0.3
SCOUT_ITERATIONS = 30
START_ITERATIONS = 10
FINAL_SIGMA_TOL = 0.01
LAWS_AUTO = ("viscous", "coulomb-viscous", "coulomb-viscous-drag", "brown-mcphee")
_PATH = {
    "viscous": ("viscous",),
    "coulomb-viscous": ("viscous", "coulomb-viscous"),
    "coulomb-viscous-drag": ("viscous", "coulomb-viscous-drag"),
    "brown-mcphee": ("viscous", "coulomb-viscous", "brown-mcphee"),
    "brown-mcphee-drag": ("viscous", "coulomb-viscous-drag", "brown-mcphee-drag"),
}


@dataclass(eq=False)
class ChainFit:
    problem: ChainProblem
    z: np.ndarray
    residuals: np.ndarray
    cov: np.ndarray  # of all of z, intervals' inflation included
    tau: float
    iterations: int

    @property
    def rss(self) -> float:
        return float(self.residuals @ self.residuals)

    @property
    def excess(self) -> np.ndarray:
        """Residual rms over the noise, per joint: 1 when the model explains all but noise."""
        r = self.residuals.reshape(-1, self.problem.data.links)
        return np.sqrt(np.mean(r ** 2, axis=0))

    @property
    def bic(self) -> float:
        links = self.problem.data.links
        return schwarz_bic(self.excess, self.residuals.size // links, self.problem.n_param)

    @property
    def params(self) -> ChainParams:
        return self.problem.params(self.z)

    @property
    def sd(self) -> np.ndarray:
        """Standard errors of the parameters, widened for the model error the noise does not
        measure (_fit_stages.widening): a joint's friction by its own excess, the standard
        parameters by the largest."""
        sd = np.sqrt(np.clip(np.diag(self.cov)[:self.problem.n_param], 0.0, None))
        widen = widening(self.excess)
        k = len(self.problem.inertial)
        sd[:k] *= widen.max()  # the standard parameters are every joint's
        sd[k:] *= np.repeat(widen, len(self.problem.terms))
        return sd


def fit_law(data: ChainData, states: np.ndarray, start: ChainParams, law: str,
            max_iter: int = 60, sigma_tol: float = FINAL_SIGMA_TOL) -> ChainFit:
    """One friction law's output-error fit from `start` (normalised) and segment states."""
    problem = ChainProblem(data, law)
    lo, hi = problem.bounds()
    z0 = np.clip(problem.pack(start, states), lo, hi)
    return _solved(problem, z0, max_iter, sigma_tol)


def _solved(problem: ChainProblem, z0: np.ndarray, max_iter: int,
            sigma_tol: float) -> ChainFit:
    data = problem.data
    res = levenberg_marquardt(problem.residuals, problem.jacobian, z0, problem.bounds(),
                              sigma_tol=sigma_tol, ftol=1e-6, max_iter=max_iter)
    # residuals in noise units: (J^T J)^-1 is the covariance if the model is adequate
    tau = joint_inflation(res.fun.reshape(-1, data.links))
    cov = np.linalg.pinv(res.jac.gram(), hermitian=True) * tau
    return ChainFit(problem, res.x, res.fun, cov, tau, res.njev)


def _next_start(fit: ChainFit, law: str) -> ChainParams:
    """The previous law's fit, each term the new law adds started off its bound: Coulomb
    and drag a share of the viscous torque at the rms joint speed, Fs = 1.3 Fc,
    v_t = 0.05 rad/s."""
    p = fit.params
    fr = p.friction.copy()
    old, new = set(LAW_TERMS[fit.problem.law]), set(LAW_TERMS[law])
    d = fit.problem.data
    w = np.diff(d.q, axis=0) / d.dt
    w[:, 1:] -= w[:, :-1].copy()
    rms = np.sqrt(np.mean(w ** 2, axis=0))
    scale = fr[:, 3] + fr[:, 0] / rms + fr[:, 4] * rms  # a viscous-equivalent torque / speed
    if "Fc" in new - old:
        fr[:, 0] = fr[:, 1] = 0.2 * scale * rms
        fr[:, 3] *= 0.8
    if "cd" in new - old:
        fr[:, 4] = 0.1 * scale / rms
    if "Fs" in new - old:
        fr[:, 1] = 1.3 * fr[:, 0]
        fr[:, 2] = 0.05
    return ChainParams(p.inertial, fr)


def fit_chain(record: Record, rig: ChainRig, *, segment_s: float | None = None,
              exclude: Sequence[tuple[float, float]] = (), progress: Progress | None = None
              ) -> tuple[ChainFit, list[ChainFit]]:
    """The chosen fit and every law tried, in order."""
    say = progress or no_progress
    d, runs = free_runs(record, rig, exclude)
    data, states = chain_data(d, runs, rig, segment_s, record.resolution_rad)
    start = chain_regression_start(d, runs, rig)
    # a named law is reached through the simpler ones: Stribeck's terms start from a
    # converged Coulomb fit (from Fs = Fc, v_t has no gradient and wanders off)
    laws = list(LAWS_AUTO if rig.friction == "auto" else _PATH[rig.friction])
    fits: list[ChainFit] = []
    base: ChainFit | None = None  # the fit the next law starts from
    for k, law in enumerate(laws):
        say(k / len(laws), f"fitting {law} friction")
        if base is not None:
            start, states = _next_start(base, law), base.problem.states(base.z)
            if law == "brown-mcphee" and "cd" in base.problem.terms:
                law = "brown-mcphee-drag"  # Stribeck's terms on top of the law that won
        # a law that only starts the next one needs few iterations; one the BIC may
        # choose, enough to rank it
        final_law = k == len(laws) - 1
        iterations = (SCOUT_ITERATIONS if rig.friction == "auto" or final_law
                      else START_ITERATIONS)
        fits.append(fit_law(data, states, start, law, max_iter=iterations,
                            sigma_tol=SCOUT_SIGMA_TOL))
        base = min(fits, key=lambda f: f.bic) if rig.friction == "auto" else fits[-1]
    if rig.friction == "auto" and fits[-1].problem.law == "brown-mcphee-drag":
        # the drag came in before Stribeck's terms, which can stand in for it: try without
        drag = fits[-1]
        fits.append(fit_law(data, drag.problem.states(drag.z), drag.params, "brown-mcphee",
                            max_iter=SCOUT_ITERATIONS, sigma_tol=SCOUT_SIGMA_TOL))
    chosen = fits[-1] if rig.friction != "auto" else min(fits, key=lambda f: f.bic)
    say(0.95, f"refining {chosen.problem.law}")
    final = _solved(chosen.problem, chosen.z, 60, FINAL_SIGMA_TOL)
    fits[fits.index(chosen)] = final
    say(1.0, "intervals")
    return final, fits


def segment_fits(fit: ChainFit, names: Sequence[str]
                 ) -> tuple[np.ndarray, list[dict[str, object]]]:
    """Fit per joint (seed 000 eq. 53) over all segments, and each segment's own."""
    d = fit.problem.data
    sim = fit.problem.simulate(fit.z)
    rows = d.bounds
    per: list[dict[str, object]] = []
    for s in range(d.lengths.size):
        a, b = rows[s], rows[s + 1]
        per.append({"span_s": [round(float(d.t_start[s]), 4),
                               round(float(d.t_start[s] + (b - a - 1) * d.dt), 4)],
                    "fit_percent": {n: round(float(x), 3) for n, x in
                                    zip(names, fit_percent(sim[a:b], d.q[a:b]), strict=True)}})
    return fit_percent(sim, d.q), per


__all__ = ["LAWS_AUTO", "LAW_TERMS", "ChainFit", "fit_chain", "fit_law", "segment_fits"]
