"""The Furuta rig's multiple-shooting fit: one model, from the capture to its covariance.

What it does, in order:

1. Where the free motion starts: the first sample well outside what the rig did while
   held (rest, or a hand's tremor), plus a margin for the hand to let go; nothing before
   it is fitted, and nothing assumes a release from rest.
2. Decimate to FIT_RATE_HZ (FLOOR_RATE_HZ where both joints' noise is the encoder's
   own) and differentiate (Holoborodko N = 51, 101), the block means made point values
   (identify.signal.point_values); the noise of each joint from the data, with the
   encoder's quantum as a floor.
3. A start for the friction from the per-joint regression (seed 002), where it works.
4. Cut the capture into overlapping segments, each with a state of its own (._problem),
   fit the segments' states with the rest held, then everything: the rig's quantities
   (logs, with the nominal values as a prior), the friction (logs) and the states, by
   Levenberg-Marquardt.
5. Weigh each joint by its residual and refit; the covariance is the inverse of the
   data's information (inflated for the residuals' autocorrelation) plus the prior's.

Which model (extra terms, restarts) is _select's; what the result reports is _result's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ...._progress import Progress
from ....model import QUANTUM, quantisation_rms
from ....signal import Decimated, Measurement, decimate, motion_start, point_values
from ....solvers import REMAINING_CHI2, Arrow, levenberg_marquardt
from ..._joint_regression import regression_estimate
from ..._pipeline import GENERIC_START, START_MU_S_OVER_MU_D
from .._stages import (
    bound_sd,
    cubic_state,
    joint_inflation,
    noise_sigma,
    schwarz_bic,
    unseen,
)
from ._prior import RIG_VARIABLES, RigPrior
from ._problem import (
    COARSE_FLOOR,
    FINE_FLOOR,
    FRICTION_FREE,
    BlockJacobian,
    Segments,
    ShootingProblem,
    friction_bounds,
)

SEGMENT_S = 4.0
SHORT_SEGMENT_S = 1.0
OVERLAP_S = 0.25
#: the cubic that gives a segment's start state spans 0.1 s (the fit then refines it)
START_WINDOW_S = 0.1
FIT_RATE_HZ = 500.0  # the swing (periods ~1.7 s) needs no more; near-zero velocities get substeps
#: a capture whose noise on both joints is the encoder's own (at most AT_FLOOR times the
#: rms of one quantum at FIT_RATE_HZ) is fitted at FLOOR_RATE_HZ: on the Monte Carlo's
#: noise-free conditions (seed 1) every identified value came out the same to 0.3 %, in
#: 0.91 of the time (median 3.3 s against 4.3). Noisy records keep FIT_RATE_HZ: at 250 Hz
#: the noisy sensor's mu_v0 went from 1.16 to 4.45 Cramer-Rao bounds and Table V's mu_d0
#: from 1.28 to 1.80
FLOOR_RATE_HZ = 250.0
AT_FLOOR = 1.5


@dataclass(frozen=True)
class ShootingFit:
    problem: ShootingProblem
    z: np.ndarray
    cov: np.ndarray
    residual_rms: np.ndarray  # (2,) rad
    noise: np.ndarray  # (2,) rad, the data's own noise (noise_sigma)
    inflation: float
    nfev: int
    njev: int
    message: str
    t_start: float  # where the free motion starts, s on the capture's clock
    drag_score: float | None = None  # the score test that asked for its drag, if it did
    crb: np.ndarray | None = None  # the Cramer-Rao bound of every variable (cramer_rao)

    @property
    def extras(self) -> tuple[str, ...]:
        return self.problem.extras

    @property
    def bic(self) -> float:
        """Schwarz's criterion over both joints: n log(RSS/n) per joint + k log n, the
        global variables counted (every model has the same segment states)."""
        return schwarz_bic(self.residual_rms, self.problem.n_data // 2, self.problem.n_global)

    @property
    def excess(self) -> np.ndarray:
        """Residual rms over the noise, per joint: 1 when the model explains all but noise."""
        return np.asarray(self.residual_rms / self.noise)


def _friction_start(d: Decimated, m: Measurement, omega_t: float = GENERIC_START["omega_t"],
                    floor: float = COARSE_FLOOR[0]) -> np.ndarray:
    """mu_d, mu_s, mu_v, omega_t per joint: the regression where it works."""
    regs = regression_estimate(d, m.rig)
    out = []
    for jr in regs:
        mu_d = jr.mu_d if np.isfinite(jr.mu_d) and jr.mu_d > 0 else GENERIC_START["mu_d"]
        mu_v = jr.mu_v if np.isfinite(jr.mu_v) and jr.mu_v > 0 else GENERIC_START["mu_v"]
        out += [mu_d, START_MU_S_OVER_MU_D * mu_d, mu_v, omega_t]
    lo, hi = friction_bounds(floor)
    return np.clip(np.array(out), lo * 1.01, hi * 0.99)


def segment_states(d: Decimated, seg: Segments) -> np.ndarray:
    """Each segment's start state from a cubic fit to its first 0.1 s (noise-robust)."""
    k = d.grid - d.grid[0]
    # times from the grid index (k h), as the Monte Carlo of bench_coverage was measured
    return np.array([cubic_state((k[r:] - k[r]) * d.h, d.q[r:], START_WINDOW_S)
                     for r in np.searchsorted(k, seg.start)])


