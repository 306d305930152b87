"""Which model the data support: each joint's friction law, extra terms, restarts.

1. Brown-McPhee on both joints, a joint whose transition is sharper than the coarse floor
   refitted on a finer one (finer_floor_asked; a joint that sticks goes on on the finer
   floor already after the fit's first stage, _fit.finer_where_stuck); a fit still far
   above the noise tried again with drag where the pendulum is far above it and drag's
   score test says drag might win, and from other omega_t (the transition may sit in
   another valley); where one joint alone is far off on a record whose noise is the
   encoder's, first from the fit itself with that joint's transition moved.
2. Per joint, Coulomb + viscous (mu_s = mu_d: no Stribeck hump) instead, where the data
   cannot carry the Stribeck pair: omega_t at a bound of the fit or its interval a factor
   10 either side (on seed 000's Table V noise the pendulum's omega_t escaped a
   hundredfold and its hump soaked up the viscous term), or mu_v so (the hump took the
   viscous term with omega_t well determined), or a term of the law held too loosely for
   its Wald interval (hump_weak); kept if its BIC is lower.
3. Air drag on the pendulum when its score test says it might win the BIC (started from
   the drag the test gives at first order, drag_start_of); a cable on the arm when the
   arm's residuals stay above the noise once drag is judged; kept where the fit also
   identifies it or its joint is above the noise without it (a term it cannot pin down on
   a joint already at the noise stands in for something else).
4. A joint the chosen model leaves on Coulomb + viscous while it stays above the noise
   given Brown-McPhee again, started from the chosen fit with a hump (_hump_again); where
   it wins, the extra terms that stood in for the hump taken away if the BIC agrees.
5. The chosen model, still above the noise or with a transition escaped above every
   start, fitted again from other omega_t.

The lowest BIC wins at every step, and every model tried is kept.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ...._progress import Progress
from ....model import JOINT_NAMES, NORMALISED, QUANTUM, quantisation_rms
from ....signal import Measurement
from ..._pipeline import GENERIC_START
from .._score import could_win_bic, not_fitted_note, one_sided, score_and_step
from .._stages import (
    ADEQUATE_EXCESS,
    at_noise_floor,
    out_of_reach,
    standard_error,
    weakly_determined,
)
from .._stages import escaped_transition as shared_escaped
from ._extras import needed
from ._fit import BROWN_MCPHEE, ShootingFit, finish, fit_free, fit_shooting, start_weights
from ._prior import RigPrior
from ._problem import (
    COARSE_FLOOR,
    EXTRA_TERMS,
    FRICTION_FREE,
    ShootingProblem,
)

#: the arm's cable: a spring and its rest angle, fitted together
CABLE = ("spring0", "spring_rest0")
#: a joint's friction laws (_problem.LAWS)
COULOMB, STRIBECK = "coulomb-viscous", "brown-mcphee"
#: the first fit this far above the noise is restarted from these omega_t (rad/s)
RESTART_EXCESS = 5.0
#: the chosen model (its laws and extra terms) still this far above the noise is fitted
#: again from the same omega_t: on noisy-sensor captures (1-10 mrad) arms left at
#: 1.47-1.58 times the noise had mu_d0 10-33 % off, and restarted came to 0.98 times it,
#: within 3 % (bench_coverage). After the extra terms, not before: an unmodelled drag
#: keeps the first fit above the noise, and restarting it there tripled the time
CHOSEN_RESTART_EXCESS = 1.3
#: about a factor 3 apart around the first start, 1e-2: a noisy-sensor capture's arm
#: stayed at 4.3 times the noise from 1e-1 and 1e-3 and reached 1.1 from 3e-3; tried in
#: turn only while the fit stays above the noise. 1e-3 lies below the coarse floor: that
#: start is fitted on the finer one (fit_shooting)
RESTART_OMEGA_T = (1e-1, 3e-3, 1e-3, 3e-2)
#: where a first fit is far above the noise on one joint alone, that joint's transition
#: is first moved to these (rad/s) from the fit itself (_one_joint_restarted)
ONE_JOINT_OMEGA_T = (1e-1, 3e-3)
#: residuals at most the noise: a restart that gets there ends its round
AT_THE_NOISE = 1.0
#: the hump a joint's Brown-McPhee law is started with from a Coulomb + viscous fit,
#: mu_s / mu_d: a clear hump inside the range real rigs show (the Monte Carlo draws 0.8-3;
#: Table III has 1.2 and 1.17; the capture that asked for this step, 1.54). The BIC judges
#: the trial as it judged the Coulomb + viscous fit: step 2 switches only where it wins
HUMP_START = 1.5


def select_model(m: Measurement, prior: RigPrior | None = None, *,
                 extras: tuple[str, ...] | None = None, progress: Progress | None = None
                 ) -> tuple[ShootingFit, float, list[dict[str, Any]]]:
    """The fit with the friction laws and extra terms the data support (module
    docstring). `extras` given: Brown-McPhee on both joints with exactly those terms,
    nothing tried. Returns the fit, where the free motion starts, and every model tried.
    """
    if extras is not None:
        fit = _refined_if_asked(fit_shooting(m, prior, extras=extras, laws=BROWN_MCPHEE,
                                             progress=progress), m)
        return fit, fit.t_start, [_tried(fit, chosen=True)]
    fit = _refined_if_asked(fit_shooting(m, prior, laws=BROWN_MCPHEE, progress=progress), m)
    fit = _restarted_first(m, prior, fit, progress)
    fits: list[ShootingFit] = [fit]
    skipped: list[dict[str, Any]] = []
    for joint in (0, 1):
        fit = _without_stribeck(m, prior, fit, joint, fits, progress)
    fit = _with_extras(m, prior, fit, fits, skipped, progress)
    fit = _hump_again(m, prior, fit, fits, progress)
    fit = _restarted_chosen(m, prior, fit, fits, progress)
    tried = [_tried(f, chosen=f is fit) for f in fits]
    return fit, fit.t_start, tried + skipped


def _restarted_first(m: Measurement, prior: RigPrior | None, fit: ShootingFit,
                     progress: Progress | None) -> ShootingFit:
    """The first fit, or a restart of it with a lower BIC (_restarts), tried in turn while
    the best stays far above the noise (RESTART_EXCESS)."""
    # a fit far above the noise sits in another valley: the Stribeck transition started
    # on the wrong side (true omega_t 0.06-0.09 rad/s left residuals 45-165 times the
    # noise from the 1e-2 start); try the other sides and keep the best. Or it lacks a
    # term: where the pendulum is far off and drag's score test says drag might win, the
    # first try is the same start with drag (_restarts: a drag of 2.5e-5 left a pendulum
    # at 14 times the noise; the four restarts without it took 17 s and stayed there)
    restarts, stat = _restarts(fit)
    drag_first = bool(restarts) and bool(restarts[0][1])
    moved = _one_joint_restarted(m, prior, fit, drag_first, progress)
    if moved.excess.max() <= AT_THE_NOISE:
        return moved
    for omega, extras in restarts:
        if fit.excess.max() <= RESTART_EXCESS:
            break
        alt = _refined_if_asked(fit_shooting(m, prior, laws=BROWN_MCPHEE, extras=extras,
                                             progress=progress, omega_t_start=omega), m)
        alt = replace(alt, drag_score=stat) if extras else alt
        fit = alt if alt.bic < fit.bic else fit
    return fit if fit.bic <= moved.bic else moved


def _one_joint_restarted(m: Measurement, prior: RigPrior | None, fit: ShootingFit,
                         drag_first: bool, progress: Progress | None) -> ShootingFit:
    """Where the first fit is far above the noise on one joint alone, on a record whose
    noise is the encoder's: that fit again from itself, the far joint's transition
    started at each of ONE_JOINT_OMEGA_T in turn (not within a factor 3 of where it is)
    with a hump of at least HUMP_START to carry it, until one reaches the noise; the
    lowest BIC, or `fit`. Where drag is asked for first (`drag_first`), only if the far
    joint's hump has turned over (mu_s < mu_d).

    Only the last stage runs (the rig, the other joint and the states stay where the
    first fit put them), so a trial costs a fraction of a cold restart's two stages. On
    the 4 such first fits of bench_speed's 48 realistic captures (seeds 3 and 4), arms at
    27 and 17 times the noise and pendulums at 19 and 38, the 0.1 rad/s trial reached the
    noise each time, in 0.3-1.4 s, where the cold restarts took 2.6-10.5 s; whichever
    side of the truth the transition had been on (an arm at 7.4e-3 against 5.6e-4, a
    pendulum at 1.6e-3 against 6.1e-2).

    Not with both joints far off: there the rig or both transitions are, and moved from
    itself the fit stayed 39-300 times above the noise (seed 3's capture 22, seed 4's
    captures 2, 5, 11). Not on noisy records: there it stopped at 1.05-1.16 times the
    noise with the arm 8-60 % off (seed 1's noisy-sensor captures 12, 42, 47), where the
    cold restarts reach 0.98. Not where drag is asked for and the far joint's hump stands
    (mu_s 1.5-5.7 times mu_d): those pendulums lacked drag, and no transition gave it (4
    drag-and-cable captures of seed 1); the two pendulums it did move had humps turned
    over to 0.41 and 0.06."""
    far = np.flatnonzero(fit.excess > RESTART_EXCESS)
    if far.size != 1 or not at_noise_floor(fit.noise, _floor_noise(m)).all():
        return fit
    j = int(far[0])
    p = fit.problem
    k_omega, k_mu_s, k_mu_d = (FRICTION_FREE.index(f"{name}{j}")
                               for name in ("omega_t", "mu_s", "mu_d"))
    start = p.friction_of(fit.z[:p.n_global])
    if drag_first and start[k_mu_s] >= start[k_mu_d]:
        return fit
    best = fit
    for omega in ONE_JOINT_OMEGA_T:
        friction = start.copy()
        if abs(math.log(omega / friction[k_omega])) < math.log(3.0):
            continue
        friction[k_omega] = omega
        friction[k_mu_s] = max(friction[k_mu_s], HUMP_START * friction[k_mu_d])
        trial = _refined_if_asked(fit_shooting(m, prior, laws=p.laws, extras=fit.extras,
                                               warm=fit, friction=friction,
                                               progress=progress), m)
        best = trial if trial.bic < best.bic else best
        if best.excess.max() <= AT_THE_NOISE:
            break
    return best


def _restarts(fit: ShootingFit) -> tuple[list[tuple[float, tuple[str, ...]]], float]:
    """The (omega_t start, extra terms) a first fit far above the noise is tried from:
    the generic start with drag where the pendulum, which drag acts on, is the joint far
    above the noise and drag's score test (the statistic returned) says it might win,
    then the RESTART_OMEGA_T without. (Seed 1's capture 23, a noisy sensor and no drag:
    the arm at 7.4 times the noise, the pendulum at 4.0; with drag first its arm mu_d
    came out -10.4 %, from the restarts without, -4.3 %.)"""
    if fit.excess.max() <= RESTART_EXCESS:
        return [], math.nan
    stat, _, could_win = _drag_test(fit)
    first = [(GENERIC_START["omega_t"], ("drag1",))] \
        if fit.excess[1] > RESTART_EXCESS and could_win else []
    return first + [(omega, ()) for omega in RESTART_OMEGA_T], stat


def _drag_test(fit: ShootingFit) -> tuple[float, float, bool]:
    """Drag's score test at `fit`, which lacks it: S, drag's first-order value (its entry
    of u), and whether it might win the BIC, one-sided (estimator._score.one_sided)."""
    stat, drag_u = score_and_start(fit.problem, fit.z, fit.residual_rms, "drag1")
    return stat, drag_u, could_win_bic(one_sided(stat, drag_u), 1, fit.problem.n_data)


def _laws_with(fit: ShootingFit, joint: int, law: str) -> tuple[str, str]:
    laws = list(fit.problem.laws)
    laws[joint] = law
    return laws[0], laws[1]


def _without_stribeck(m: Measurement, prior: RigPrior | None, fit: ShootingFit, joint: int,
                      fits: list[ShootingFit], progress: Progress | None) -> ShootingFit:
    """`fit` with Coulomb + viscous friction on `joint` instead of Brown-McPhee when the
    data cannot carry its Stribeck pair (omega_t at a bound of the fit, or its interval a
    factor 10 either side: on seed 000's Table V noise the pendulum's omega_t escaped a
    hundredfold and its hump soaked up the viscous term), or the hump took the viscous
    term (viscous_lost), or a term of the law is held loosely (hump_weak), and the BIC
    agrees."""
    if fit.problem.laws[joint] != STRIBECK:
        return fit
    weak = hump_weak(fit, joint) and not hump_held(fit, joint)
    if not (_out_of_reach(fit, f"omega_t{joint}") or viscous_lost(fit, joint) or weak) \
            or fit.problem.unresolved(fit.z, joint):
        return fit
    trial = fit_shooting(m, prior, laws=_laws_with(fit, joint, COULOMB), extras=fit.extras,
                         progress=progress, warm=fit)
    fits.append(trial)
    return trial if trial.bic < fit.bic else fit


def viscous_lost(fit: ShootingFit, joint: int) -> bool:
    """Whether the joint's hump took its viscous term: mu_v at a bound of the fit or its
    interval a factor 10 either side, under a Stribeck law (seed 1's Table V capture 17:
    the arm's mu_v at 1e-7 with omega_t 0.13 rad/s, the hump inverted, mu_s < mu_d,
    standing in for it; mu_d +68 % at 5.4 bounds)."""
    return _out_of_reach(fit, f"mu_v{joint}")


def hump_weak(fit: ShootingFit, joint: int) -> bool:
    """Whether a term of the joint's Brown-McPhee law is held too loosely for its Wald
    interval (estimator._stages.weakly_determined): the data carry the law only in part
    (seed 1's Table V capture 17, first fitted on steps that stopped once small: the arm's
    mu_d, mu_v and omega_t at standard errors of 34-53 %, mu_d -33 % and mu_v 16 times
    the truth, none of them at a bound or a factor 10 wide)."""
    p = fit.problem
    ks = [p.friction_index(f"{term}{joint}") for term in ("mu_d", "mu_s", "mu_v", "omega_t")]
    return any(k is not None and weakly_determined(standard_error(fit.cov, k)) for k in ks)


#: a hump whose Wald statistic is this many times the price of the two terms Coulomb +
#: viscous leaves out (mu_s, omega_t: 2 log n) is held firmly enough that dropping it
#: cannot win the BIC (hump_held)
HUMP_HELD_PRICES = 5.0


def hump_held(fit: ShootingFit, joint: int) -> bool:
    """Whether the joint's hump, log(mu_s / mu_d), is held far from none by the data: its
    Wald statistic above HUMP_HELD_PRICES times the BIC's price of the two terms. Then a
    loosely held term of the law (hump_weak) does not ask for Coulomb + viscous. On
    bench_coverage's 100 captures of seeds 1 and 2, of the 38 trials hump_weak alone asked
    for, the 6 that won had statistics of 0-17; the 8 above 5 prices (98-105 there),
    148-39,000, all lost, by 32,000-134,000 in BIC, in 0.2-2.4 s each. (Not where omega_t
    is out of reach, whose hump the statistic overstates: 243 on a trial that lost by 9.)"""
    p = fit.problem
    kd, ks = p.friction_index(f"mu_d{joint}"), p.friction_index(f"mu_s{joint}")
    if kd is None or ks is None:
        return False
    a = np.zeros(fit.z.size)
    a[ks], a[kd] = 1.0, -1.0
    with np.errstate(invalid="ignore"):
        var = float(a @ fit.cov @ a)
    if not (math.isfinite(var) and var > 0):
        return False
    wald = float(fit.z[ks] - fit.z[kd]) ** 2 / var
    return wald > HUMP_HELD_PRICES * 2 * math.log(p.n_data)


def _out_of_reach(fit: ShootingFit, name: str) -> bool:
    """The friction parameter `name` (fitted by its log) at a bound of the fit or its
    interval a factor 10 either side (estimator._stages.transition_unsupported's rule);
    False where the fit's laws leave it out."""
    k = fit.problem.friction_index(name)
    return k is not None and out_of_reach(fit.z, fit.cov, fit.problem.bounds(), k)


def _with_extras(m: Measurement, prior: RigPrior | None, fit: ShootingFit,
                 fits: list[ShootingFit], skipped: list[dict[str, Any]],
                 progress: Progress | None) -> ShootingFit:
    """`fit` with the extra terms that win the BIC: air drag where its one-sided score
    test says it might (on drag-free captures S was 0.2-4, with drag 3,900-15,700: left
    out, drag bends the pendulum's friction by 20 %; a drag first order puts below zero
    cannot win), a cable on an arm whose residuals stay above the noise once drag is
    judged, and then both."""
    stat = math.nan
    drag_start = None
    best = fit

    def tried(extras: tuple[str, ...], best: ShootingFit) -> ShootingFit:
        # both terms start from the better fit with one of them: from the fit without,
        # 40 iterations left drag and cable together 3,700 BIC worse than the cable alone
        warm = best if set(best.extras) <= set(extras) else fit
        trial = fit_shooting(m, prior, extras=extras, laws=fit.problem.laws, progress=progress,
                             warm=warm, extra_start=drag_start)
        if extras == ("drag1",):
            trial = replace(trial, drag_score=stat)
        fits.append(trial)
        # a term that wins the BIC on a joint already at the noise without it, and that the
        # fit cannot identify, stands in for something else: on simulated sessions without
        # drag or cable, 48 of 290 captures kept one, every one of them not identified; a
        # drift session's capture (pendulum at 0.47 times the noise) took a drag of 6.7e-7
        # (standard error 21 %) that moved mu_v1 from +9.7 to +6.3 % of a +10 % truth
        new = tuple(e for e in extras if e not in fit.extras)
        return trial if trial.bic < best.bic and needed(trial, fit, new) else best

    if "drag1" not in fit.extras:  # (a restart may have brought it)
        stat, drag_u, could_win = _drag_test(fit)
        drag_start = drag_start_of(fit, drag_u)
        if could_win:
            best = tried(("drag1",), best)
        else:
            skipped.append({"extra_terms": ["drag1"], "chosen": False, "score": stat,
                            "not_fitted": not_fitted_note(stat, 1, fit.problem.n_data,
                                                          drag_u)})
    # the arm as the best fit so far leaves it: drag on the pendulum can bring it to the
    # noise through the coupling (seed 1's drag-and-cable capture 9: the arm from 2.31 to
    # 0.99 times the noise with drag; the two cable trials after it lost, in 4.3 of 9.3 s)
    if best.excess[0] > ADEQUATE_EXCESS:
        for extras in [CABLE, ("drag1", *CABLE)] if not fit.extras else [(*fit.extras, *CABLE)]:
            best = tried(extras, best)
    return best


#: the first-order drag a trial with drag starts from is kept within this range (N m s^2):
#: below it a log variable barely moves the residuals, above it lies no rig in air. From
#: the usual start, 3e-6, a trial on a capture without drag spent its iterations coming
#: back (bench_speed's realistic captures 6 and 9: 2.4 and 2.1 s, ending 3,350 and 12,340
#: worse in BIC than the fit it was warmed from; from first order, 1.2 and 1.5 s, 318 and
#: 3,750 worse)
DRAG_START_RANGE = (1e-7, 1e-4)


def drag_start_of(fit: ShootingFit, drag_u: float) -> dict[str, float] | None:
    """Where a trial with drag starts from `fit`: the drag first order gives (drag_u, its
    entry of u, made N m s^2), within DRAG_START_RANGE (a negative one at its lower end,
    next to the fit without drag); None (the usual start) where first order gives none."""
    if not math.isfinite(drag_u):
        return None
    value = drag_u * fit.problem.pendulum_inertia(fit.z[:fit.problem.n_global])
    return {"drag1": math.log(min(max(value, DRAG_START_RANGE[0]), DRAG_START_RANGE[1]))}


def _hump_again(m: Measurement, prior: RigPrior | None, fit: ShootingFit,
                fits: list[ShootingFit], progress: Progress | None) -> ShootingFit:
    """A joint the chosen model leaves on Coulomb + viscous while its residuals stay above
    the noise (CHOSEN_RESTART_EXCESS), fitted with Brown-McPhee again from the chosen fit:
    its friction and extra terms, a hump of HUMP_START, omega_t from the generic start then
    RESTART_OMEGA_T, until a start wins the BIC. The first Brown-McPhee fit may have lost
    to Coulomb + viscous only because it sat in a poor valley, from which drag or the
    other joint's law did not free it: a steady session's capture (pendulum omega_t 0.074
    rad/s) had its first fit at 3.8 times the noise, Coulomb + viscous with drag at 1.35
    and mu_d1 +4.5 %, mu_v1 -5.3 % with intervals missing the truth; Brown-McPhee from
    there reached 0.25 times the noise (BIC 30,600 lower), mu_d1 +0.2 %, mu_v1 -1.3 %."""
    best = fit
    for joint in (0, 1):
        if best.problem.laws[joint] != COULOMB or best.excess[joint] <= CHOSEN_RESTART_EXCESS:
            continue
        base = best.problem.friction_of(best.z[:best.problem.n_global])
        for omega in (GENERIC_START["omega_t"], *RESTART_OMEGA_T):
            friction = base.copy()
            friction[FRICTION_FREE.index(f"mu_s{joint}")] = \
                HUMP_START * base[FRICTION_FREE.index(f"mu_d{joint}")]
            friction[FRICTION_FREE.index(f"omega_t{joint}")] = omega
            trial = _refined_if_asked(fit_shooting(
                m, prior, laws=_laws_with(best, joint, STRIBECK), extras=best.extras,
                progress=progress, warm=best, friction=friction), m)
            fits.append(trial)
            if trial.bic < best.bic:
                best = _without_stand_ins(m, prior, trial, fits, progress)
                break
    return best


#: the extra terms step 3 adds, each taken away whole
_TERM_GROUPS = (("drag1",), CABLE)


def _without_stand_ins(m: Measurement, prior: RigPrior | None, fit: ShootingFit,
                       fits: list[ShootingFit], progress: Progress | None) -> ShootingFit:
    """`fit` without each extra term that its laws no longer need, where the BIC agrees:
    a term chosen while a joint had no hump may have stood in for it. A steady session's
    capture (pendulum hump 2.0 at 0.067 rad/s, no drag) took drag on Coulomb + viscous
    (1.55 times the noise); Brown-McPhee came back with the drag, at 0.94 times the noise
    but mu_d1 +3.7 %, mu_v1 -8.8 %, both intervals missing; without the drag 0.20 times
    the noise, a BIC 30,700 lower, mu_d1 -0.0 %, mu_v1 -0.5 %. A term is kept as
    _with_extras keeps one: where it wins the BIC and is identified or needed (needed)."""
    best = fit
    for group in _TERM_GROUPS:
        if not set(group) <= set(best.extras):
            continue
        rest = tuple(e for e in best.extras if e not in group)
        trial = _refined_if_asked(fit_shooting(m, prior, laws=best.problem.laws, extras=rest,
                                               progress=progress, warm=best), m)
        fits.append(trial)
        best = best if best.bic < trial.bic and needed(best, trial, group) else trial
    return best


def _restarted_chosen(m: Measurement, prior: RigPrior | None, fit: ShootingFit,
                      fits: list[ShootingFit], progress: Progress | None) -> ShootingFit:
    """The chosen model fitted again from other omega_t while it stays above the noise
    (CHOSEN_RESTART_EXCESS) or a joint's transition escaped above every start
    (escaped_transition), and a joint has a transition to move; the lowest BIC kept, and
    its extra terms judged again (_without_stand_ins): they were chosen in the valley the
    restart left, where they may have stood in for the transition. A drift session's
    capture (arm omega_t 4.2e-4 rad/s, no drag, no cable) was at 11.5 times the noise
    with a drag and a cable; the restart reached 0.81 with both still in, neither
    identified, mu_v1 -0.9 % on an interval of +-1.0 %; judged again, both went: 0.72
    times the noise, mu_v1 -0.0 %."""
    best = fit
    if STRIBECK not in fit.problem.laws:
        return fit
    for omega in RESTART_OMEGA_T:
        if not chosen_restart_asked(best, _floor_noise(m)):
            break
        trial = _refined_if_asked(fit_shooting(m, prior, laws=fit.problem.laws,
                                               extras=fit.extras, progress=progress,
                                               omega_t_start=omega), m)
        fits.append(trial)
        best = trial if trial.bic < best.bic else best
    if best is not fit and best.extras:
        best = _without_stand_ins(m, prior, best, fits, progress)
    return best


def chosen_restart_asked(fit: ShootingFit, floor_noise: float) -> bool:
    """Whether _restarted_chosen fits the model again: still above the noise
    (CHOSEN_RESTART_EXCESS) or a transition escaped above every start."""
    # (not <=: a NaN residual asks for a restart)
    return bool(not fit.excess.max() <= CHOSEN_RESTART_EXCESS
                or escaped_transition(fit, floor_noise))


def escaped_transition(fit: ShootingFit, floor_noise: float) -> bool:
    """The fit's joints under the rule every kind restarts by (estimator._stages
    .escaped_transition), the starts RESTART_OMEGA_T."""
    p = fit.problem
    omega = np.array([math.exp(float(fit.z[k])) if k is not None else math.nan
                      for k in (p.friction_index(f"omega_t{j}") for j in (0, 1))])
    return shared_escaped(omega, RESTART_OMEGA_T, fit.noise, floor_noise)


def _refined_if_asked(fit: ShootingFit, m: Measurement) -> ShootingFit:
    """fit, refined where it asks for the finer floor (finer_floor_asked): before its
    excess over the noise is judged, which a transition the coarse floor cannot follow
    keeps high (a pendulum at 1.3e-4 rad/s: 14 times the noise, restarts or not)."""
    return _refined(fit) if finer_floor_asked(fit, _floor_noise(m)) else fit


def _refined(fit: ShootingFit) -> ShootingFit:
    """fit again with FINE_FLOOR: omega_t may go lower, reversals get more substeps."""
    old = fit.problem
    at_floor = [j for j in (0, 1) if old.transition_at_floor(fit.z, j)] \
        if old.floor == COARSE_FLOOR else []
    problem, start = old.on_fine_floor(fit.z, at_floor, start_weights(fit))
    with np.errstate(over="ignore", invalid="ignore"):
        z, res = fit_free(problem, start, np.arange(start.size), 40, sigma_tol=0.1)
        fine = finish(problem, z, res, fit.t_start, noise=fit.noise)
    # a transition this stiff can overflow the sensitivities on some captures (zero-width
    # intervals came out of an infinite information, on the rig or the friction): then the
    # coarse fit stands
    w = old.n_rig + len(old.friction_names)
    coarse_sd = np.sqrt(np.abs(np.diag(fit.cov)[:w]))
    # (only where the coarse fit had a width to lose: a coarse fit left 12 times above the
    # noise, its friction's variances infinite, kept itself against a refit 76,000 lower
    # in BIC at 3.3, and the restarts that followed cost 7 s; bench_coverage seed 2's
    # drag-and-cable capture 39)
    with np.errstate(invalid="ignore"):  # widths that all but vanished
        lost = (np.sqrt(np.abs(np.diag(fine.cov)[:w])) < 1e-3 * coarse_sd) \
            & np.isfinite(coarse_sd)
    # a friction or extra term the motion no longer feels has an infinite variance by
    # design (finish: its diagonal entry), which the result reports as not identified. Taken
    # for an overflow, it kept the coarse fit: a drift session's arm (omega_t 4.2e-4 rad/s)
    # stayed at 6.0 times the noise through nine more models (111 s), where the finer floor
    # had reached 0.46 and a BIC 83,000 lower
    cov = fine.cov.copy()
    by_design = np.zeros(cov.shape[0], dtype=bool)
    terms = slice(old.n_rig, old.n_global)  # where finish sets it: no state, no rig
    by_design[terms] = np.isposinf(np.diag(cov))[terms]
    cov[by_design, by_design] = 0.0
    if not (np.all(np.isfinite(cov)) and not lost.any() and np.all(np.isfinite(fine.z))
            and fine.bic <= fit.bic):
        return fit
    return fine


def _tried(fit: ShootingFit, chosen: bool) -> dict[str, Any]:
    entry = {"laws": list(fit.problem.laws), "extra_terms": list(fit.extras), "bic": fit.bic,
             "chosen": chosen,
             "residual_over_noise": {n: float(x) for n, x in zip(JOINT_NAMES, fit.excess)}}
    if fit.drag_score is not None:
        entry["score"] = fit.drag_score
    return entry


def _floor_noise(m: Measurement) -> float:
    """The noise of a joint read by the capture's encoder and nothing else (rad)."""
    return quantisation_rms(m.resolution_rad or QUANTUM)


def finer_floor_asked(fit: ShootingFit, floor_noise: float) -> bool:
    """Whether the fit asks for the finer floor (_refined): a joint unresolved
    (unresolved_joints), or a joint's omega_t at the coarse floor where its noise is the
    quantum's floor (`floor_noise`), so its excess over the noise cannot show what the
    floor costs. Seed 1's realistic capture 1: the pendulum's omega_t1 at 2.5e-3 (truth
    1.7e-3, 1-3 % of its time near zero velocity) left the arm's mu_v0 -4.0 % at 7.4
    bounds; refined, -0.03 % and 4,900 lower in BIC. A fit on the finer floor asks
    nothing: no floor is finer (a transition at its bound, refitted there from the same
    start, spent 1 s of seed 3's realistic capture 7 and came back with the same fit)."""
    if fit.problem.floor != COARSE_FLOOR:
        return False
    if unresolved_joints(fit):
        return True
    blind = at_noise_floor(fit.noise, floor_noise)
    return any(fit.problem.transition_at_floor(fit.z, j) and blind[j] for j in (0, 1))


def unresolved_joints(fit: ShootingFit) -> set[str]:
    """Joints whose friction transition is sharper than the fit resolves (omega_t at its
    lower bound) and that spend long enough near zero velocity for it to shape the
    motion (ShootingProblem.unresolved)."""
    return {joint for j, joint in enumerate("01") if fit.problem.unresolved(fit.z, j)}


def score_statistic(problem: ShootingProblem, z: np.ndarray, rms: np.ndarray,
                    term: str, step: float = 1e-9) -> float:
    """S of adding the extra term `term` (EXTRA_TERMS) at the fit z of `problem`, which
    does not have it; rows weighed by rms (per joint, rad)."""
    return score_and_start(problem, z, rms, term, step)[0]


def score_and_start(problem: ShootingProblem, z: np.ndarray, rms: np.ndarray, term: str,
                    step: float = 1e-9) -> tuple[float, float]:
    """score_statistic's S, and the term's value (in its entry of u) at first order from
    the fit (estimator._score.score_and_step)."""
    u_index = NORMALISED.index(EXTRA_TERMS[term])
    r_full = problem.fun(z)
    jac = problem.jac(z, r_full)
    u = problem.u_of(z[:problem.n_global])
    if u[u_index] != 0.0:
        raise ValueError(f"the fit already has {term}")
    up = u.copy()
    up[u_index] = step
    base = r_full[:problem.n_data]
    j_d = (problem.residuals_at(up, problem.states(z)) - base) / step
    # weigh each joint's rows by what the fit left of it (the BIC's variance), not sigma
    w = np.tile(problem.sigma / rms, base.size // 2)
    r = base * w
    jd = j_d * w
    rows = np.zeros(jac.shape[0])
    rows[:problem.n_data] = w
    rows[problem.n_data:] = 1.0
    scaled = jac.rows_scaled(rows)
    stat, first_order = score_and_step(
        scaled, np.concatenate([r, r_full[problem.n_data:]]),
        np.concatenate([jd, np.zeros(jac.shape[0] - jd.size)])[:, None])
    return stat, float(first_order[0])


__all__ = ["CHOSEN_RESTART_EXCESS", "RESTART_EXCESS", "RESTART_OMEGA_T",
           "chosen_restart_asked", "escaped_transition", "finer_floor_asked",
           "score_statistic", "select_model", "unresolved_joints"]
