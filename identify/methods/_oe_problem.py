"""Output-error (grey-box) fitting: simulate the model and fit the measured angles.

minimise sum_k ||q_sim(t_k; theta, x0) - q_meas(t_k)||^2 over log friction parameters
and the initial state (rest pose within a few counts, release time within a few ms),
by Levenberg-Marquardt within bounds. The release pose
is measured only to one encoder count, and over a 35 s decay of an amplitude-
dependent oscillator that count shows as phase drift: fitting it removes the bias.

The simulation runs RK4 on the decimated grid with more substeps where a joint's
measured velocity passes through its friction transition (|q'| of a few omega_t
while accelerating hard): a 1 ms step does not resolve the tanh(4 q'/omega_t) edge
of the pendulum and biases mu_s1 and omega_t1. The schedule comes from the measured
motion, not the parameters, so the finite-difference Jacobian stays smooth; its
columns are simulated in parallel, and the steps are Levenberg-Marquardt on the normal equations
(identify.solvers.levenberg_marquardt): a dozen parameters against ~70,000 residuals.

Covariance: s^2 (J^T J)^-1 scaled by the residuals' autocorrelation (the variance
inflation 1 + 2 sum rho_k of the worse joint), so intervals do not assume white noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._progress import Progress
from ..model import (
    JOINT_NAMES,
    PARAM_NAMES,
    RigParams,
    simulate_batch,
    simulate_scheduled,
    term_of,
)
from ..signal import Decimated
from ..solvers import levenberg_marquardt

#: Smallest friction transition velocity (rad/s) the fitting simulation resolves.
OMEGA_REF = 2.5e-3
TR_UNIT = 1e-4  # s, release-time offset unit inside the solver
# Bounds of each friction term in the fit, both joints alike. omega_t cannot go below the
# sharpest transition the fitting simulation resolves: an estimate at that bound means
# "a transition too sharp to resolve", and the result says so.
TERM_BOUNDS = {"mu_d": (1e-9, 1.0), "mu_s": (1e-9, 1.0), "mu_v": (1e-10, 1.0),
               "omega_t": (OMEGA_REF, 10.0), "Fn_t": (1e-6, 1e3)}
#: the bounds of each parameter by its index in PARAM_NAMES (as the solver's free lists)
LOG_BOUNDS = {k: TERM_BOUNDS[term_of(name)] for k, name in enumerate(PARAM_NAMES)}
MAX_LOG_STEP = 0.5  # at most a factor e^0.5 per iteration for any friction parameter



@dataclass(frozen=True)
class InitialState:
    """How the fitted simulation starts."""

    at_rest: bool  # True: from rest at q0 at release time t0 (both refined)
    t0: float
    q0: np.ndarray  # (2,)
    v0: np.ndarray  # (2,), zero when at rest
    quantum: float  # encoder resolution (rad), the unit of the pose refinement


@dataclass
class OEFit:
    params: np.ndarray  # (10,) all friction parameters, fitted and fixed
    free: list[int]
    z: np.ndarray
    cov_z: np.ndarray  # covariance of z, inflated for correlated residuals
    x0: np.ndarray  # fitted initial state
    t0: float
    residual_rms: np.ndarray  # (2,) per joint, rad
    inflation: float
    nfev: int
    success: bool
    message: str
    extras: dict[str, Any] = field(default_factory=dict)  # cost, substep_mean, jacobians, whiteness

    @property
    def log_std(self) -> np.ndarray:
        """Standard deviation of log(parameter) for each free parameter."""
        return np.sqrt(np.clip(np.diag(self.cov_z)[: len(self.free)], 0.0, None))

    def correlation(self) -> np.ndarray:
        s = np.sqrt(np.clip(np.diag(self.cov_z), 1e-300, None))
        return self.cov_z / np.outer(s, s)


def substep_schedule(d: Decimated, omega_ref: float = OMEGA_REF, max_sub: int = 16,
                     default: int = 4) -> np.ndarray:
    """RK4 substeps for each coarse interval from grid[0] to grid[-1], from the measured
    motion (the capture's differentiated velocity and acceleration)."""
    n = int(d.grid[-1] - d.grid[0] + 1)
    need = _substeps_needed(np.abs(d.v), np.abs(d.a), d.h, omega_ref, max_sub, default)
    sub = np.full(n, default, dtype=np.int64)
    sub[d.grid - d.grid[0]] = need
    return _widened(sub)


def _substeps_needed(v: np.ndarray, a: np.ndarray, h: float,
                     omega_ref: float | np.ndarray = OMEGA_REF, max_sub: int = 16,
                     default: int = 4, reach: float = 3.0) -> np.ndarray:
    """Substeps per interval (rows of v, a: (n, 2) magnitudes): where a joint's velocity
    comes within reach of zero (10 omega_ref, and `reach` intervals of its acceleration),
    enough RK4 steps that each changes it by at most half of omega_ref, the sharpest
    friction transition resolved (one for both joints, or one per joint: (2,))."""
    need = np.ones(v.shape[0])
    near_all = _near_reversal(v, a, h, omega_ref, reach)
    ref = np.broadcast_to(np.asarray(omega_ref, dtype=np.float64), (2,))
    for j in range(2):
        near = near_all[:, j]
        nj = np.where(near, np.ceil(a[:, j] * h / (0.5 * ref[j])), 1.0)
        need = np.maximum(need, np.where(np.isfinite(nj), nj, default))
    return np.clip(need, 1, max_sub).astype(np.int64)


def _near_reversal(v: np.ndarray, a: np.ndarray, h: float, omega_ref: float | np.ndarray,
                   reach: float) -> np.ndarray:
    """Where each joint's speed v is within reach of zero (a: |acceleration|): 10
    omega_ref, and `reach` intervals of its acceleration."""
    return v < 10.0 * omega_ref + reach * a * h


def _widened(sub: np.ndarray, k: int = 3) -> np.ndarray:
    """Each refined stretch widened by k intervals: the reversal may fall between grid
    points."""
    padded = np.pad(sub, k, mode="edge")
    win = np.lib.stride_tricks.sliding_window_view(padded, 2 * k + 1)
    return win.max(axis=1).astype(np.int64)


#: classic RK4 is stable on a decaying rate lambda for h lambda up to 2.785; kept below
RK4_STABLE_HL = 2.5


def simulated_schedule(k: list[np.ndarray], q: list[np.ndarray], h: float, n: int,
                       omega_ref: float | np.ndarray = OMEGA_REF, max_sub: int = 16,
                       rate: list[np.ndarray] | None = None, reach: float = 3.0,
                       widen: int = 3) -> np.ndarray:
    """substep_schedule from simulated pieces instead of the measurement: q[i] the angles
    (m, 2) at grid points k[i] (consecutive), n intervals in all. A noisy capture's
    differentiated acceleration asks for the most substeps everywhere (on seed 000's
    Table V noise: 16 on 91 % of the intervals); a simulation of a fit asks only where
    the motion does. rate[i]: the friction's rate along piece i (identify.model
    friction_rate): near zero velocity, substeps enough for RK4 to stay stable on it.
    reach, widen: the margin around each reversal, in intervals of its acceleration and
    in whole intervals (_substeps_needed, _widened): the defaults allow for reversals a
    fit moves by a few intervals before it is rescheduled."""
    accurate, stable = _needs(k, q, h, n, omega_ref, max_sub, rate, reach)
    return _widened(np.maximum(accurate, stable), widen)


def _needs(k: list[np.ndarray], q: list[np.ndarray], h: float, n: int,
           omega_ref: float | np.ndarray, max_sub: int, rate: list[np.ndarray] | None,
           reach: float) -> tuple[np.ndarray, np.ndarray]:
    """simulated_schedule's substeps before widening, apart: those accuracy asks for, and
    those RK4's stability on the friction's rate asks for (ones without rate)."""
    accurate = np.ones(n, dtype=np.int64)
    stable = np.ones(n, dtype=np.int64)
    for i, (rows, piece) in enumerate(zip(k, q)):
        if piece.shape[0] < 3:
            continue
        v = np.gradient(piece, h, axis=0)
        a = np.gradient(v, h, axis=0)
        need = _substeps_needed(np.abs(v), np.abs(a), h, omega_ref, max_sub, reach=reach)
        accurate[rows] = np.maximum(accurate[rows], need)
        if rate is not None:
            near = _near_reversal(np.abs(v), np.abs(a), h, omega_ref, reach)
            held = np.where(near, np.ceil(rate[i] * h / RK4_STABLE_HL), 1.0).max(axis=1)
            stable[rows] = np.maximum(stable[rows],
                                      np.clip(held, 1, max_sub).astype(np.int64))
    return accurate, stable


#: where keeping RK4 stable asks for more than this many times the substeps accuracy
#: asks, the implicit step takes the interval instead (split_schedule): one of its steps
#: costs 1.9-2.7 RK4 steps (identify.model._implicit IMPLICIT_COST)
IMPLICIT_OVER = 3.0
#: an implicit interval takes this many times fewer substeps than RK4's stability asked,
#: or accuracy's if more: enough to resolve a joint breaking away from friction's hold
#: wherever a fit moves it within the held stretch while the schedule stands. With
#: accuracy's alone, seed 2's drag-and-cable captures 13 and 38 of bench_coverage ended
#: in other valleys (the pendulum at 1.6 and 3.3 times the noise, mu_v1 +17 and +6 %); with
#: a fourth or an eighth of RK4's, where the old schedule put them, in 6.5-8.5 s
#: against 17-26 s
IMPLICIT_FEWER = 8


def split_schedule(k: list[np.ndarray], q: list[np.ndarray], h: float, n: int,
                   omega_ref: float | np.ndarray, max_sub: int, rate: list[np.ndarray],
                   reach: float = 3.0, widen: int = 3,
                   implicit_over: float = IMPLICIT_OVER) -> tuple[np.ndarray, np.ndarray]:
    """simulated_schedule's substeps and where to take them with the implicit step
    (identify.model._implicit) rather than RK4: the intervals where RK4's stability on the
    friction's rate asks for more than implicit_over times the substeps accuracy asks. A
    joint that friction holds for seconds asked RK4 for 4-47 substeps per interval where
    accuracy asked for 1-5; the implicit step is stable at any rate, so there it takes
    IMPLICIT_FEWER times fewer (accuracy's, if more). Returns (substeps, implicit)."""
    accurate, held = _needs(k, q, h, n, omega_ref, max_sub, rate, reach)
    stable = _widened(np.maximum(accurate, held), widen)  # simulated_schedule's
    accurate = _widened(accurate, widen)
    implicit = stable > implicit_over * accurate
    coarse = np.maximum(accurate, -(-stable // IMPLICIT_FEWER))
    return np.where(implicit, coarse, stable), implicit


def signed_schedule(substeps: np.ndarray, implicit: np.ndarray) -> np.ndarray:
    """The schedule as the simulation kernels take it: -n where n implicit steps."""
    return np.where(implicit, -substeps, substeps)


class OutputErrorProblem:
    """One capture's output-error problem: residuals and Jacobian over z.

    z = [log free parameters..., pose offsets (2, in encoder quanta), then the release
    time offset (TR_UNIT, at rest) or the initial velocity (2)]; the residuals are the
    simulated minus the measured decimated angles, both joints, row-major. fun() caches
    the last point; jac() simulates its finite-difference columns in parallel.
    """

    def __init__(self, d: Decimated, rig: RigParams, start: np.ndarray, free: list[int],
                 init: InitialState, progress: Progress | None, max_nfev: int,
                 horizon_s: float | None = None) -> None:
        self.d, self.rig_arr, self.start = d, rig.as_array(), start.astype(np.float64)
        self.free, self.init = list(free), init
        rows = (d.grid - d.grid[0]).astype(np.int64)
        sched = substep_schedule(d)
        keep = np.ones(rows.size, bool)
        if horizon_s is not None:  # fit only the first horizon_s seconds
            keep = d.t <= d.t[0] + horizon_s
            sched = sched[: int(rows[keep][-1]) + 1]
        self.rows, self.sched, self.meas = rows[keep], sched, d.q[keep]
        self.t_first = float(d.t[0])
        self.progress, self.max_nfev = progress, max_nfev
        self.nfev = 0
        self._cache: tuple[bytes, np.ndarray] | None = None

    # z = [log free params..., pose offsets (2, in quanta), then dt_r (at rest) or v0 (2)]
    def z0(self) -> np.ndarray:
        ic = [0.0, 0.0, 0.0] if self.init.at_rest else [0.0, 0.0, *self.init.v0]
        return np.concatenate([np.log(self.start[self.free]), ic])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lo = [np.log(LOG_BOUNDS[i][0]) for i in self.free]
        hi = [np.log(LOG_BOUNDS[i][1]) for i in self.free]
        if self.init.at_rest:
            lo += [-3.0, -3.0, -50.0]  # +-3 counts, release time +-5 ms
            hi += [3.0, 3.0, 50.0]
        else:
            lo += [-3.0, -3.0, -np.inf, -np.inf]
            hi += [3.0, 3.0, np.inf, np.inf]
        return np.array(lo), np.array(hi)

    def unpack(self, zs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        zs = np.atleast_2d(zs)
        m, nf = zs.shape[0], len(self.free)
        frs = np.repeat(self.start[None, :], m, axis=0)
        frs[:, self.free] = np.exp(zs[:, :nf])
        x0s = np.zeros((m, 4))
        x0s[:, 0] = self.init.q0[0] + zs[:, nf] * self.init.quantum
        x0s[:, 1] = self.init.q0[1] + zs[:, nf + 1] * self.init.quantum
        if self.init.at_rest:
            t0s = np.minimum(self.init.t0 + zs[:, nf + 2] * TR_UNIT, self.t_first)
        else:
            x0s[:, 2:] = zs[:, nf + 2:nf + 4]
            t0s = np.full(m, self.t_first)
        return frs, x0s, t0s

    def _simulate(self, zs: np.ndarray) -> np.ndarray:
        frs, x0s, t0s = self.unpack(zs)
        if frs.shape[0] == 1:
            sims = simulate_scheduled(self.rig_arr, frs[0], x0s[0], t0s[0], self.t_first,
                                      self.d.h, self.sched)[None]
        else:
            sims = simulate_batch(self.rig_arr, frs, x0s, t0s, self.t_first, self.d.h,
                                  self.sched)
        return (sims[:, self.rows, :] - self.meas[None]).reshape(sims.shape[0], -1)

    def fun(self, z: np.ndarray) -> np.ndarray:
        key = z.tobytes()
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        r = self._simulate(z)[0]
        self._cache = (key, r)
        self.nfev += 1
        if self.progress:
            self.progress(min(1.0, self.nfev / self.max_nfev),
                          f"output-error evaluation {self.nfev}")
        return r

    def jac(self, z: np.ndarray, r0: np.ndarray | None = None) -> np.ndarray:
        if r0 is None:
            r0 = self.fun(z)
        step = 1e-6 * np.maximum(1.0, np.abs(z))
        zs = z[None, :] + np.diag(step)
        cols = (self._simulate(zs) - r0[None, :]) / step[:, None]
        return cols.T


def residual_inflation(res: np.ndarray, max_lag: int = 400) -> float:
    """Variance inflation 1 + 2 sum rho_k of a residual series (sum while rho_k > 0.05)."""
    r = res - res.mean()
    n = r.size
    if n < 10 or not np.any(r):
        return 1.0
    spec = np.fft.rfft(r, 2 * n)
    acf = np.fft.irfft(spec * np.conj(spec))[: min(max_lag, n - 1) + 1]
    acf = acf / acf[0]
    below = np.flatnonzero(acf[1:] < 0.05)
    cut = int(below[0]) + 1 if below.size else acf.size
    return float(max(1.0, 1.0 + 2.0 * acf[1:cut].sum()))


class _SharedFrictionProblem:
    """Several captures fitted at once: shared friction parameters, one start state each.

    z = [log free parameters..., initial-state parameters of capture 0, of capture 1, ...].
    Each capture's Jacobian block comes from its own problem; initial-state columns
    are block diagonal (a capture's start changes only its own residuals).
    """

    def __init__(self, probs: list[OutputErrorProblem]) -> None:
        self.probs = probs
        self.nf = len(probs[0].free)
        self.nic = [p.z0().size - self.nf for p in probs]
        self.offsets = np.cumsum([self.nf, *self.nic])
        self.sizes = [p.rows.size * 2 for p in probs]

    def split(self, z: np.ndarray) -> list[np.ndarray]:
        return [np.concatenate([z[: self.nf], z[a:b]])
                for a, b in zip(self.offsets[:-1], self.offsets[1:])]

    def z0(self) -> np.ndarray:
        return np.concatenate([self.probs[0].z0()[: self.nf],
                               *(p.z0()[self.nf:] for p in self.probs)])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        b = [p.bounds() for p in self.probs]
        return (np.concatenate([b[0][0][: self.nf], *(lo[self.nf:] for lo, _ in b)]),
                np.concatenate([b[0][1][: self.nf], *(hi[self.nf:] for _, hi in b)]))

    def fun(self, z: np.ndarray) -> np.ndarray:
        return np.concatenate([p.fun(zi) for p, zi in zip(self.probs, self.split(z))])

    def jac(self, z: np.ndarray, r: np.ndarray | None = None) -> np.ndarray:
        out = np.zeros((sum(self.sizes), z.size))
        row = 0
        for k, (p, zi) in enumerate(zip(self.probs, self.split(z))):
            jk = p.jac(zi)
            out[row:row + jk.shape[0], : self.nf] = jk[:, : self.nf]
            out[row:row + jk.shape[0], self.offsets[k]:self.offsets[k + 1]] = jk[:, self.nf:]
            row += jk.shape[0]
        return out


@dataclass(frozen=True)
class Experiment:
    """One capture prepared for fitting."""

    d: Decimated
    rig: RigParams
    init: InitialState


def fit_output_error_many(experiments: list[Experiment], start: np.ndarray, free: list[int],
                          *, progress: Progress | None = None, max_nfev: int = 60,
                          horizon_s: float | None = None) -> list[OEFit]:
    """Fit shared friction parameters to several captures; one OEFit per capture.

    Parameters not in `free` stay at their `start` values (fixed parameters). Every
    returned OEFit carries the joint covariance of the shared parameters.
    """
    start = np.asarray(start, dtype=np.float64)
    probs = [OutputErrorProblem(e.d, e.rig, start, free, e.init, progress, max_nfev,
                                horizon_s=horizon_s) for e in experiments]
    joint = _SharedFrictionProblem(probs)
    lo, hi = joint.bounds()
    z0 = np.clip(joint.z0(), lo + 1e-9, hi - 1e-9)
    max_step = np.concatenate([np.full(len(free), MAX_LOG_STEP),
                               np.full(z0.size - len(free), 2.0)])
    res = levenberg_marquardt(joint.fun, joint.jac, z0, (lo, hi), max_step=max_step)
    dof = max(1, res.fun.size - res.x.size)
    s2 = 2.0 * res.cost / dof
    parts = np.split(res.fun, np.cumsum(joint.sizes)[:-1])
    infl = max(max(residual_inflation(r.reshape(-1, 2)[:, 0]),
                   residual_inflation(r.reshape(-1, 2)[:, 1])) for r in parts)
    cov_all = s2 * infl * np.linalg.pinv(res.jac.T @ res.jac)
    fits = []
    for k, (p, zk, rk) in enumerate(zip(probs, joint.split(res.x), parts)):
        idx = np.r_[0:joint.nf, joint.offsets[k]:joint.offsets[k + 1]]
        frs, x0s, t0s = p.unpack(zk)
        resid = rk.reshape(-1, 2)
        fits.append(OEFit(
            params=frs[0], free=list(free), z=zk, cov_z=cov_all[np.ix_(idx, idx)], x0=x0s[0],
            t0=float(t0s[0]), residual_rms=np.sqrt((resid ** 2).mean(axis=0)), inflation=infl,
            nfev=p.nfev, success=bool(res.success), message=str(res.message),
            extras={"cost": float(res.cost), "substep_mean": float(p.sched.mean()),
                    "jacobians": res.njev, "whiteness": whiteness(resid)}))
    return fits


def fit_output_error(d: Decimated, rig: RigParams, start: np.ndarray, free: list[int],
                     init: InitialState, *, progress: Progress | None = None,
                     max_nfev: int = 60, horizon_s: float | None = None) -> OEFit:
    """Least-squares output-error fit of one capture from `start` over `free` parameters.

    horizon_s limits the fit to the first seconds of the capture (None: all of it).
    """
    return fit_output_error_many([Experiment(d, rig, init)], start, free, progress=progress,
                                 max_nfev=max_nfev, horizon_s=horizon_s)[0]


def whiteness(resid: np.ndarray, lags: tuple[int, ...] = (1, 10, 100)
              ) -> dict[str, dict[str, float]]:
    """Residual autocorrelation per joint at a few lags: near 0 means white residuals."""
    out = {}
    for j, name in enumerate(JOINT_NAMES):
        r = resid[:, j] - resid[:, j].mean()
        den = float(r @ r) or 1.0
        out[name] = {f"lag{k}": float(r[:-k] @ r[k:] / den) for k in lags if k < r.size}
    return out