class _Restricted:
    """A BlockJacobian seen through a subset of its columns."""

    def __init__(self, j: BlockJacobian, free: np.ndarray) -> None:
        self.j, self.free = j, free

    @property
    def arrow(self) -> Arrow | None:
        """The pattern of the columns seen, where they are the last of the global
        variables and every segment's (a fit of all, or of the states alone)."""
        n, first = self.j.shape[1], int(self.free[0]) if self.free.size else 0
        whole = self.free.size == n - first and bool(np.all(np.diff(self.free) == 1))
        if not (whole and first <= self.j.n_global and self.j.width):
            return None
        return Arrow(self.j.n_global - first, self.j.width)

    def gram(self) -> np.ndarray:
        return self.j.gram()[np.ix_(self.free, self.free)]

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        return self.j.rmatvec(r)[self.free]


def fit_free(problem: ShootingProblem, z: np.ndarray, free: np.ndarray, max_iter: int,
        sigma_tol: float = 0.05, remaining_chi2: float | None = REMAINING_CHI2
        ) -> tuple[np.ndarray, Any]:
    """Levenberg-Marquardt over the variables `free` of z, the others held."""
    lo, hi = problem.bounds()
    z = z.copy()
    n_g = problem.n_global
    globals_free = bool((free < n_g).any())

    def full(x: np.ndarray) -> np.ndarray:
        zz = z.copy()
        zz[free] = x
        return zz

    def fun(x: np.ndarray) -> np.ndarray:
        return problem.fun(full(x))

    def jac(x: np.ndarray, r: np.ndarray) -> _Restricted:
        return _Restricted(problem.jac(full(x), r, global_columns=globals_free), free)

    # a factor e^0.5 for a log, 0.2 rad for an angle, 2 rad/s for a velocity per step
    component = (free - n_g) % 4
    max_step = np.where(free < n_g, 0.5, np.where(component < 2, 0.2, 2.0))
    # residuals are in standard deviations: a chi^2 drop below sigma_tol is a step of
    # about sqrt(sigma_tol) standard errors, as little as the per-parameter rule allows;
    # either stops it only where the Gauss-Newton step promises under REMAINING_CHI2
    res = levenberg_marquardt(fun, jac, z[free], (lo[free], hi[free]), max_iter=max_iter,
                              max_step=max_step, sigma_tol=sigma_tol, chi2_tol=sigma_tol,
                              remaining_chi2=remaining_chi2)
    z = full(res.x)
    if globals_free:
        z = _settle_prior(problem, z, res.fun)
    return z, res


def _settle_prior(problem: ShootingProblem, z: np.ndarray, r: np.ndarray) -> np.ndarray:
    """z moved, keeping what the data see, to where the prior is best satisfied.

    The motion depends on the rig only through the normalised vector u; the directions of
    the rig's variables that leave u unchanged (the common scale, how P1 splits into j1z,
    m1 l1^2, ...) only the prior sees, and Marquardt's scaling, set by the data's
    curvature of the same variables, makes the solver crawl along them. So: the prior's
    least-squares step within those directions (the null space of du/dg), then a
    minimum-norm Newton correction back onto the same u; repeated, on the cheap map alone.
    The result is kept if the whole cost did not rise; r: the residuals at z (the
    solver's own, not simulated again).
    """
    n_g = problem.n_global
    g = z[:n_g].copy()
    try:
        g = _settled(problem, g)
    except (OverflowError, np.linalg.LinAlgError):
        return z  # the correction ran away (a near-singular du/dg): keep the fit as it is
    if not np.all(np.isfinite(g)):
        return z
    moved = z.copy()
    moved[:n_g] = g
    lo, hi = problem.bounds()
    moved = np.clip(moved, lo, hi)
    r_new = problem.fun(moved)
    return moved if float(r_new @ r_new) <= float(r @ r) else z


