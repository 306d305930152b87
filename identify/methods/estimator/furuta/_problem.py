"""Multiple shooting: a long capture fitted in segments, the rig and friction shared.

The tilted Furuta pendulum is chaotic at large angles: one simulation from one start
over 35 s follows the capture only if every parameter is exact. Here the capture is cut
into segments of `segment_s` seconds, each simulated from a state of its own (4
variables, fitted), while the rig and the friction are one set for all. Neighbouring
segments overlap by `overlap_s`: both must fit the samples they share, which ties each
segment's state to the end of the one before (continuity through the data; each shared
sample counts once, split between the two).

Residuals, in standard deviations:

    data   (q_sim - q_meas) / sigma_j   per sample and joint (sigma_j: the joint's noise)
    prior  RigPrior.residuals           the nominal rig and what was measured of it

Variables z = [rig (logs of RIG_VARIABLES, the tilt), log friction (the terms of each
joint's friction law, LAWS), extra terms (EXTRA_TERMS switched on), then each segment's
state (theta0, theta1, theta0', theta1')]. The simulation takes the rig's normalised vector u
(identify.model.NORMALISED): the Jacobian is d r/d c (forward sensitivities by the
equations' coefficients c, every segment simulated once, in parallel) times d c/d u
times d u/d z (the last two: central differences of cheap maps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._progress import Progress
from ....model import (
    NORMALISED,
    PARAM_NAMES,
    coefficient_jacobian,
    coefficients,
    equivalent_rigs,
    friction_rate,
    simulate_jobs,
    simulate_jobs_sensitivity,
)
from ....signal import Decimated
from ....solvers import BlockJacobian
from ..._oe_problem import (
    LOG_BOUNDS,
    OMEGA_REF,
    signed_schedule,
    simulated_schedule,
    split_schedule,
    substep_schedule,
)
from ._prior import RIG_VARIABLES, RigPrior

__all__ = ["COARSE_FLOOR", "EXTRA_TERMS", "FINE_FLOOR", "FINE_START", "FRICTION_FREE", "LAWS",
           "NEAR_MARGIN", "NEAR_ZERO_RAD_S", "OMEGA_COULOMB", "UNRESOLVED_SHARE", "BlockJacobian",
           "Segments", "ShootingProblem", "friction_bounds"]

#: the friction parameters a free decay can fit (Fn_t: see the pipeline), per joint
FRICTION_FREE = ("mu_d0", "mu_s0", "mu_v0", "omega_t0", "mu_d1", "mu_s1", "mu_v1", "omega_t1")
#: a joint's friction laws, each by the terms it fits: Coulomb and viscous (mu_s = mu_d:
#: no Stribeck hump); Brown-McPhee (seed eq. 5)
LAWS: dict[str, tuple[str, ...]] = {
    "coulomb-viscous": ("mu_d", "mu_v"),
    "brown-mcphee": ("mu_d", "mu_s", "mu_v", "omega_t"),
}
#: rad/s: the tanh width of a law without Stribeck's terms, whose omega_t is not fitted
#: (as a chain rig's v_t)
OMEGA_COULOMB = 1e-2
#: the sharpest friction transition (omega_t, rad/s) the fit resolves, and the RK4
#: substeps per interval it may take near a reversal to do so: (floor, substeps). The
#: coarse one is the other methods'; the fine one is taken only when a joint's fit
#: reaches the coarse floor while spending long near zero velocity (an arm with omega_t
#: 1.3e-3 had mu_v 20 % off at 2.5e-3 and 0.0 % at 5e-4), since it costs more. It is the
#: sharpest transition the realistic captures draw, 1e-4: the schedule keeps RK4 stable
#: where friction holds a joint (friction_rate; without that, 2e-4 overflowed the
#: sensitivities), and where that would take more than 3 times the substeps accuracy asks,
#: the interval is simulated with an implicit step instead (split_schedule,
#: identify.model._implicit: a stuck arm had asked RK4 for 47 per interval). At 5e-4,
#: bench_speed's realistic capture 8 (arm 3.6e-4) stayed at 2.3 times the noise and took
#: a drag and a cable it does not have, in 17-27 s; at 1e-4 its omega_t comes out
#: 3.6e-4, the arm at 0.68 times the noise, in 2.4 s
COARSE_FLOOR = (OMEGA_REF, 16)
FINE_FLOOR = (1e-4, 256)
#: where a joint's omega_t at the coarse floor starts the fit on the finer one (rad/s):
#: from the coarse floor itself the fit crept down its steep side (bench_speed's realistic
#: capture 8, truth 3.6e-4: 40 iterations reached 7.6e-4, the arm 5.7 times the noise,
#: and the restarts that followed took 17 s); from here, 3.6e-4 in 30 and 0.68 times it
FINE_START = 1e-3
#: a joint below NEAR_ZERO_RAD_S for more than this share of the capture, with omega_t at
#: its floor, has its viscous term bent by the transition the fit cannot resolve: on
#: realistic captures the arm (40-87 % of its time there) had mu_v off by 7-70 % while its
#: mu_d held within 2 %; the pendulum (1-3 %) kept both within 2 %
UNRESOLVED_SHARE = 0.1
NEAR_ZERO_RAD_S = 0.05
#: on the fine floor each joint's substeps follow its own omega_t, taken this factor
#: sharper for accuracy near a reversal and for stability where friction holds the
#: joint (transition_scale; past 3 times accuracy's substeps, the implicit step's). With
#: the floor's everywhere, an arm that sticks for long (realistic capture 6 of
#: bench_speed, omega_t 3.7e-4) took 16.8 substeps per interval and 10 s; with (4, 2),
#: 5.5 s and the same fit. (2, 2) let a fit run its omega_t below what the schedule
#: holds (capture 8 took a drag and a cable it does not have); (4, 4) stopped capture 6's
#: arm at 4.1e-4 (truth 3.7e-4, mu_v0 +0.5 % against -0.0 %)
SCHEDULE_MARGIN = (4.0, 2.0)
#: the stretch around each reversal given those substeps (simulated_schedule's reach and
#: widen): the interval the reversal falls in and one on either side. A fit moves its
#: reversals while the schedule stands, so the end of every fit is checked (cover). The
#: measured schedule's margin, (3.0, 3), gave 2.2 substeps per interval against 1.5 and the
#: same angles: at a fit of each of 12 realistic captures both differed from 4 times the
#: substeps everywhere by at most 0.009 and 0.094 of the noise (arm, pendulum)
NEAR_MARGIN = (1.0, 1)
#: the extra terms a lab switches on: name -> (entry of u, how it is fitted)
EXTRA_TERMS = {"drag1": "drag1/P4", "spring0": "spring0/P4", "spring_rest0": "spring_rest0"}
_U = {name: k for k, name in enumerate(NORMALISED)}
_OMEGA_T = [FRICTION_FREE.index(f"omega_t{j}") for j in (0, 1)]
_W = len(RIG_VARIABLES) + 1  # rig variables: the logs, then the tilt


def _pendulum_inertia(v: dict[str, Any]) -> Any:
    """P4 = J2x + m2 l2^2 of the rig's variables v (by name)."""
    return v["j2x"] + v["m2"] * v["l2"] * v["l2"]


