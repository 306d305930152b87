"""Identify a chain rig (single, nlink:N): friction laws fitted by output error over segments.

1. Segments, noise and start states from the record (._data), a start from seed
   002's regression with a Coulomb column per joint.
2. Levenberg-Marquardt (identify.solvers) on each friction law in turn, each from the
   best fit so far: viscous, Coulomb + viscous, Brown-McPhee (Fs = 1.3 Fc and v_t =
   0.05 rad/s to start, and again from VT_RESTARTS while the fit stays above the
   noise or a v_t escaped the starts' reach where the noise is the quantum's floor),
   then quadratic drag on top of the best where its score test says it might
   pay (and, if drag wins, the law with or without Stribeck's terms beside it); where
   the best stays above the noise and drag might pay, drag is fitted before the
   restarts, which follow only if it loses (_drag_first); a chosen drag law still
   above the noise is fitted again from its own terms at VT_RESTARTS
   (_restarted_from_itself). `auto`
   keeps the law with the lowest BIC (Schwarz 1978, estimator._stages.schwarz_bic); a
   named law is reached through the simpler ones. Each joint may then end on a law of
   its own (_per_joint); a chosen law that took drag or left a joint without Stribeck's
   terms is fitted once more as Brown-McPhee on every joint from the chosen fit, where
   those may have stood in for a transition the first fit missed (_stribeck_again).
3. The chosen law is refined on RK4 steps of at most MAX_STEP_S where a joint reverses
   (a Stribeck transition there changes within a sample step).
4. Intervals as for every rig kind (identify.methods.estimator._stages): (J^T J)^-1 of the
   residuals in noise units, times their variance inflation (a model that falls short
   leaves correlated residuals, and each sample then carries less than one sample's
   information), widened by the residuals' excess over the noise where the model falls
   short.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ...._progress import Progress, no_progress
from ....model import ChainParams, ChainRig
from ....results import Response, fit_percent, response_of
from ....signal import Record
from ....solvers import BlockJacobian, levenberg_marquardt
from .._score import could_win_bic, not_fitted_note, score
from .._stages import (
    ADEQUATE_EXCESS,
    bound_sd,
    escaped_transition,
    joint_inflation,
    out_of_reach,
    schwarz_bic,
    widening,
)
from ._data import (
    SCOUT_THIN,
    chain_data,
    free_runs,
    refine_substeps,
    regression_start,
    thinned,
)
from ._problem import LAW_TERMS, ChainData, ChainProblem, law_name

#: every law is fitted to this many standard errors (enough to rank them by BIC, whose
#: gaps are hundreds), and the chosen one then on to FINAL_SIGMA_TOL
SCOUT_SIGMA_TOL = 0.3
SCOUT_ITERATIONS = 30
#: or until an iteration lowers the cost by less than this share: a law that cannot fit
#: (Coulomb + viscous on a joint with a Stribeck hump) crawled to SCOUT_ITERATIONS at
#: 1e-6; at 1e-4 nlink:3 takes 3.8 s instead of 5.8, every law chosen and every fit
#: of bench_chain and bench_chain_coverage the same to the printed digit
SCOUT_FTOL = 1e-4
FINAL_SIGMA_TOL = 0.1
LAWS_AUTO = ("viscous", "coulomb-viscous", "brown-mcphee")
#: rad/s: a law with Stribeck's terms starts its transitions here, and is fitted again from
#: VT_RESTARTS when its first fit stays above the noise or a v_t escaped (_escaped)
VT_START = 0.05
VT_RESTARTS = (0.3, 0.01)
#: the law with drag added
DRAG_OF = {"viscous": "coulomb-viscous-drag", "coulomb-viscous": "coulomb-viscous-drag",
           "brown-mcphee": "brown-mcphee-drag", "coulomb-viscous-drag": "coulomb-viscous-drag",
           "brown-mcphee-drag": "brown-mcphee-drag"}
#: with drag, the law with Stribeck's terms and the one without trade places
_TOGGLE = {"coulomb-viscous-drag": "brown-mcphee-drag", "brown-mcphee-drag": "coulomb-viscous-drag"}
#: a law's next rung down, without Stribeck's terms (mu_s = mu_d)
WITHOUT_STRIBECK = {"brown-mcphee": "coulomb-viscous", "brown-mcphee-drag": "coulomb-viscous-drag"}
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
    jac: BlockJacobian  # at z, for the score test of a richer law
    #: the Cramer-Rao bound of every variable of z: sqrt(diag((J^T J)^-1)), the residuals
    #: in units of the measured noise, without the covariance's inflation or widening
    crb: np.ndarray | None = None

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
        measure (estimator._stages.widening): a joint's friction by its own excess, the standard
        parameters by the largest."""
        sd = np.sqrt(np.clip(np.diag(self.cov)[:self.problem.n_param], 0.0, None))
        widen = widening(self.excess)
        k = len(self.problem.inertial)
        sd[:k] *= widen.max()  # the standard parameters are every joint's
        sd[k:] *= np.repeat(widen, [len(t) for t in self.problem.joint_terms])
        return sd