def _settled(problem: ShootingProblem, g: np.ndarray) -> np.ndarray:
    """_settle_prior's iteration on the global variables g."""
    n_g = problem.n_global
    target = problem.u_of(g)
    active = problem.active
    prior_jac = problem.prior_jacobian_z()[:, :n_g]
    for _ in range(8):
        du = problem.du_dg(g)[active]
        _, sv, vt = np.linalg.svd(du)
        rank = int(np.sum(sv > 1e-9 * sv[0]))
        null = vt[rank:].T
        if null.shape[1] == 0:
            break
        r_p = problem.prior.residuals(g[:len(RIG_VARIABLES) + 1])
        step = null @ (-np.linalg.pinv(prior_jac @ null) @ r_p)
        g = g + step
        for _ in range(3):  # back onto the same u
            miss = problem.u_of(g)[active] - target[active]
            g = g - np.linalg.pinv(problem.du_dg(g)[active]) @ miss
        if np.max(np.abs(step)) < 1e-6:
            break
    return g


#: the laws every joint is fitted with unless told otherwise
BROWN_MCPHEE = ("brown-mcphee", "brown-mcphee")


def fit_shooting(m: Measurement, prior: RigPrior | None = None, *,
                 segment_s: float = SEGMENT_S, overlap_s: float = OVERLAP_S,
                 extras: tuple[str, ...] = (), laws: tuple[str, str] = BROWN_MCPHEE,
                 progress: Progress | None = None, warm: ShootingFit | None = None,
                 friction: np.ndarray | None = None,
                 omega_t_start: float = GENERIC_START["omega_t"],
                 extra_start: dict[str, float] | None = None) -> ShootingFit:
    """The multiple-shooting fit of a capture (see module), each joint by its friction law.

    warm: a fit of the same capture to start from (its data, segments, rig, friction,
    extra terms and states), with other extra terms or laws: then only the last stage
    runs. friction: with warm, the start of the friction (8, FRICTION_FREE order) where
    it is not the warm fit's own (a law that adds terms starts them off their null).
    omega_t_start below the coarse floor: the fit is on the finer one (FINE_FLOOR), where
    that start is a start and not the floor again. extra_start: with warm, the start of
    extra terms warm lacks (their fitted variables, by name) instead of the usual one.
    """
    if warm is not None:
        problem = ShootingProblem(warm.problem.d, warm.problem.prior, warm.problem.seg,
                                  start_weights(warm), extras, progress,
                                  sched=warm.problem.sched, implicit=warm.problem.implicit,
                                  floor=warm.problem.floor, laws=laws)
        z = warm_start(problem, warm, friction, extra_start)
        if problem.floor == FINE_FLOOR:  # its substeps follow the transitions it starts with
            problem.reschedule(z)
        z, res = fit_free(problem, z, np.arange(z.size), 40, sigma_tol=0.1)
        return finish(problem, z, res, warm.t_start, noise=warm.noise)
    return fit_from_short(short_fit(m, prior, overlap_s=overlap_s, extras=extras, laws=laws,
                                    progress=progress, omega_t_start=omega_t_start),
                          segment_s, overlap_s)


@dataclass(frozen=True)
class ShortFit:
    """A cold fit's first stage: the capture cut into SHORT_SEGMENT_S segments and
    everything fitted roughly. chi2: where it ended, in the measured noise's units with
    the prior's part; every start of one capture cuts the same segments and weighs by the
    same noise (bench_restarts compares starts by it)."""
    problem: ShootingProblem
    z: np.ndarray
    chi2: float
    t_start: float


