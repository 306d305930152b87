"""The multiple-shooting problem's Jacobian and integration grid.

Its Jacobian comes from forward sensitivities (one simulation of each segment), so it
must be the finite-difference Jacobian of the same residuals; and its RK4 substeps come
from the simulated motion, so a noisy capture costs what a clean one does.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hilrig.identify import TABLE_III_TRUTH, RigParams
from hilrig.identify.methods._oe_problem import simulated_schedule, substep_schedule
from hilrig.identify.methods.estimator import noise_sigma
from hilrig.identify.methods.estimator.furuta import (
    COARSE_FLOOR,
    FINE_FLOOR,
    FRICTION_FREE,
    RIG_VARIABLES,
    RigPrior,
    Segments,
    ShootingProblem,
    segment_states,
)
from hilrig.identify.methods.estimator.furuta._fit import COVER_TOL, _covered
from hilrig.identify.methods.estimator.furuta._problem import OMEGA_COULOMB
from hilrig.identify.model import NORMALISED, PARAM_NAMES, Realism
from hilrig.identify.signal import decimate, motion_start, realistic_capture
from hilrig.identify.solvers import BlockJacobian, LMResult

NOMINAL = RigParams(tilt_deg=10.0)
TRUE_FRICTION = np.array([TABLE_III_TRUTH.as_array()[PARAM_NAMES.index(n)]
                          for n in FRICTION_FREE])


def _problem(realism: Realism, rate_hz: float = 10_000.0, duration: float = 6.0,
             extras: tuple[str, ...] = ()) -> tuple[ShootingProblem, np.ndarray]:
    cap = realistic_capture(NOMINAL, TABLE_III_TRUTH, (0.0, 120.0), duration, realism,
                            rate_hz=rate_hz)
    m = cap.measurement
    d = decimate(m, motion_start(m), 500.0)
    seg = Segments.cut(d, 1.0, 0.25)
    p = ShootingProblem(d, RigPrior.of(NOMINAL), seg, noise_sigma(d, m.resolution_rad),
                        extras)
    # states from the data at each segment's start: near, not at, the optimum
    return p, np.concatenate([p.global_start(TRUE_FRICTION), segment_states(d, seg).ravel()])


def _richardson(fun, z: np.ndarray, col: int, h: float) -> np.ndarray:
    """d fun/d z[col] by central differences at h and h/2, extrapolated: error ~h^4."""
    def central(step: float) -> np.ndarray:
        zp, zm = z.copy(), z.copy()
        zp[col] += step
        zm[col] -= step
        return (fun(zp) - fun(zm)) / (2 * step)
    return (4 * central(h / 2) - central(h)) / 3


def _assert_column_is_the_derivative(p: ShootingProblem, z: np.ndarray, j: BlockJacobian,
                                     col: int) -> None:
    """Column col of the Jacobian j against Richardson-extrapolated central differences of
    the residuals, to 1e-4 of its size."""
    fd = _richardson(p.fun, z, col, 4e-4)
    n_g = p.n_global
    if col < n_g:
        exact = j.dense[:, col]
    else:
        s, i = divmod(col - n_g, 4)
        a, b, blk = j.blocks[s]
        exact = np.zeros_like(fd)
        exact[a:b] = blk[:, i]
    assert np.abs(exact - fd).max() <= 1e-4 * np.abs(fd).max() + 1e-12, col


def _u_one_g_at_a_time(p: ShootingProblem, g: np.ndarray) -> np.ndarray:
    """u of one g, as ShootingProblem.u_of computed it before it mapped rows at once (the
    reference the batched map must match to the bit)."""
    v = {n: math.exp(g[k]) for k, n in enumerate(RIG_VARIABLES)}
    w = len(RIG_VARIABLES) + 1
    phi = float(g[w - 1])
    rig = p.prior.nominal
    grav = rig.g
    m1, m2, l1, l2, L1 = v["m1"], v["m2"], v["l1"], v["l2"], v["L1"]
    p1 = v["j1z"] + m1 * l1 * l1 + m2 * L1 * L1 + v["j2z"]
    p2 = m2 * l2 * l2 + v["j2y"] - v["j2z"]
    p3 = m2 * l2 * L1
    p4 = v["j2x"] + v["m2"] * v["l2"] * v["l2"]
    fn0 = rig.Fn0 if rig.Fn0 is not None else (m1 + m2) * grav
    fn1 = rig.Fn1 if rig.Fn1 is not None else m2 * grav
    nf = len(p.friction_names)
    fitted = dict(zip(p.friction_names, np.exp(g[w:w + nf]), strict=True))
    f = []
    for j in range(2):
        mu_d = fitted[f"mu_d{j}"]
        f += [mu_d, fitted.get(f"mu_s{j}", mu_d), fitted[f"mu_v{j}"],
              fitted.get(f"omega_t{j}", OMEGA_COULOMB)]
    u = np.zeros(len(NORMALISED))
    u[:6] = (p1 / p4, p2 / p4, p3 / p4, grav * m2 * l2 / p4, phi,
             (m1 * l1 + m2 * L1) / (m2 * l2))
    u[6:10] = (fn0 * f[0] / p4, fn0 * f[1] / p4, f[2] / p4, f[3])
    u[10:14] = (fn1 * f[4] / p4, fn1 * f[5] / p4, f[6] / p4, f[7])
    ex = dict(zip(p.extras, g[w + nf:]))
    u[NORMALISED.index("spring0/P4")] = (math.exp(ex["spring0"]) if "spring0" in ex
                                         else rig.spring0) / p4
    u[NORMALISED.index("spring_rest0")] = ex.get("spring_rest0",
                                                 math.radians(rig.spring_rest0_deg))
    u[NORMALISED.index("drag1/P4")] = (math.exp(ex["drag1"]) if "drag1" in ex
                                       else rig.drag1) / p4
    return u


@pytest.mark.parametrize("laws", [("brown-mcphee", "brown-mcphee"),
                                  ("coulomb-viscous", "brown-mcphee")])
@pytest.mark.parametrize("extras", [(), ("drag1", "spring0", "spring_rest0")])
def test_u_and_du_dg_are_one_g_at_a_time_to_the_bit(laws, extras):
    """du_dg maps its 2 n_global shifted copies at once; each must be u of that g alone,
    as before, so that every Jacobian, and every fit, is what it was."""
    p, _ = _problem(Realism(seed=1))
    p = ShootingProblem(p.d, p.prior, p.seg, p.sigma, extras, laws=laws)
    rng = np.random.default_rng(2)
    for _ in range(3):
        g = p.global_start(TRUE_FRICTION) + rng.normal(0.0, 0.3, p.n_global)
        assert np.array_equal(p.u_of(g), _u_one_g_at_a_time(p, g))
        one_at_a_time = np.zeros((len(NORMALISED), g.size))
        for i in range(g.size):
            gp, gm = g.copy(), g.copy()
            gp[i] += 1e-6
            gm[i] -= 1e-6
            one_at_a_time[:, i] = (_u_one_g_at_a_time(p, gp) - _u_one_g_at_a_time(p, gm)) \
                / (2 * 1e-6)
        assert np.array_equal(p.du_dg(g), one_at_a_time)


@pytest.mark.parametrize("extras", [(), ("drag1", "spring0", "spring_rest0")])
def test_the_jacobian_is_the_derivative_of_the_residuals(extras):
    """Against central differences of the residuals (Richardson-extrapolated), column by
    column (every global variable; the states of the first and last segment). One-sided
    differences, the old way, were 1-1.5 % off on the pendulum's Stribeck columns; these
    agree to 1e-4."""
    p, z = _problem(Realism(seed=5, jitter_counts=1), extras=extras)
    j = p.jac(z)
    n_g = p.n_global
    last = n_g + 4 * (p.seg.count - 1)
    for col in [*range(n_g), n_g, n_g + 3, last, last + 2]:
        _assert_column_is_the_derivative(p, z, j, col)


def test_on_the_finer_floor_a_held_arm_takes_the_implicit_step_and_the_jacobian_holds():
    """An arm friction ten times Table III's with sharp transitions holds the arm for half
    the capture: there the fine floor's schedule hands the intervals to the implicit step
    (identify.model._implicit) with a fraction of RK4's substeps, and the Jacobian is
    still the derivative of the residuals."""
    t = TABLE_III_TRUTH
    friction = t.model_copy(update={"omega_t0": 2e-4, "omega_t1": 2e-4,
                                    "mu_d0": 10 * t.mu_d0, "mu_s0": 10 * t.mu_s0})
    cap = realistic_capture(NOMINAL, friction, (0.0, 120.0), 6.0,
                            Realism(seed=2, jitter_counts=1))
    m = cap.measurement
    d = decimate(m, motion_start(m), 500.0)
    seg = Segments.cut(d, 1.0, 0.25)
    p = ShootingProblem(d, RigPrior.of(NOMINAL), seg, noise_sigma(d, m.resolution_rad),
                        floor=FINE_FLOOR)
    true = np.array([friction.as_array()[PARAM_NAMES.index(n)] for n in FRICTION_FREE])
    z = np.concatenate([p.global_start(true), segment_states(d, seg).ravel()])
    p.sched = np.full_like(p.sched, 512)  # RK4 stable everywhere: the reference
    reference = p.data_residuals(z).copy()  # in units of each joint's noise
    p.reschedule(z)
    assert p.implicit.mean() > 0.3
    assert p.sched.mean() < 12.0  # RK4 kept stable took 47 per interval
    assert np.abs(p.data_residuals(z) - reference).max() < 0.1
    j = p.jac(z)
    n_g = p.n_global
    # the arm's friction, which holds it, and the arm's angle at the first two segments'
    # starts. (Through these sharp transitions the other columns differ from the
    # differences by 2e-4..4e-3 of their size on RK4 kept stable as on this schedule.)
    arm = [p.friction_index(f"{name}0") for name in ("mu_d", "mu_s", "mu_v", "omega_t")]
    for col in [*arm, n_g, n_g + 4]:
        _assert_column_is_the_derivative(p, z, j, col)


def test_a_noisy_capture_gets_substeps_only_where_the_simulated_motion_reverses():
    """Seed 000's Table V noise: the differentiated acceleration asks for the most substeps
    nearly everywhere; the simulated motion asks for them near reversals only."""
    p, z = _problem(Realism(seed=1, noise_rad=0.1), rate_hz=1_000.0)
    from_data = substep_schedule(p.d)
    p.reschedule(z)
    assert (from_data == from_data.max()).mean() > 0.5
    assert (p.sched > 1).mean() < 0.15
    assert p.sched.max() > 1  # reversals still get their substeps


def test_a_joint_held_near_zero_velocity_gets_substeps_enough_for_rk4_to_stay_stable():
    # joint 0 still (no acceleration: accuracy asks no substeps), joint 1 swinging
    n, h = 200, 0.002
    q = np.column_stack([np.full(n, 0.3), np.sin(3.0 * np.arange(n) * h)])
    # h rate 10 on the still joint, 0.1 on the swinging one
    rate = np.column_stack([np.full(n, 10.0 / h), np.full(n, 0.1 / h)])
    plain = simulated_schedule([np.arange(n)], [q], h, n, omega_ref=5e-4, max_sub=64)
    stable = simulated_schedule([np.arange(n)], [q], h, n, omega_ref=5e-4, max_sub=64,
                                rate=[rate])
    assert plain.max() == 1
    assert np.all(stable == 4)  # ceil(10 / RK4_STABLE_HL)


def test_each_joint_near_a_reversal_gets_the_substeps_its_own_transition_needs():
    # joint 0's transition is sharp, joint 1's wide: together, each interval gets what
    # the joint asking most there asks under its own transition
    n, h = 1000, 0.002
    t = np.arange(n) * h  # reversals at pi/6 and pi/2 s
    swing, still = np.sin(3.0 * t), np.full(n, 0.1)
    k = [np.arange(n)]

    def schedule(q0, q1, omega_ref):
        return simulated_schedule(k, [np.column_stack([q0, q1])], h, n, omega_ref=omega_ref,
                                  max_sub=256)

    sharp0 = schedule(swing, still, 1e-4)
    wide1 = schedule(still, swing, 2.5e-3)
    assert 1 < wide1.max() < sharp0.max()
    own = schedule(swing, swing, np.array([1e-4, 2.5e-3]))
    assert np.array_equal(own, np.maximum(sharp0, wide1))


def test_on_the_finer_floor_each_joint_is_scheduled_by_its_own_transition():
    """transition_scale: omega_t a margin sharper, never below the fit's floor nor wider
    than the coarse floor (a Coulomb + viscous joint, omega_t 1e-2, takes the coarse)."""
    p, z = _problem(Realism(seed=2, jitter_counts=1), duration=3.0)
    fine = ShootingProblem(p.d, p.prior, p.seg, p.sigma, floor=FINE_FLOOR,
                           laws=("brown-mcphee", "coulomb-viscous"))
    g = fine.global_start(np.array([5e-4, 6e-4, 2.5e-4, 2e-3, 6e-4, 6e-4, 2.5e-4, 1e-2]))
    assert fine.transition_scale(g, 4.0) == pytest.approx([5e-4, COARSE_FLOOR[0]])
    g[fine.friction_index("omega_t0")] = np.log(2e-4)
    assert fine.transition_scale(g, 4.0) == pytest.approx([FINE_FLOOR[0], COARSE_FLOOR[0]])


def test_the_substeps_refine_only_the_intervals_next_to_each_reversal():
    """The fit's margin refines a subset of what the measured schedule's (3 intervals of
    the acceleration, widened by 3) does, at a fraction of the substeps, and simulates the
    same angles: both within a small share of the noise of a simulation with four times
    the substeps everywhere."""
    p, z = _problem(Realism(seed=2, jitter_counts=1))
    p.reschedule(z, (3.0, 3))
    wide = p.sched.copy()
    r_wide = p.data_residuals(z).copy()  # in units of each joint's noise
    p.reschedule(z)
    near = p.sched.copy()
    r_near = p.data_residuals(z).copy()
    p.sched = wide * 4
    r_fine = p.data_residuals(z).copy()
    assert np.all(near <= wide)
    assert near.sum() - near.size < 0.7 * (wide.sum() - wide.size)  # substeps added
    assert (near > 1).any()
    assert np.abs(r_near - r_fine).max() <= max(2 * np.abs(r_wide - r_fine).max(), 0.05)


def test_cover_refines_again_a_reversal_the_fit_moved_and_only_then():
    p, z = _problem(Realism(seed=2, jitter_counts=1))
    p.reschedule(z)
    assert p.cover(z) is None  # z's own reversals: already refined
    before = p.sched.copy()
    moved = z.copy()
    moved[p.n_global + 2::4] *= 1.3  # every segment starts faster: its reversals come later
    r_before = p.data_residuals(moved).copy()
    change = p.cover(moved)
    assert np.all(p.sched >= before) and (p.sched > before).any()
    r_after = p.data_residuals(moved)
    assert change == pytest.approx(float((r_after - r_before) @ (r_after - r_before)))
    assert p.cover(moved) is None


def _converged(p: ShootingProblem, z: np.ndarray, small_steps: bool = True) -> LMResult:
    r = p.fun(z)
    return LMResult(x=z, fun=r, jac=None, cost=0.5 * float(r @ r), nfev=1, njev=1,
                    success=True, message="", small_steps=small_steps)


def test_a_cover_that_leaves_the_residuals_as_they_were_spares_the_refit():
    """Where the substeps cover() adds change the residuals by less than COVER_TOL, the
    refit's first step would be below 0.1 standard errors: z stands, with the residuals
    of the finer simulation; a fit stopped other than on its steps is refitted all the same,
    and so is one whose residuals the added substeps did change."""
    p, z = _problem(Realism(seed=2, jitter_counts=1))
    p.reschedule(z)
    full = p.sched.copy()
    k = int(np.argmax(full))
    coarse = full.copy()
    coarse[k] -= 1  # one interval a substep short
    p.sched = coarse.copy()
    res = _converged(p, z)
    z_out, res_out = _covered(p, z, res)
    assert np.array_equal(z_out, z) and np.array_equal(p.sched, full)
    assert np.array_equal(res_out.fun, p.fun(z)) and not np.array_equal(res_out.fun, res.fun)
    assert res_out.njev == res.njev  # no Jacobian taken

    p.sched = coarse.copy()
    p.nfev = 0
    _covered(p, z, _converged(p, z, small_steps=False))
    assert p.nfev > 2  # refitted

    p.sched = np.ones_like(full)  # every reversal a whole interval in one RK4 step
    coarse_r = p.data_residuals(z).copy()
    p.sched = full
    assert float(((p.data_residuals(z) - coarse_r) ** 2).sum()) > COVER_TOL
    p.sched = np.ones_like(full)
    p.nfev = 0
    _covered(p, z, _converged(p, z))
    assert p.nfev > 2