def fit_law(data: ChainData, states: np.ndarray, start: ChainParams,
            law: str | Sequence[str], max_iter: int = 60,
            sigma_tol: float = FINAL_SIGMA_TOL, ftol: float = 1e-6) -> ChainFit:
    """One friction law's output-error fit (or one per joint) from `start` (normalised)
    and segment states."""
    problem = ChainProblem(data, law)
    lo, hi = problem.bounds()
    z0 = np.clip(problem.pack(start, states), lo, hi)
    return _solved(problem, z0, max_iter, sigma_tol, ftol)


def _scouted(data: ChainData, states: np.ndarray, start: ChainParams,
             law: str | Sequence[str]) -> ChainFit:
    """A law fitted far enough to rank it and to start the next one from."""
    return fit_law(data, states, start, law, max_iter=SCOUT_ITERATIONS,
                   sigma_tol=SCOUT_SIGMA_TOL, ftol=SCOUT_FTOL)


def _solved(problem: ChainProblem, z0: np.ndarray, max_iter: int,
            sigma_tol: float, ftol: float = 1e-6) -> ChainFit:
    data = problem.data
    res = levenberg_marquardt(problem.residuals, problem.jacobian, z0, problem.bounds(),
                              sigma_tol=sigma_tol, ftol=ftol, max_iter=max_iter)
    # residuals in noise units: (J^T J)^-1 is the covariance if the model is adequate
    tau = joint_inflation(res.fun.reshape(-1, data.links))
    info = res.jac.gram()
    info_inv = np.linalg.pinv(info, hermitian=True)
    return ChainFit(problem, res.x, res.fun, info_inv * tau, tau, res.njev, res.jac,
                    crb=bound_sd(info, info_inv))