def short_fit(m: Measurement, prior: RigPrior | None = None, *, overlap_s: float = OVERLAP_S,
              extras: tuple[str, ...] = (), laws: tuple[str, str] = BROWN_MCPHEE,
              progress: Progress | None = None,
              omega_t_start: float = GENERIC_START["omega_t"]) -> ShortFit:
    """fit_shooting's first stage (its arguments), which fit_from_short finishes."""
    prior = prior or RigPrior.of(m.rig)
    quantum = m.resolution_rad or QUANTUM
    t_start = motion_start(m)
    d = point_values(decimate(m, t_start, FIT_RATE_HZ), m.rate_hz)
    sigma = noise_sigma(d, quantum)
    if np.all(sigma <= AT_FLOOR * quantisation_rms(quantum)):
        d = point_values(decimate(m, t_start, FLOOR_RATE_HZ), m.rate_hz)
        sigma = noise_sigma(d, quantum)
    floor = FINE_FLOOR if omega_t_start < COARSE_FLOOR[0] else COARSE_FLOOR
    # short segments first: a rig or friction far from the truth cannot make a phase slip
    # within one second, so the fit finds the right valley (roughly: the next stage refines)
    short = Segments.cut(d, SHORT_SEGMENT_S, overlap_s)
    if short.count == 0:  # said here: numpy's own words were "need at least one array"
        n = d.t.size
        raise ValueError(f"the free motion is too short to fit: {n} sample{'s' * (n != 1)} "
                         f"at {1 / d.h:g} Hz after the release, the fit needs 2 or more")
    problem = ShootingProblem(d, prior, short, sigma, extras, progress, laws=laws,
                              floor=floor)
    z = np.concatenate([problem.global_start(_friction_start(d, m, omega_t_start,
                                                             floor[0])),
                        segment_states(d, short).ravel()])
    n_g = problem.n_global
    # the substeps where the simulated motion needs them: a noisy capture's own
    # acceleration would ask for the most everywhere
    problem.reschedule(z)
    z, _ = fit_free(problem, z, np.arange(n_g, z.size), 5)
    problem.reschedule(z)
    # a start for the next stage, which refines everything: it stops on small steps even
    # where the linear model still promises a little (the merged stage keeps that guard;
    # here its last 30 of 60 iterations took off under 3 of a chi^2 of 34,000 on a
    # Table V capture)
    z, res = fit_free(problem, z, np.arange(z.size), 60, sigma_tol=0.5, remaining_chi2=None)
    return ShortFit(problem, z, 2.0 * float(res.cost), t_start)


def fit_from_short(short: ShortFit, segment_s: float = SEGMENT_S,
                   overlap_s: float = OVERLAP_S) -> ShootingFit:
    """The fit finished from its first stage (short_fit) on segments of segment_s."""
    problem, z = finer_where_stuck(short.problem, short.z)
    t_start = short.t_start
    n_g = problem.n_global
    # then segments of segment_s, every few short ones merged: fewer states to absorb
    # what the model leaves out, so the residuals show it and the friction is not bent
    every = max(1, int(round(segment_s / SHORT_SEGMENT_S)))
    while every > 1 and problem.seg.count > every:
        keep = np.arange(0, problem.seg.count, every)
        seg = Segments.starting(problem.d, problem.seg.start[keep], overlap_s)
        merged = ShootingProblem(problem.d, problem.prior, seg, problem.sigma, problem.extras,
                                 problem.progress, laws=problem.laws, floor=problem.floor)
        z_merged = np.concatenate([z[:n_g], problem.states(z)[keep].ravel()])
        merged.reschedule(z_merged)
        z_m, res_m = fit_free(merged, z_merged, np.arange(z_merged.size), 40, sigma_tol=0.1)
        if res_m.jac_finite:
            return finish(merged, z_m, res_m, t_start)
        # a transition so stiff that the long segments' derivatives overflow (a Table V
        # capture's arm): half as long, down to the short ones
        every //= 2
    z, res = fit_free(problem, z, np.arange(z.size), 40, sigma_tol=0.1)
    return finish(problem, z, res, t_start)