def friction_bounds(floor: float = OMEGA_REF) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of FRICTION_FREE in the fit: the shared ones, omega_t down to floor."""
    b = [LOG_BOUNDS[PARAM_NAMES.index(n)] for n in FRICTION_FREE]
    lo = np.array([floor if n.startswith("omega_t") else x[0]
                   for n, x in zip(FRICTION_FREE, b)])
    return lo, np.array([x[1] for x in b])


@dataclass(frozen=True)
class Segments:
    """Where each segment lies on the decimated grid (k: grid index - grid[0])."""

    start: np.ndarray  # (S,) k of each segment's first point (its state's time)
    length: np.ndarray  # (S,) simulated points, overlap included
    rows: list[np.ndarray]  # per segment: indices into d.q of the samples it fits
    at: list[np.ndarray]  # per segment: their points in the segment's simulation
    weight: list[np.ndarray]  # per segment: 1, or 1/sqrt(2) where two segments share

    @classmethod
    def cut(cls, d: Decimated, segment_s: float, overlap_s: float) -> Segments:
        """Segments of about segment_s over the whole of d, overlapping by overlap_s."""
        k = (d.grid - d.grid[0]).astype(np.int64)
        end = int(k[-1]) + 1
        seg = max(2, int(round(segment_s / d.h)))
        n_seg = max(1, int(round(end / seg)))
        return cls.starting(d, np.linspace(0, end, n_seg + 1).round().astype(np.int64)[:-1],
                      overlap_s)

    @classmethod
    def starting(cls, d: Decimated, bounds: np.ndarray, overlap_s: float) -> Segments:
        """Segments starting at the grid points `bounds` (k; the first 0)."""
        k = (d.grid - d.grid[0]).astype(np.int64)
        end = int(k[-1]) + 1
        lap = max(0, int(round(overlap_s / d.h)))
        bounds = np.append(np.asarray(bounds, dtype=np.int64), end)
        n_seg = bounds.size - 1
        starts, lengths, rows, at, weight = [], [], [], [], []
        for s in range(n_seg):
            # a segment starts on a measured point (a gap may swallow its nominal start)
            first = int(k[np.searchsorted(k, bounds[s])]) if bounds[s] <= k[-1] else end
            stop = min(end, int(bounds[s + 1]) + (lap if s + 1 < n_seg else 0))
            if stop - first < 2:
                continue
            r = np.flatnonzero((k >= first) & (k < stop))
            w = np.ones(r.size)
            if s + 1 < n_seg:
                w[k[r] >= bounds[s + 1]] = math.sqrt(0.5)
            if s > 0:
                w[k[r] < bounds[s] + lap] = math.sqrt(0.5)
            starts.append(first)
            lengths.append(stop - first)
            rows.append(r)
            at.append(k[r] - first)
            weight.append(w)
        return cls(np.array(starts), np.array(lengths), rows, at, weight)

    @property
    def count(self) -> int:
        return int(self.start.size)


class ShootingProblem:
    """Residuals and Jacobian of one capture's multiple-shooting fit (see module)."""

    #: how jac() differentiates: "sensitivity", or "difference" (a check and a baseline)
    jacobian: str = "sensitivity"

    def __init__(self, d: Decimated, prior: RigPrior, segments: Segments, sigma: np.ndarray,
                 extras: tuple[str, ...] = (), progress: Progress | None = None,
                 max_nfev: int = 60, sched: np.ndarray | None = None,
                 implicit: np.ndarray | None = None,
                 floor: tuple[float, int] = COARSE_FLOOR,
                 laws: tuple[str, str] = ("brown-mcphee", "brown-mcphee")) -> None:
        self.d, self.prior, self.seg = d, prior, segments
        self.sigma = np.asarray(sigma, dtype=np.float64)  # (2,) noise per joint, rad
        self.extras = tuple(extras)
        self.floor = floor  # (sharpest omega_t resolved, its substeps): see FINE_FLOOR
        unknown = [law for law in laws if law not in LAWS]
        if unknown or len(laws) != 2:
            raise ValueError(f"friction laws {laws!r}: two of {', '.join(LAWS)}")
        self.laws: tuple[str, str] = (laws[0], laws[1])
        #: the friction parameters fitted, in z's order
        self.friction_names = tuple(f"{term}{j}" for j, law in enumerate(self.laws)
                                    for term in LAWS[law])
        self._nf = len(self.friction_names)
        self.n_rig = _W  # the rig's variables lead z
        self.n_global = _W + self._nf + len(self.extras)
        # RK4 substeps per interval: from the measured motion until reschedule()
        self.sched = substep_schedule(d) if sched is None else sched
        # the intervals taken with the implicit step (split_schedule): on the fine floor
        self.implicit = np.zeros(self.sched.size, bool) if implicit is None else implicit
        self.seg_t0 = d.t[0] + segments.start * d.h
        self.meas = [d.q[r] for r in segments.rows]
        self.n_data = 2 * sum(r.size for r in segments.rows)
        # every fitted sample at once: its row in the segments' stacked simulation (each
        # segment's rows at out_offset), its measurement and its weight
        lengths = segments.length.astype(np.int64)
        self.out_offset = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        self._pick = np.concatenate([o + at for o, at in zip(self.out_offset, segments.at)])
        self._meas_all = np.concatenate(self.meas)
        self._w_all = np.concatenate(segments.weight)
        self._row_offsets = np.concatenate([[0], np.cumsum([2 * r.size for r in segments.rows])
                                            ]).astype(np.int64)
        self.progress, self.max_nfev = progress, max_nfev
        self.nfev = 0
        self._cache: tuple[bytes, np.ndarray] | None = None
        # u entries any variable moves: their columns are simulated
        self.active = np.flatnonzero(np.any(self.du_dg(self.global_start(
            np.full(8, 1e-3))) != 0, axis=1))

    def reschedule(self, z: np.ndarray, margin: tuple[float, int] = NEAR_MARGIN) -> None:
        """Take the RK4 substeps from the motion simulated at z instead of the measured one
        (identify.methods._oe_problem.simulated_schedule), with `margin` (reach, widen)
        around each reversal."""
        self.sched, self.implicit, _ = self._schedule_at(z, margin)
        self._cache = None

    def cover(self, z: np.ndarray) -> float | None:
        """Add the substeps the motion simulated at z asks for (NEAR_MARGIN) where the
        schedule has fewer: the reversals a fit moved out of their refined stretches are
        refined again. None where none were; else how far that moved z's data residuals
        (the sum of squares of their change, in standard deviations; NaN where the finer
        simulation overflows)."""
        need, implicit, sims = self._schedule_at(z, NEAR_MARGIN)
        if np.all(need <= self.sched) and not np.any(implicit & ~self.implicit):
            return None
        before = self._residuals_of(np.concatenate(sims))  # z's, on the schedule it had
        self.sched = np.maximum(self.sched, need)
        self.implicit = self.implicit | implicit
        self._cache = None
        with np.errstate(over="ignore", invalid="ignore"):
            change = self.fun(z)[:self.n_data] - before  # fun: a refit starts from it
            return float(change @ change)

    def _schedule_at(self, z: np.ndarray, margin: tuple[float, int]
                     ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """The substeps the motion simulated at z asks for, the intervals to take with the
        implicit step (on the fine floor, split_schedule), and that motion (per segment,
        on the current schedule)."""
        n = self.seg.count
        u = self.u_of(z[:self.n_global])
        sims = self._run(np.repeat(u[None], n, axis=0), self.states(z), np.arange(n))
        k = [first + np.arange(length) for first, length in zip(self.seg.start, self.seg.length)]
        omega_ref = self.transition_scale(z, SCHEDULE_MARGIN[0])  # the coarse floor's own
        if self.floor == FINE_FLOOR:  # only a transition this sharp outruns RK4's stability
            rig, fr = equivalent_rigs(u[None])
            c = coefficients(rig[0], fr[0])
            stable = self.transition_scale(z, SCHEDULE_MARGIN[1])
            rate = [friction_rate(c, sim[:, 1], stable) for sim in sims]
            sched, implicit = split_schedule(k, sims, self.d.h, self.sched.size, omega_ref,
                                             self.floor[1], rate, margin[0], margin[1])
            return sched, implicit, sims
        sched = simulated_schedule(k, sims, self.d.h, self.sched.size, omega_ref=omega_ref,
                                   max_sub=self.floor[1], reach=margin[0], widen=margin[1])
        return sched, np.zeros(sched.size, bool), sims

    def transition_scale(self, z: np.ndarray, margin: float) -> np.ndarray:
        """Each joint's friction transition at z as the schedule resolves it (2,): its
        omega_t a factor `margin` sharper (a fit moves it before it is rescheduled),
        never below the floor nor wider than the coarse floor: on the coarse floor, that
        floor for both."""
        omega_t = self.friction_of(z[:self.n_global])[_OMEGA_T] / margin
        return np.clip(omega_t, self.floor[0], COARSE_FLOOR[0])

    @property
    def kernel_schedule(self) -> np.ndarray:
        """The schedule as the simulation kernels take it (signed_schedule)."""
        return signed_schedule(self.sched, self.implicit)

    def reweigh(self, sigma: np.ndarray) -> None:
        """Weigh each joint's residuals by 1 / sigma from now on."""
        self.sigma = np.asarray(sigma, dtype=np.float64)
        self._cache = None

    # -- variables -----------------------------------------------------------------------
    def global_start(self, friction: np.ndarray) -> np.ndarray:
        """Rig at its nominal values, friction (8, FRICTION_FREE order: the terms the laws
        fit are taken), extras small."""
        # starts of the order a real rig shows (a 25 cm rod in air; a USB cable): from a
        # tiny start a log variable barely moves the residuals and the solver stops at once
        ex = {"drag1": math.log(3e-6), "spring0": math.log(1e-3), "spring_rest0": 0.0}
        return np.concatenate([self.prior.start(), np.log(self._fitted(friction)),
                               [ex[e] for e in self.extras]])

    def _fitted(self, friction: np.ndarray) -> np.ndarray:
        """The entries of an 8-vector (FRICTION_FREE order) the laws fit."""
        return np.array([friction[FRICTION_FREE.index(n)] for n in self.friction_names])

    def friction_of(self, g: np.ndarray) -> np.ndarray:
        """The whole friction (8, FRICTION_FREE order) of global variables g: a law
        without Stribeck's terms has mu_s = mu_d and omega_t = OMEGA_COULOMB."""
        return self._friction_rows(np.asarray(g, dtype=np.float64)[None])[0]

    def _friction_rows(self, gs: np.ndarray) -> np.ndarray:
        """friction_of of each row of gs."""
        # np.exp of each row's own slice, as one vector g's: the same values to the bit
        fitted = np.array([np.exp(row) for row in gs[:, _W:_W + self._nf]])
        col = {name: fitted[:, k] for k, name in enumerate(self.friction_names)}
        out = np.empty((gs.shape[0], len(FRICTION_FREE)))
        for j in range(len(self.laws)):
            mu_d = col[f"mu_d{j}"]
            out[:, 4 * j] = mu_d
            out[:, 4 * j + 1] = col.get(f"mu_s{j}", mu_d)
            out[:, 4 * j + 2] = col[f"mu_v{j}"]
            out[:, 4 * j + 3] = col.get(f"omega_t{j}", OMEGA_COULOMB)
        return out

    def friction_index(self, name: str) -> int | None:
        """Where the friction parameter `name` is in z, or None if the laws do not fit it."""
        return _W + self.friction_names.index(name) if name in self.friction_names else None

    def on_fine_floor(self, z: np.ndarray, joints: list[int],
                      sigma: np.ndarray | None = None) -> tuple[ShootingProblem, np.ndarray]:
        """This problem on FINE_FLOOR (weighed by `sigma`, else as this one) and z with the
        transitions of `joints` started at FINE_START, its substeps from the motion there."""
        fine = ShootingProblem(self.d, self.prior, self.seg,
                               self.sigma if sigma is None else sigma, self.extras,
                               self.progress, floor=FINE_FLOOR, laws=self.laws)
        z = z.copy()
        for j in joints:
            z[self.friction_index(f"omega_t{j}")] = math.log(FINE_START)
        fine.reschedule(z)
        return fine, z

    def transition_at_floor(self, z: np.ndarray, joint: int) -> bool:
        """Whether the joint's omega_t in z sits at this problem's floor (a joint without
        one: no)."""
        k = self.friction_index(f"omega_t{joint}")
        return k is not None and math.exp(float(z[k])) <= self.floor[0] * 1.0001

    def unresolved(self, z: np.ndarray, joint: int) -> bool:
        """Whether the joint's transition is sharper than this floor resolves (omega_t at
        it) and the joint spends long enough near zero velocity for that to shape the
        motion (UNRESOLVED_SHARE of the capture below NEAR_ZERO_RAD_S)."""
        if not self.transition_at_floor(z, joint):
            return False
        v = np.abs(self.d.v[:, joint])
        v = v[np.isfinite(v)]
        return bool(v.size and float(np.mean(v < NEAR_ZERO_RAD_S)) > UNRESOLVED_SHARE)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        start = self.prior.start()
        lo = [*(start[:-1] - math.log(3.0)), 0.0]
        hi = [*(start[:-1] + math.log(3.0)), math.radians(89.0)]
        f_lo, f_hi = friction_bounds(self.floor[0])
        lo += list(np.log(self._fitted(f_lo)))
        hi += list(np.log(self._fitted(f_hi)))
        ex_lo = {"drag1": math.log(1e-12), "spring0": math.log(1e-9), "spring_rest0": -math.pi}
        ex_hi = {"drag1": math.log(1e-1), "spring0": math.log(10.0), "spring_rest0": math.pi}
        lo += [ex_lo[e] for e in self.extras]
        hi += [ex_hi[e] for e in self.extras]
        n_state = 4 * self.seg.count
        return (np.concatenate([lo, np.full(n_state, -np.inf)]),
                np.concatenate([hi, np.full(n_state, np.inf)]))

    def u_of(self, g: np.ndarray) -> np.ndarray:
        """The normalised vector u of global variables g."""
        return self._u_rows(np.asarray(g, dtype=np.float64)[None])[0]

    def _u_rows(self, gs: np.ndarray) -> np.ndarray:
        """u_of of each row of gs, row by row the same arithmetic as one g alone (du_dg
        maps its 2 n_global shifted copies at once)."""
        rows = gs.shape[0]
        # math.exp element by element, as for one g: numpy's vector exp may round otherwise
        logs = gs[:, :len(RIG_VARIABLES)].tolist()
        ex_rig = np.array([[math.exp(x) for x in row] for row in logs]).reshape(rows, -1)
        v = {n: ex_rig[:, k] for k, n in enumerate(RIG_VARIABLES)}
        phi = gs[:, _W - 1]
        rig = self.prior.nominal
        grav = rig.g
        m1, m2, l1, l2, L1 = v["m1"], v["m2"], v["l1"], v["l2"], v["L1"]
        p1 = v["j1z"] + m1 * l1 * l1 + m2 * L1 * L1 + v["j2z"]
        p2 = m2 * l2 * l2 + v["j2y"] - v["j2z"]
        p3 = m2 * l2 * L1
        p4 = _pendulum_inertia(v)
        # normal forces from the fitted masses unless the config sets them
        fn0 = rig.Fn0 if rig.Fn0 is not None else (m1 + m2) * grav
        fn1 = rig.Fn1 if rig.Fn1 is not None else m2 * grav
        f = self._friction_rows(gs)
        u = np.zeros((rows, len(NORMALISED)))
        u[:, 0], u[:, 1], u[:, 2] = p1 / p4, p2 / p4, p3 / p4
        u[:, 3], u[:, 4], u[:, 5] = grav * m2 * l2 / p4, phi, (m1 * l1 + m2 * L1) / (m2 * l2)
        u[:, 6], u[:, 7], u[:, 8], u[:, 9] = fn0 * f[:, 0] / p4, fn0 * f[:, 1] / p4, \
            f[:, 2] / p4, f[:, 3]
        u[:, 10], u[:, 11], u[:, 12], u[:, 13] = fn1 * f[:, 4] / p4, fn1 * f[:, 5] / p4, \
            f[:, 6] / p4, f[:, 7]
        ex = {name: gs[:, _W + self._nf + k] for k, name in enumerate(self.extras)}
        spring = (np.array([math.exp(x) for x in ex["spring0"].tolist()]) if "spring0" in ex
                  else rig.spring0)
        u[:, _U["spring0/P4"]] = spring / p4
        u[:, _U["spring_rest0"]] = ex.get("spring_rest0", math.radians(rig.spring_rest0_deg))
        drag = (np.array([math.exp(x) for x in ex["drag1"].tolist()]) if "drag1" in ex
                else rig.drag1)
        u[:, _U["drag1/P4"]] = drag / p4
        return u

    def pendulum_inertia(self, g: np.ndarray) -> float:
        """P4 = J2x + m2 l2^2 of global variables g: what u divides the pendulum's
        torques by (drag1/P4)."""
        return _pendulum_inertia({n: math.exp(g[k]) for k, n in enumerate(RIG_VARIABLES)})

    def du_dg(self, g: np.ndarray) -> np.ndarray:
        """d u / d g (len(u), n_global), by central differences of the cheap map."""
        step = 1e-6
        n = g.size
        shifted = np.repeat(np.asarray(g, dtype=np.float64)[None], 2 * n, axis=0)
        k = np.arange(n)
        shifted[2 * k, k] += step
        shifted[2 * k + 1, k] -= step
        us = self._u_rows(shifted)
        return ((us[0::2] - us[1::2]) / (2 * step)).T

    def prior_jacobian_z(self) -> np.ndarray:
        """d prior residuals / d z."""
        out = np.zeros((self.prior.jacobian().shape[0], self.n_global + 4 * self.seg.count))
        out[:, :_W] = self.prior.jacobian()
        return out

    def states(self, z: np.ndarray) -> np.ndarray:
        return z[self.n_global:].reshape(-1, 4)

    # -- simulation ----------------------------------------------------------------------
    def _run(self, us: np.ndarray, x0s: np.ndarray, segs: np.ndarray) -> list[np.ndarray]:
        """Simulate job i: parameter row us[i], state x0s[i], segment segs[i]."""
        rigs, frs = equivalent_rigs(us)
        lengths = self.seg.length[segs]
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        out = simulate_jobs(rigs, frs, x0s, segs.astype(np.int64), self.seg_t0,
                            self.seg.start.astype(np.int64), self.seg.length.astype(np.int64),
                            self.d.h, self.kernel_schedule, offsets, int(lengths.sum()))
        return [out[o:o + n] for o, n in zip(offsets, lengths)]

    def _segment_residual(self, s: int, sim: np.ndarray) -> np.ndarray:
        r = (sim[self.seg.at[s]] - self.meas[s]) / self.sigma
        return (r * self.seg.weight[s][:, None]).ravel()

    def data_residuals(self, z: np.ndarray) -> np.ndarray:
        return self.residuals_at(self.u_of(z[:self.n_global]), self.states(z))

    def residuals_at(self, u: np.ndarray, states: np.ndarray) -> np.ndarray:
        """Data residuals of every segment simulated with the normalised vector u (which
        may hold terms this problem does not fit) from the given states."""
        rigs, frs = equivalent_rigs(u)
        n = self.seg.count
        sim = simulate_jobs(np.repeat(rigs, n, axis=0), np.repeat(frs, n, axis=0), states,
                            np.arange(n, dtype=np.int64), self.seg_t0,
                            self.seg.start.astype(np.int64), self.seg.length.astype(np.int64),
                            self.d.h, self.kernel_schedule, self.out_offset,
                            int(self.seg.length.sum()))
        return self._residuals_of(sim)

    def _residuals_of(self, sim: np.ndarray) -> np.ndarray:
        """Data residuals of the segments' stacked simulation (rows at out_offset)."""
        r = (sim[self._pick] - self._meas_all) / self.sigma * self._w_all[:, None]
        return r.ravel()

    def fun(self, z: np.ndarray) -> np.ndarray:
        key = z.tobytes()
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        r = np.concatenate([self.data_residuals(z), self.prior.residuals(z[:_W])])
        self._cache = (key, r)
        self.nfev += 1
        if self.progress:
            self.progress(min(1.0, self.nfev / self.max_nfev),
                          f"multiple shooting, evaluation {self.nfev}")
        return r

    def jac(self, z: np.ndarray, r0: np.ndarray | None = None, *,
            global_columns: bool = True) -> BlockJacobian:
        """The Jacobian at z, by forward sensitivities (identify.model
        simulate_jobs_sensitivity: every segment once, in parallel); without the global
        columns (zeros) when only the states are being fitted. With jacobian =
        "difference", by finite differences instead (as a check, and a baseline)."""
        if r0 is None:
            r0 = self.fun(z)
        if self.jacobian == "difference":
            return self._jac_difference(z, r0, global_columns)
        g = z[:self.n_global]
        u = self.u_of(g)
        active = self.active if global_columns else self.active[:0]
        dc_du = coefficient_jacobian(u)[:, active]
        cols = np.flatnonzero(np.any(dc_du != 0, axis=1))
        rigs, frs = equivalent_rigs(u)
        _, sens = simulate_jobs_sensitivity(
            rigs[0], frs[0], cols.astype(np.int64), self.states(z),
            self.seg.start.astype(np.int64), self.seg.length.astype(np.int64), self.d.h,
            self.kernel_schedule, self.out_offset, int(self.seg.length.sum()))
        n_p = cols.size
        d = sens[self._pick]  # in place from here: two arrays of every derivative fewer
        d /= self.sigma[None, :, None]
        d *= self._w_all[:, None, None]
        d = d.reshape(self.n_data, n_p + 4)
        j_c = d[:, :n_p]
        off = self._row_offsets
        blocks = [(int(off[s]), int(off[s + 1]), d[off[s]:off[s + 1], n_p:])
                  for s in range(self.seg.count)]
        dense = np.zeros((r0.size, self.n_global))
        if active.size:
            dense[:self.n_data] = j_c @ (dc_du[cols] @ self.du_dg(g)[active])
        dense[self.n_data:, :_W] = self.prior.jacobian()
        return BlockJacobian(dense, blocks)

    def _jac_difference(self, z: np.ndarray, r0: np.ndarray, global_columns: bool
                        ) -> BlockJacobian:
        """jac by forward differences: one simulation of every segment per fitted entry
        of u, and of each segment per state entry (the check on the sensitivities)."""
        g = z[:self.n_global]
        u = self.u_of(g)
        x0 = self.states(z)
        n = self.seg.count
        active = self.active if global_columns else self.active[:0]
        # jobs: each active u entry perturbed, every segment; each state entry, its segment
        du = 1e-6 * np.maximum(np.abs(u[active]), 1e-3)
        us, xs, segs = [np.zeros((0, u.size))], [np.zeros((0, 4))], [np.zeros(0, np.int64)]
        for c, step in zip(active, du):
            up = u.copy()
            up[c] += step
            us.append(np.repeat(up[None], n, axis=0))
            xs.append(x0)
            segs.append(np.arange(n))
        dx = 1e-6 * np.maximum(np.abs(x0), 1e-2)
        for s in range(n):
            xp = np.repeat(x0[s][None], 4, axis=0) + np.diag(dx[s])
            us.append(np.repeat(u[None], 4, axis=0))
            xs.append(xp)
            segs.append(np.full(4, s))
        sims = self._run(np.concatenate(us), np.concatenate(xs), np.concatenate(segs))
        base = r0[:self.n_data]
        sizes = [2 * r.size for r in self.seg.rows]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        j_u = np.zeros((self.n_data, active.size))
        job = 0
        for col in range(active.size):
            for s in range(n):
                a, b = offsets[s], offsets[s + 1]
                j_u[a:b, col] = (self._segment_residual(s, sims[job]) - base[a:b]) / du[col]
                job += 1
        dense = np.zeros((r0.size, self.n_global))
        if active.size:
            dense[:self.n_data] = j_u @ self.du_dg(g)[active]
        dense[self.n_data:, :_W] = self.prior.jacobian()
        blocks = []
        for s in range(n):
            a, b = int(offsets[s]), int(offsets[s + 1])
            blk = np.empty((b - a, 4))
            for i in range(4):
                blk[:, i] = (self._segment_residual(s, sims[job]) - base[a:b]) / dx[s, i]
                job += 1
            blocks.append((a, b, blk))
        return BlockJacobian(dense, blocks)