def drag_score(fit: ChainFit, step: float = 1e-6) -> float:
    """The score statistic (identify.methods.estimator._score.score) of adding quadratic drag
    on every joint to the fit's law, at the fit: the rows weighed by each joint's residual
    rms (the BIC's variance), the drag columns by forward differences from c_d = 0."""
    p = fit.problem
    richer = ChainProblem(p.data, [DRAG_OF[law] for law in p.laws])
    z = richer.pack(fit.params, p.states(fit.z))
    names = richer.parameter_names()
    drag = [k for k, name in enumerate(names) if name.startswith("cd")]
    links = p.data.links
    w = np.tile(1.0 / fit.excess, fit.residuals.size // links)
    columns = np.empty((fit.residuals.size, len(drag)))
    for c, k in enumerate(drag):
        zk = z.copy()
        zk[k] += step
        columns[:, c] = (richer.residuals(zk) - fit.residuals) / step * w
    return score(fit.jac.rows_scaled(w), fit.residuals * w, columns)


def _next_start(fit: ChainFit, law: str | Sequence[str]) -> ChainParams:
    """The previous law's fit, each term the new law (of each joint) adds started off its
    bound: Coulomb and drag a share of the viscous torque at the rms joint speed,
    Fs = 1.3 Fc, v_t = 0.05 rad/s; a term it drops leaves Fs = Fc."""
    p = fit.params
    fr = p.friction.copy()
    d = fit.problem.data
    laws = (law,) * d.links if isinstance(law, str) else tuple(law)
    w = np.diff(d.q, axis=0) / d.dt
    w[:, 1:] -= w[:, :-1].copy()
    rms = np.sqrt(np.mean(w ** 2, axis=0))
    scale = fr[:, 3] + fr[:, 0] / rms + fr[:, 4] * rms  # a viscous-equivalent torque / speed
    for i, (was, now) in enumerate(zip(fit.problem.laws, laws, strict=True)):
        old, new = set(LAW_TERMS[was]), set(LAW_TERMS[now])
        if "Fc" in new - old:
            fr[i, 0] = fr[i, 1] = 0.2 * scale[i] * rms[i]
            fr[i, 3] *= 0.8
        if "cd" in new - old:
            fr[i, 4] = 0.1 * scale[i] / rms[i]
        if "Fs" in new - old:
            fr[i, 1] = 1.3 * fr[i, 0]
            fr[i, 2] = VT_START
        if "Fs" in old - new:
            fr[i, 1] = fr[i, 0]
    return ChainParams(p.inertial, fr)


def fit_chain(record: Record, rig: ChainRig, *, segment_s: float | None = None,
              exclude: Sequence[tuple[float, float]] = (), progress: Progress | None = None
              ) -> tuple[ChainFit, list[ChainFit], list[dict[str, object]]]:
    """The chosen fit, every law tried in order, and the laws a score test left unfitted."""
    say = progress or no_progress
    d, runs = free_runs(record, rig, exclude)
    data, states = chain_data(d, runs, rig, segment_s, record.resolution_rad)
    start = regression_start(record, rig, exclude, d, runs)
    auto = rig.friction == "auto"
    scout = thinned(data, SCOUT_THIN)
    # a named law is reached through the simpler ones: Stribeck's terms start from a
    # converged Coulomb fit (from Fs = Fc, v_t has no gradient and wanders off)
    laws = list(LAWS_AUTO if auto else _PATH[rig.friction])
    fits: list[ChainFit] = []
    deferred: list[tuple[ChainFit, ChainParams, np.ndarray]] = []  # restarts left for drag
    asked: list[ChainFit] = []  # fits whose drag score says drag can win (_drag_first)
    base: ChainFit | None = None  # the fit the next law starts from
    for k, law in enumerate(laws):
        say(0.6 * k / len(laws), f"fitting {law} friction")
        if base is not None:
            start, states = _next_start(base, law), base.problem.states(base.z)
        # every law on the way, named or ranked, is fitted as far (from a Coulomb fit cut
        # short a triple pendulum's v_t ran off to its bound); laws without Stribeck's
        # terms on the thinned record, those with them at the full rate (on 4 ms steps a
        # double pendulum's v_t ran off to 1e-3 rad/s, a valley the refinement kept)
        scouted = _scouted(data if "vt" in LAW_TERMS[law] else scout, states, start, law)
        fit = _at_full_rate(scouted, data)
        # the score on the fit's own rows: a thinned fit's Jacobian has no others
        off = scouted.excess.max() > ADEQUATE_EXCESS or _restarts_asked(fit)
        if auto and off and _drag_could_win(scouted):
            asked.append(fit)
            if _restarts_asked(fit):
                deferred.append((fit, start, states))  # after drag, if drag loses
        else:
            fit = _restarted(fit, start, states)
        fits.append(fit)
        base = min(fits, key=lambda f: f.bic) if auto else fits[-1]
    assert base is not None
    # the laws are ranked on the fit's own step; the chosen one is refined on steps short
    # enough for a Stribeck transition where a joint reverses
    fine = replace(data, substeps=np.where(data.slow, refine_substeps(data.dt), 1))
    skipped: list[dict[str, object]] = []
    final: ChainFit | None = None
    drag_lost = False
    if any(fit is base for fit, _, _ in deferred):  # a Stribeck law asked for drag
        final = _drag_first(base, fine, fits, say)
        drag_lost = final is None
    if final is None:
        # the restarts left for drag wait where the best law asked for drag and it is
        # still to be tried (a law without Stribeck's terms: refined, then drag)
        if drag_lost or not any(fit is base for fit in asked):
            base = _restart_deferred(deferred, fits, base)
        final = refined = _refined(base, fine, fits, say)
        if auto and not drag_lost:
            final = _with_drag(refined, fits, skipped, say)
        if final is refined and deferred:  # drag lost: the restarts left for it, now
            best = _restart_deferred(deferred, fits, refined)
            if best is not refined:
                final = _refined(best, fine, fits, say)
    if auto:
        if data.links > 1:  # one joint: the ladder above has already chosen its law
            final = _per_joint(final, fits, say)
        final = _stribeck_again(final, fits, skipped, say)
    say(1.0, "intervals")
    return final, fits, skipped


def _restarted(fit: ChainFit, start: ChainParams, states: np.ndarray) -> ChainFit:
    """A law with Stribeck's terms whose fit stays above the noise or whose v_t escaped
    (_escaped), fitted again from other transitions (VT_RESTARTS): v_t starts in a
    valley of its own (the real single pendulum's stayed where it started, 0.01 ->
    0.010, 0.05 -> 0.050, where a start at 0.3 reached a BIC 2,325 lower); the lowest
    BIC is kept."""
    if not _restarts_asked(fit):
        return fit
    best = fit
    for vt in VT_RESTARTS:
        fr = start.friction.copy()
        fr[:, 2] = vt
        trial = _scouted(fit.problem.data, states, ChainParams(start.inertial, fr),
                         fit.problem.laws)
        best = trial if trial.bic < best.bic else best
    return best


def _refined(fit: ChainFit, data: ChainData, fits: list[ChainFit], say: Progress,
             at: float = 0.6) -> ChainFit:
    """The fit's law solved on to FINAL_SIGMA_TOL on `data`, from the fit, in its place in
    `fits` (`at`: the progress where it starts)."""
    say(at, f"refining {fit.problem.law}")
    refined = _solved(ChainProblem(data, fit.problem.laws), fit.z, 60, FINAL_SIGMA_TOL)
    fits[fits.index(fit)] = refined
    return refined


def _restart_deferred(deferred: list[tuple[ChainFit, ChainParams, np.ndarray]],
                      fits: list[ChainFit], best: ChainFit) -> ChainFit:
    """The restarts left for drag (fit, its start and states), done: each restarted fit
    replaces its own in `fits`; the fit of lowest BIC among them and `best`."""
    for fit, start, states in deferred:
        if fit in fits:
            fits[fits.index(fit)] = _restarted(fit, start, states)
    deferred.clear()
    return min([best, *fits], key=lambda f: f.bic)


def _restarts_asked(fit: ChainFit) -> bool:
    """A law with Stribeck's terms whose fit stays above the noise or whose v_t escaped."""
    return _has_stribeck(fit) and (fit.excess.max() > ADEQUATE_EXCESS or _escaped(fit))


def _drag_could_win(fit: ChainFit) -> bool:
    """Whether quadratic drag, on every joint of a law without it, might win the BIC by
    its score test at the fit (with a factor 2 to spare, as for the Furuta rig's drag)."""
    if all(DRAG_OF[x] == x for x in fit.problem.laws):
        return False
    return could_win_bic(drag_score(fit), fit.problem.data.links, fit.residuals.size)


def _drag_first(base: ChainFit, fine: ChainData, fits: list[ChainFit], say: Progress
                ) -> ChainFit | None:
    """Drag fitted from the ranked laws' best, a Brown-McPhee fit scouted only (its score
    test asked for drag), before its v_t restarts and refinement, which drag makes moot
    where it wins, as the Furuta rig's estimator fits drag before any other start: a
    single pendulum with drag spent 1.4 s restarting Brown-McPhee (38.8 times the noise
    from every start) and 1.9 s refining it before drag took it to 0.36 of the noise.
    (A best law without Stribeck's terms is refined, then given drag, and the restarts
    left for drag follow if it loses (fit_chain): a double pendulum, every law 120-235
    times its noise and viscous ranked best, restarted and refined Brown-McPhee for 7.4 s
    before drag took it to 0.76.) The refined drag law (on `fine`), or None where drag
    loses: then the restarts and the refinement follow as without drag."""
    drag = _with_drag(base, fits, [], say, tested=True, refine_on=fine)
    return None if drag is base else drag


def _escaped(fit: ChainFit) -> bool:
    """A joint's v_t out of the starts' reach where the excess is blind (estimator._stages
    .escaped_transition), the starts VT_START and VT_RESTARTS."""
    p, d = fit.problem, fit.problem.data
    vt = np.array([p.params(fit.z).friction[i, 2] if "vt" in terms else np.nan
                   for i, terms in enumerate(p.joint_terms)])
    return escaped_transition(vt, (VT_START, *VT_RESTARTS), d.sigma, d.floor)


def _at_full_rate(fit: ChainFit, data: ChainData) -> ChainFit:
    """A fit of the thinned record with its residuals on the full one, so that every law's
    BIC counts the same samples (its covariance and Jacobian stay the thinned fit's: a
    start and a ranking, not a result)."""
    if fit.problem.data is data:
        return fit
    problem = ChainProblem(data, fit.problem.laws)
    return replace(fit, problem=problem, residuals=problem.residuals(fit.z))


def _has_stribeck(fit: ChainFit) -> bool:
    return any("vt" in terms for terms in fit.problem.joint_terms)


def _with_drag(final: ChainFit, fits: list[ChainFit], skipped: list[dict[str, object]],
               say: Progress, tested: bool = False, refine_on: ChainData | None = None
               ) -> ChainFit:
    """Quadratic drag on top of the refined law, fitted only where its score test says it
    might win the BIC (with a factor 2 to spare for the linearisation), as for the Furuta
    rig's drag (`tested`: the caller has asked it); if it wins, the law with or without
    Stribeck's terms beside it too, the better refined on `refine_on` (else its own steps)."""
    law = tuple(DRAG_OF[x] for x in final.problem.laws)
    if not tested:
        s_drag = drag_score(final)
        columns, rows = final.problem.data.links, final.residuals.size
        if not could_win_bic(s_drag, columns, rows):
            skipped.append({"law": law_name(law), "chosen": False, "score": round(s_drag, 1),
                            "not_fitted": not_fitted_note(s_drag, columns, rows)})
            return final
    say(0.7, f"fitting {law_name(law)} friction")
    data, states = final.problem.data, final.problem.states(final.z)
    start = _next_start(final, law)
    drag = _restarted(_scouted(data, states, start, law), start, states)
    fits.append(drag)
    # drag can stand in for Stribeck's terms and the other way round: the law beside it
    other = tuple(_TOGGLE[x] for x in law)
    say(0.8, f"fitting {law_name(other)} friction")
    start = _next_start(drag, other)
    states = drag.problem.states(drag.z)
    fits.append(_restarted(_scouted(data, states, start, other), start, states))
    best = min(fits[-2:], key=lambda f: f.bic)
    if best.bic >= final.bic:
        return final
    refined = _refined(best, best.problem.data if refine_on is None else refine_on, fits, say,
                       0.9)
    return _restarted_from_itself(refined, fits, say)


def _restarted_from_itself(fit: ChainFit, fits: list[ChainFit], say: Progress) -> ChainFit:
    """A refined drag law that stays above the noise (or whose v_t escaped), fitted again
    from its own terms at the other transitions (VT_RESTARTS), and refined in its place
    where one wins. Drag's own restarts start from the law it joined, whose terms had
    taken drag's part: bench_chain_coverage's seed 2 capture 63 (a single pendulum, v_t
    0.28 rad/s, Fs 2.1 Fc, drag) ended at 2.7 times the noise with v_t 0.79, b at 0 and
    Fc +304 % on intervals of +-2 %; from its own terms at v_t 0.3 or 0.01 the fit reached
    the noise (1.01), a BIC 29,196 lower, every term within 0.1 %."""
    if not _restarts_asked(fit):
        return fit
    say(0.9, f"fitting {fit.problem.law} again from other transitions")
    best = _restarted(fit, fit.problem.params(fit.z), fit.problem.states(fit.z))
    if best is fit:
        return fit
    fits[fits.index(fit)] = best
    return _refined(best, best.problem.data, fits, say, 0.9)


def _per_joint(final: ChainFit, fits: list[ChainFit], say: Progress) -> ChainFit:
    """Each joint free to end on a law of its own. A joint of the chosen law whose
    Stribeck pair the data cannot carry (v_t at a bound of the fit, or its interval a
    factor 10 either side) gets Coulomb + viscous (mu_s = mu_d) instead; where the chosen
    law has no Stribeck terms, the law with them on every joint that was fitted is tried
    with them kept only where it determined v_t. The BIC decides each time."""
    best = final
    for i in range(final.problem.data.links):
        if best.problem.laws[i] in WITHOUT_STRIBECK and _vt_unsupported(best, i):
            laws = list(best.problem.laws)
            laws[i] = WITHOUT_STRIBECK[laws[i]]
            best = _tried_from(best, laws, best, fits, say)
    if not _has_stribeck(best):
        rich = [f for f in fits if all(x in WITHOUT_STRIBECK for x in f.problem.laws)]
        if rich:
            src = min(rich, key=lambda f: f.bic)
            keep = [not _vt_unsupported(src, i) for i in range(src.problem.data.links)]
            if any(keep) and not all(keep):
                laws = [x if k else WITHOUT_STRIBECK[x] for x, k in zip(src.problem.laws, keep)]
                best = _tried_from(src, laws, best, fits, say)
    return best


#: the hump a joint's Stribeck pair is started with from a law without it, Fs / Fc (as the
#: Furuta rig's estimator does: identify.methods.estimator.furuta._select.HUMP_START)
HUMP_START = 1.5


def _stribeck_again(final: ChainFit, fits: list[ChainFit], skipped: list[dict[str, object]],
                    say: Progress) -> ChainFit:
    """A chosen law that took drag or left a joint without Stribeck's terms, fitted again
    as Brown-McPhee on every joint from the chosen fit: drag taken out, a hump of
    HUMP_START at VT_START where a joint had none. Drag and a joint without its hump can
    stand in for a Stribeck transition the first Brown-McPhee fit missed: a double
    pendulum's record (a simulated session's, every joint Brown-McPhee, no drag) took
    drag on both joints and lost joint 1's hump, at 0.88 times the noise with Fc1 +6.4 %
    and b1 -5.7 % on intervals of +-1.2 %; from there Brown-McPhee reached 0.77 times the
    noise, a BIC 8,170 lower. Where it wins, drag and each joint's law are chosen again
    from it. Where it loses and the chosen law has drag, the humps are added with drag
    kept (_humps_beside_drag)."""
    laws = final.problem.laws
    if all(x == "brown-mcphee" for x in laws):
        return final
    refined = _again_with_humps(final, "brown-mcphee", fits, say)
    if refined is None:
        return _humps_beside_drag(final, fits, say)
    best = _with_drag(refined, fits, skipped, say)
    return _per_joint(best, fits, say) if final.problem.data.links > 1 else best


def _again_with_humps(final: ChainFit, law: str, fits: list[ChainFit], say: Progress
                      ) -> ChainFit | None:
    """`law` (Brown-McPhee, with drag or without) on every joint, fitted from the chosen
    fit with a hump of HUMP_START at VT_START on each joint without one (drag taken out
    for a law without it), and refined where it beats the chosen fit's BIC; else None.
    One fit, not the restarts a first fit above the noise gets: the chosen fit is the
    start that counts (the real double pendulum, 75-140 times its noise, took 20 s more
    with them under load, and Brown-McPhee lost there either way)."""
    say(0.9, f"fitting {law} friction again from the chosen fit")
    p = final.params
    fr = p.friction.copy()
    if "cd" not in LAW_TERMS[law]:
        fr[:, 4] = 0.0
    for i, was in enumerate(final.problem.laws):
        if "vt" not in LAW_TERMS[was]:
            fr[i, 1], fr[i, 2] = HUMP_START * fr[i, 0], VT_START
    trial = _scouted(final.problem.data, final.problem.states(final.z),
                     ChainParams(p.inertial, fr), law)
    fits.append(trial)
    if trial.bic >= final.bic:
        return None
    fits[-1] = refined = _solved(trial.problem, trial.z, 60, FINAL_SIGMA_TOL)
    return refined


def _humps_beside_drag(final: ChainFit, fits: list[ChainFit], say: Progress) -> ChainFit:
    """A chosen law with drag on every joint and a joint without its hump, fitted again as
    Brown-McPhee with drag from the chosen fit, the humps added: Brown-McPhee with drag
    fitted from the Brown-McPhee fit had traded a joint's Coulomb term for viscous and
    lost to Coulomb + viscous with drag, which then stood in for the other joint's hump.
    bench_chain_coverage's seed 2 capture 8 (a double pendulum with drag, joint 2's hump
    2.3 times its Coulomb torque) ended there at 17-18 times the noise with Fc2 +62 % on
    an interval of +-5 %; from the chosen fit with the humps it reached the noise (1.01),
    a BIC 169,077 lower, every term within 0.3 %. Refined and restarted from itself
    (_restarted_from_itself) where it wins, and each joint's law chosen again."""
    laws = final.problem.laws
    if not all(DRAG_OF[x] == x for x in laws) or all(x == "brown-mcphee-drag" for x in laws):
        return final
    refined = _again_with_humps(final, "brown-mcphee-drag", fits, say)
    if refined is None:
        return final
    best = _restarted_from_itself(refined, fits, say)
    return _per_joint(best, fits, say) if final.problem.data.links > 1 else best


def _tried_from(src: ChainFit, laws: Sequence[str], best: ChainFit, fits: list[ChainFit],
                say: Progress) -> ChainFit:
    """The laws fitted from `src` on the chosen fit's data; refined and returned if their
    BIC beats `best`'s, else `best`."""
    say(0.9, f"fitting {law_name(laws)} friction")
    data, states = best.problem.data, src.problem.states(src.z)
    trial = _scouted(data, states, _next_start(src, laws), laws)
    fits.append(trial)
    if trial.bic >= best.bic:
        return best
    refined = _solved(trial.problem, trial.z, 60, FINAL_SIGMA_TOL)
    fits[-1] = refined
    return refined


def _vt_unsupported(fit: ChainFit, joint: int) -> bool:
    """Whether the data cannot carry the joint's Stribeck pair (estimator._stages
    .transition_unsupported, the rule every kind shares)."""
    k = fit.problem.parameter_names().index(f"vt{joint + 1}")
    return out_of_reach(fit.z, fit.cov, fit.problem.bounds(), k)


def segment_fits(fit: ChainFit, names: Sequence[str]
                 ) -> tuple[np.ndarray, list[dict[str, object]], Response]:
    """Fit per joint (seed 000 eq. 53) over all segments, each segment's own, and the
    response drawn from the segments."""
    d = fit.problem.data
    sim = fit.problem.simulate(fit.z)
    rows = d.bounds
    per: list[dict[str, object]] = []
    pieces = []
    for s in range(d.lengths.size):
        a, b = rows[s], rows[s + 1]
        pieces.append((d.t_start[s] + np.arange(b - a) * d.dt, d.q[a:b], sim[a:b]))
        per.append({"span_s": [round(float(d.t_start[s]), 4),
                               round(float(d.t_start[s] + (b - a - 1) * d.dt), 4)],
                    "fit_percent": {n: round(float(x), 3) for n, x in
                                    zip(names, fit_percent(sim[a:b], d.q[a:b]), strict=True)}})
    return fit_percent(sim, d.q), per, response_of(pieces, names)


__all__ = ["LAWS_AUTO", "LAW_TERMS", "ChainFit", "fit_chain", "fit_law", "segment_fits"]