def finer_where_stuck(problem: ShootingProblem, z: np.ndarray
                      ) -> tuple[ShootingProblem, np.ndarray]:
    """`problem` and z, or both on the finer floor (FINE_FLOOR, the transitions there
    started at FINE_START) where the first stage left a joint unresolved on the coarse
    one (ShootingProblem.unresolved): the whole fit on the coarse floor would end there
    too, to be refitted on the finer one (_select.finer_floor_asked).

    bench_coverage, the old and the new code side by side on one thread each: 23 of seed
    1's 60 captures and 14 of seed 2's 40 take this step; their identifications took 0.73
    and 0.69 of the time (seed 2's capture 14: 80 -> 29 s), their estimates within 0.27
    standard errors but for two that the coarse fit had left in another valley. Seed 1's
    noisy-sensor capture 23 went from tilt -10 %, L1 -17 %, a drag and a cable it has not
    and mu_d1 +11 % to tilt -1.0 %, L1 +1.3 %, no extra term, mu_d1 +1.4 % and mu_v1
    -0.8 %; its capture 39's mu_v1 from -1.4 to +0.3 %."""
    if problem.floor != COARSE_FLOOR:
        return problem, z
    stuck = [j for j in (0, 1) if problem.unresolved(z, j)]
    return problem.on_fine_floor(z, stuck) if stuck else (problem, z)


def warm_start(problem: ShootingProblem, warm: ShootingFit,
               friction: np.ndarray | None = None,
               extra_start: dict[str, float] | None = None) -> np.ndarray:
    """z for `problem` from a fit of the same segments: its rig and states, its friction
    (or `friction`, FRICTION_FREE order) in problem's laws, its extra terms where problem
    has them (the others from extra_start's fitted variable, else their usual start)."""
    old = warm.problem
    g_old = warm.z[:old.n_global]
    n_rig = problem.n_rig
    if friction is None and problem.laws == old.laws:  # the fitted values as they are
        fr = g_old[n_rig:n_rig + len(old.friction_names)]
    else:
        whole = old.friction_of(g_old) if friction is None else friction
        fr = problem.global_start(whole)[n_rig:n_rig + len(problem.friction_names)]
    start = problem.global_start(np.ones(len(FRICTION_FREE)))
    first_old, first_new = old.n_global - len(old.extras), problem.n_global - len(problem.extras)
    given = extra_start or {}
    extras = [g_old[first_old + old.extras.index(e)] if e in old.extras
              else given.get(e, start[first_new + k]) for k, e in enumerate(problem.extras)]
    return np.concatenate([g_old[:n_rig], fr, extras, old.states(warm.z).ravel()])


#: a joint is weighed by what the model leaves of it, but never below this share of its
#: measured noise
WEIGHT_FLOOR = 0.5


def start_weights(warm: ShootingFit) -> np.ndarray:
    """Per joint, what a fit from `warm` (another model of the same capture) is weighed by
    at first: warm's final weight where it sits at the floor finish() allows (the residuals
    of a fit that leaves only noise, under half the measured noise of quantised angles:
    another model cannot weigh that joint lower, and starting from the noise cost each
    candidate a second fit once reweighed), else the noise, which may be nearer the end
    (a candidate with drag took 6 iterations from the warm weights to its own, 2 from
    the noise)."""
    floor = WEIGHT_FLOOR * warm.noise
    return np.where(warm.problem.sigma <= floor * (1 + 1e-9), warm.problem.sigma, warm.noise)


def finish(problem: ShootingProblem, z: np.ndarray, res: Any, t_start: float,
           noise: np.ndarray | None = None) -> ShootingFit:
    """Each joint weighed by what the model leaves of it (refitted if that changes the
    weights by more than 20 %), then the covariance. noise: the data's own (noise_sigma)
    where problem is weighed otherwise."""
    noise = problem.sigma.copy() if noise is None else np.asarray(noise, dtype=np.float64)
    z, res = _covered(problem, z, res)
    resid = problem.data_residuals(z).reshape(-1, 2) * problem.sigma
    rms = np.sqrt((resid ** 2).mean(axis=0))
    weights = np.maximum(rms, noise * WEIGHT_FLOOR)
    if np.any(np.abs(weights / problem.sigma - 1.0) > 0.2):
        problem.reweigh(weights)
        z, res = fit_free(problem, z, np.arange(z.size), 10, sigma_tol=0.1)
        z, res = _covered(problem, z, res)
    data = res.fun[:problem.n_data].reshape(-1, 2)
    infl = joint_inflation(data)
    # a refit whose start the finer schedule made too stiff ends on derivatives that
    # overflow (LMResult.jac_finite): its information is not finite, which what follows
    # reads as no interval; numpy's warnings about it reached the terminal (a drift
    # session's capture, bench_session_pooled)
    with np.errstate(over="ignore", invalid="ignore"):
        jac: BlockJacobian = res.jac.j
        data_info = jac.gram(problem.n_data)
        prior_info = jac.gram() - data_info
        info = data_info / infl + prior_info
        cov = np.linalg.pinv(info, hermitian=True)
        # a variance below 1 / its own information is no variance (Cramer-Rao:
        # diag(A^-1) >= 1 / diag(A)): the pseudo-inverse dropped a direction the data do
        # not see, as for a term run down to where the motion no longer feels it (mu_v0 at
        # 1.3e-9 came out with an interval of +-1e-8 %, a drag at 5.7e-10 one of
        # +-0.001 %); such a friction or extra term gets an infinite one (not identified)
        lost = np.zeros(cov.shape[0], dtype=bool)
        terms = slice(problem.n_rig, problem.n_global)
        lost[terms] = unseen(cov, info)[terms]
        cov[lost, lost] = np.inf
        crb = cramer_rao(jac, problem.sigma / noise, problem.n_data, prior_info)
    rms = np.sqrt(((data * problem.sigma) ** 2).mean(axis=0))
    return ShootingFit(problem, z, cov, rms, noise, infl, problem.nfev, res.njev,
                       res.message, t_start, crb=crb)


#: a refit after ShootingProblem.cover is spared where the substeps it added change z's
#: residuals (in standard deviations) by a sum of squares below this. The refit's first
#: Gauss-Newton step is that change projected on the Jacobian's columns: in standard
#: errors, no longer than its root, 0.1, where the refit would stop (sigma_tol), if the
#: fit before it had stopped on its steps too (LMResult.small_steps; not on its chi^2
#: drop, which left seed 000's Table V captures 0.3 standard errors short, nor on its
#: iterations). On bench_speed's 12 realistic captures most covers changed the residuals
#: by 1e-16 to 1e-5 (a few intervals refined, or RK4 given a wider stability margin where
#: it was stable already), and the refit cost 2-4 Jacobians to move nothing
COVER_TOL = 0.01


def _covered(problem: ShootingProblem, z: np.ndarray, res: Any) -> tuple[np.ndarray, Any]:
    """z refitted where the fit moved a reversal out of the stretch its substeps refine
    (ShootingProblem.cover): what is reported is simulated as finely as it was scheduled.
    Where that leaves the residuals as they were (COVER_TOL), z stands, with its residuals
    simulated the finer way."""
    change = problem.cover(z)
    if change is None:
        return z, res
    if res.small_steps and change < COVER_TOL:  # a fit stopped otherwise goes on in it
        return z, replace(res, fun=problem.fun(z))
    z, res = fit_free(problem, z, np.arange(z.size), 10, sigma_tol=0.1)
    return z, res


def cramer_rao(jac: BlockJacobian, scale: np.ndarray, n_data: int,
               prior_info: np.ndarray) -> np.ndarray:
    """The Cramer-Rao bound of every variable at the fit: the standard deviation no
    unbiased estimator beats on data of this noise, sqrt(diag((J' J)^-1)), the data's
    rows in units of the measured noise (`scale`: the fit's weights over the noise, per
    joint) and the prior's information added (a Bayesian bound: the prior is part of the
    model). For a variable fitted by its log, a relative standard deviation."""
    rows = np.ones(jac.shape[0])
    rows[:n_data] = np.tile(scale, n_data // scale.size)
    # a term the fit ran down to where the motion no longer feels it: infinite, not the
    # 2e-7 a dropped direction of the pseudo-inverse left (a Table V capture's arm mu_v)
    return bound_sd(jac.rows_scaled(rows).gram(n_data) + prior_info)


__all__ = ["AT_FLOOR", "BROWN_MCPHEE", "FIT_RATE_HZ", "FLOOR_RATE_HZ", "OVERLAP_S", "SEGMENT_S",
           "WEIGHT_FLOOR", "ShootingFit", "ShortFit", "cramer_rao", "finer_where_stuck",
           "finish", "fit_free", "fit_from_short", "fit_shooting", "segment_states",
           "short_fit", "start_weights", "warm_start"]
