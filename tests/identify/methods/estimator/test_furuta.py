"""Multiple shooting ("shooting"): friction and rig jointly, on captures it was not made from.

Every capture here departs from what the estimator is told: the rig as built differs
from the nominal one, a hand lets go with a push, the pendulum meets air drag. The
estimator must still find the friction, say what it knows of the rig, and keep its
intervals honest.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hilrig.identify import PARAM_NAMES, TABLE_III_TRUTH, RigParams, identify
from hilrig.identify.methods.estimator import WALD_LOG_SD, WEAK_NOTE
from hilrig.identify.methods.estimator.furuta import COARSE_FLOOR, FINE_FLOOR
from hilrig.identify.model import RIG_QUANTITIES, Realism, rig_quantities
from hilrig.identify.signal import motion_start, realistic_capture, simulated_session

TRUTH = dict(zip(PARAM_NAMES, TABLE_III_TRUTH.as_array()))
DATA = Path(__file__).resolve().parents[3] / "data"
NOMINAL = RigParams()
MAIN = ("mu_d0", "mu_v0", "mu_d1", "mu_v1")
# the rig as built: CAD inertias and a pendulum length 5-8 % off
BUILT = NOMINAL.model_copy(update={"j1z": NOMINAL.j1z * 1.08, "j2x": NOMINAL.j2x * 0.94,
                                   "l2": NOMINAL.l2 * 1.05})


def _capture(realism: Realism, rig: RigParams | None = None, rest_s: float = 0.5,
             duration: float = 20.0):
    return realistic_capture(NOMINAL, TABLE_III_TRUTH, (0.0, 120.0), duration, realism,
                             rest_s=rest_s, rig=rig)


@pytest.fixture(scope="module")
def off_nominal():
    cap = _capture(Realism(seed=3, jitter_counts=1), rig=BUILT)
    return cap, identify(cap.measurement, "shooting")


@pytest.fixture(scope="module")
def by_hand():
    cap = _capture(Realism(seed=4, hand_tremor_rad=0.002, push_rad_s=(0.05, -0.15)),
                   rest_s=2.0)
    return cap, identify(cap.measurement, "shooting")


def test_a_rig_off_its_nominal_values_still_gives_the_friction_within_5_percent(off_nominal):
    _, r = off_nominal
    assert min(r.fit_percent.values()) > 99.9
    for name in MAIN:
        assert r.parameters[name].value == pytest.approx(TRUTH[name], rel=0.05), name


def test_every_interval_reported_identified_holds_the_truth(off_nominal, by_hand):
    for _, r in (off_nominal, by_hand):
        reported = [n for n, p in r.parameters.items() if p.identifiable]
        assert set(MAIN) <= set(reported)
        for name in reported:
            lo, hi = r.parameters[name].ci95
            assert lo <= TRUTH[name] <= hi, (name, r.parameters[name])


def test_the_masses_uncertainty_reaches_the_coulomb_intervals(off_nominal):
    # mu_d is a torque over (m1 + m2) g or m2 g: with masses known to +-5 % (CAD), no
    # capture can make its interval much narrower than that
    _, r = off_nominal
    for name in ("mu_d0", "mu_d1"):
        lo, hi = r.parameters[name].ci95
        assert hi / lo > 1.1, name


def test_what_a_free_decay_identifies_of_the_rig_is_reported_with_intervals(off_nominal):
    cap, r = off_nominal
    true = rig_quantities(cap.rig)
    assert r.rig["tilt_deg"].value == pytest.approx(true["tilt_deg"], abs=0.05)
    for name in ("L1", "reduced_length"):
        assert r.rig[name].value == pytest.approx(true[name], rel=0.01), name
    for name in RIG_QUANTITIES:
        lo, hi = r.rig[name].ci95
        assert lo <= r.rig[name].value <= hi and r.rig[name].identifiable, name
    # nothing was weighed: the absolute quantities carry the nominal values' scale
    assert "nominal values" in r.rig["m2_l2"].note
    assert r.rig["m2_l2"].ci95[1] / r.rig["m2_l2"].ci95[0] > 1.02
    # what the capture cannot separate is named, with what would separate it
    for name in ("m2", "l2", "j2x", "m1", "l1", "j1z"):
        est = r.rig[name]
        assert not est.identifiable and est.value is None, name
        assert est.assumed == getattr(NOMINAL, name) and "separate" in est.note, name


def test_a_measured_static_moment_fixes_the_scale_and_narrows_the_intervals(off_nominal):
    cap, r = off_nominal
    m2l2 = cap.rig.m2 * cap.rig.l2
    # as a lab states it in the [rig] config: the weighed values and their uncertainty
    weighed = NOMINAL.model_copy(update={"m2_l2": m2l2, "uncertainty": {
        "m2": 0.005, "m1": 0.005, "m2_l2": 0.005}})
    measured = identify(replace(cap.measurement, rig=weighed), method="shooting")
    got = measured.rig["m2_l2"]
    assert got.value == pytest.approx(m2l2, rel=0.01)
    assert got.ci95[0] <= m2l2 <= got.ci95[1] and "weighed" in got.note
    for name in ("mu_d0", "mu_d1"):
        lo, hi = measured.parameters[name].ci95
        lo0, hi0 = r.parameters[name].ci95
        assert hi / lo < hi0 / lo0, name
        assert lo <= TRUTH[name] <= hi, name


def test_a_hand_release_with_a_push_is_found_as_it_happened(by_hand):
    cap, r = by_hand
    release = r.diagnostics["release"]
    assert release["time_s"] == pytest.approx(cap.release_time_s, abs=0.01)
    assert release["angles_rad"][1] == pytest.approx(cap.release_state[1], abs=0.01)
    for name in MAIN:
        assert r.parameters[name].value == pytest.approx(TRUTH[name], rel=0.02), name


@pytest.mark.parametrize("seed", [9, 24, 26, 36])
def test_a_tremor_growing_during_the_hold_is_not_taken_for_the_release(seed):
    """These tremors swing wider after the first 0.2 s than within it; the first sample
    out of the held band came 0.2-0.8 s before the release, and the hand's motion went
    into the fit (residuals 50-100 times the noise on realistic captures)."""
    realism = Realism(seed=seed, hand_tremor_rad=0.003, push_rad_s=(0.0, 0.0))
    cap = _capture(realism, rest_s=1.0, duration=2.0)
    assert cap.release_time_s < motion_start(cap.measurement) < cap.release_time_s + 0.15


def test_the_fit_is_reported_over_the_whole_capture_and_per_segment(by_hand):
    _, r = by_hand
    segments = r.diagnostics["segments"]
    assert len(segments) >= 4  # 20 s in segments of about 4 s
    assert all(min(s["fit_percent"].values()) > 99 for s in segments)
    spans = [s["span_s"] for s in segments]
    assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))  # one after the other


def test_the_stribeck_pair_is_never_reported_identified_with_a_trusted_interval(by_hand):
    _, r = by_hand
    for name in ("mu_s0", "omega_t0", "mu_s1", "omega_t1"):
        p = r.parameters[name]
        assert not p.identifiable and p.assumed is not None and p.note


@pytest.fixture(scope="module")
def dragged():
    # 35 s: on 20 s the drag came out at 3.8e-6 (interval 3.0-4.8e-6), a known shortfall
    cap = _capture(Realism(seed=5, drag1=5e-6), duration=35.0)
    return identify(cap.measurement, "shooting")


def test_unmodelled_air_drag_is_chosen_by_the_information_criterion_and_found(dragged):
    r = dragged
    tried = r.diagnostics["models_tried"]
    chosen = [t["extra_terms"] for t in tried if t["chosen"]]
    assert chosen == [["drag1"]], tried
    # the nominal model left the pendulum's residuals above its noise; drag removed that
    assert tried[0]["residual_over_noise"]["pendulum"] > 1.5
    assert tried[1]["residual_over_noise"]["pendulum"] < 1.0
    assert tried[1]["score"] > 1000  # the score test at the nominal fit asked for it
    drag = r.diagnostics["extra_terms"]["drag1"]
    assert drag["value"] == pytest.approx(5e-6, rel=0.1)
    assert drag["ci95"][0] <= 5e-6 <= drag["ci95"][1]
    for name in MAIN:
        assert r.parameters[name].value == pytest.approx(TRUTH[name], rel=0.05), name
    assert math.isfinite(r.compute_seconds)


def test_a_chosen_extra_term_is_reported_among_the_rig_quantities(dragged):
    # it was only in diagnostics.extra_terms: not on the terminal, nor in `rig`
    drag, said = dragged.rig["drag1"], dragged.diagnostics["extra_terms"]["drag1"]
    assert drag.identifiable and drag.value == said["value"]
    assert drag.ci95 == tuple(said["ci95"])
    assert drag.note.startswith("N m s^2; the pendulum's air drag")
    assert "spring0" not in dragged.rig  # a term not chosen is no rig quantity


def test_a_drag_trial_starts_from_the_drag_its_score_test_gives_at_first_order():
    """The fit with drag starts where first order puts it from the fit without (here
    5.7e-6 N m s^2 against a true 5e-6; the usual start is 3e-6), and next to the fit
    without drag where first order asks for none: from 3e-6, bench_speed's realistic
    captures 6 and 9 (seed 1, no drag) ended their drag trials 3,350 and 12,340 worse in
    BIC than the fits they were warmed from, in 2.4 and 2.1 s; from there, 318 and 3,750
    worse in 1.2 and 1.5 s."""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.methods.estimator.furuta import fit_shooting

    cap = _capture(Realism(seed=5, drag1=5e-6), duration=35.0)
    fit = fit_shooting(cap.measurement)
    stat, drag_u = select.score_and_start(fit.problem, fit.z, fit.residual_rms, "drag1")
    assert stat == select.score_statistic(fit.problem, fit.z, fit.residual_rms, "drag1")

    def start(u: float) -> float | None:
        given = select.drag_start_of(fit, u)
        return None if given is None else math.exp(given["drag1"])

    assert start(drag_u) == pytest.approx(5e-6, rel=0.25)
    assert start(-drag_u) == pytest.approx(select.DRAG_START_RANGE[0])
    assert start(1e3 * drag_u) == pytest.approx(select.DRAG_START_RANGE[1])
    assert start(float("nan")) is None


def test_without_drag_the_score_test_spares_the_drag_fit_and_says_why(off_nominal):
    _, r = off_nominal
    drag = [t for t in r.diagnostics["models_tried"] if t["extra_terms"] == ["drag1"]]
    assert len(drag) == 1 and not drag[0]["chosen"]
    assert drag[0]["score"] < 5 and "could not win" in drag[0]["not_fitted"]


@pytest.fixture(scope="module")
def sticking_arm():
    """bench_speed's realistic capture 6 (seed 1): the arm sticks for long (omega_t 3.7e-4
    rad/s, a hump of 1.07), no drag."""
    from hilrig.identify.signal import random_realistic_capture

    rng = np.random.default_rng(1)
    for _ in range(6):
        cap = random_realistic_capture(rng, RigParams(), TABLE_III_TRUTH, 35.0)
    return cap, identify(cap.measurement, "shooting")


def test_a_drag_that_first_order_puts_below_zero_is_not_fitted_however_large_its_score(
        sticking_arm):
    """S 20 there, above the BIC's price, with the drag's first-order value negative.
    Fitted anyway, the drag slid from 1e-7 to 2e-10 N m s^2 over 26 simulations (1.7 of
    the capture's 3.9 s) and lost the BIC by 10."""
    cap, r = sticking_arm
    drag = [t for t in r.diagnostics["models_tried"] if "drag1" in t["extra_terms"]]
    assert len(drag) == 1 and "bic" not in drag[0]
    # above the BIC's whole price even at the capture's own rate
    assert drag[0]["score"] > math.log(r.samples) and "below zero" in drag[0]["not_fitted"]
    assert r.parameters["mu_v1"].ci95[0] <= cap.friction.mu_v1 <= r.parameters["mu_v1"].ci95[1]


def test_a_hump_the_data_hold_firmly_is_not_tried_away_for_a_loosely_held_transition(
        sticking_arm):
    """The arm's omega_t is held to a standard error of 24 % (hump_weak), its hump of 1.08
    to a Wald statistic of 420: Coulomb + viscous there lost by 72,900 in BIC (7.9 times
    the noise), in 0.4 s; it is no longer fitted, and the arm keeps its hump."""
    cap, r = sticking_arm
    laws = [t["laws"] for t in r.diagnostics["models_tried"] if "bic" in t]
    assert ["coulomb-viscous", "brown-mcphee"] not in laws
    assert r.diagnostics["friction_laws"]["arm"] == "brown-mcphee"
    for name in ("mu_d0", "mu_v0"):
        p = r.parameters[name]
        assert p.identifiable and p.ci95[0] <= getattr(cap.friction, name) <= p.ci95[1], name


def _released_at_120(friction):
    """20 s of the nominal rig let go with the pendulum at 120 deg and the arm at rest,
    whose arm spends most of its time near zero velocity (where its transition acts)."""
    return realistic_capture(NOMINAL, friction, (0.0, 120.0), 20.0,
                             Realism(seed=3, jitter_counts=1), rest_s=0.5)


def test_a_broad_stribeck_hump_on_the_arm_is_found_by_restarting_the_transition():
    """omega_t0 = 0.06 rad/s with mu_s = 2 mu_d: from the usual 1e-2 start the fit settled
    50 times above the noise with mu_v0 at zero and mu_d1 54 % off; a nominal fit that
    far above the noise is restarted from omega_t 0.1 and 1e-3, and the best kept."""
    friction = TABLE_III_TRUTH.model_copy(update={"omega_t0": 0.06,
                                                  "mu_s0": 2.0 * TABLE_III_TRUTH.mu_d0})
    cap = _released_at_120(friction)
    r = identify(cap.measurement, "shooting")
    assert min(r.fit_percent.values()) > 99.99
    for name in MAIN:
        assert r.parameters[name].value == pytest.approx(getattr(friction, name), rel=0.02)


def test_an_arm_transition_below_the_coarse_floor_is_resolved_on_the_finer_one():
    """omega_t0 = 3e-4 rad/s, below the coarse floor (2.5e-3) and the finer one it had
    (5e-4), on an arm that spends most of its time near zero velocity: refitted on the
    finer floor (1e-4), omega_t0, mu_d0 and mu_v0 all come out, the arm at the noise."""
    friction = TABLE_III_TRUTH.model_copy(update={"omega_t0": 3e-4})
    cap = _released_at_120(friction)
    r = identify(cap.measurement, "shooting")
    assert r.diagnostics["residual_over_noise"]["arm"] < 1.0
    assert r.parameters["omega_t0"].assumed == pytest.approx(3e-4, rel=0.1)  # an estimate
    for name in MAIN:
        assert r.parameters[name].identifiable, name
        assert r.parameters[name].value == pytest.approx(getattr(friction, name), rel=0.02)


def test_a_joint_the_first_stage_leaves_stuck_at_the_coarse_floor_goes_on_on_the_finer_one(
        off_nominal):
    """The same sticking arm (omega_t0 = 3e-4 rad/s): the first stage, on the coarse floor,
    leaves its transition at that floor. The fit goes on from there on the finer floor,
    the arm's transition started at FINE_START and everything else as the first stage
    left it, rather than through a whole fit on the coarse floor that the finer one would
    then redo. A capture whose transitions the coarse floor resolves stays on it."""
    from hilrig.identify.methods.estimator.furuta import (
        FINE_FLOOR,
        FINE_START,
        finer_where_stuck,
        short_fit,
    )

    friction = TABLE_III_TRUTH.model_copy(update={"omega_t0": 3e-4})
    cap = _released_at_120(friction)
    short = short_fit(cap.measurement)
    assert short.problem.floor == COARSE_FLOOR and short.problem.unresolved(short.z, 0)
    problem, z = finer_where_stuck(short.problem, short.z)
    assert problem.floor == FINE_FLOOR
    k = problem.friction_index("omega_t0")
    assert math.exp(float(z[k])) == pytest.approx(FINE_START)
    others = np.arange(z.size) != k
    assert np.array_equal(z[others], short.z[others])

    resolved = short_fit(off_nominal[0].measurement)
    assert not any(resolved.problem.unresolved(resolved.z, j) for j in (0, 1))
    assert finer_where_stuck(resolved.problem, resolved.z)[0] is resolved.problem


def test_an_arm_transition_sharper_than_the_fit_resolves_leaves_its_viscous_term_untrusted():
    """omega_t0 = 3e-5 rad/s, below the finer floor (1e-4), on an arm that spends most of
    its time near zero velocity: mu_d0 still comes out, mu_v0 (which takes up the
    difference: 7-70 % off on realistic captures) is reported as an estimate only, and the
    pendulum, rarely that slow, keeps its viscous term."""
    friction = TABLE_III_TRUTH.model_copy(update={"omega_t0": 3e-5})
    cap = _released_at_120(friction)
    r = identify(cap.measurement, "shooting")
    assert r.parameters["mu_d0"].value == pytest.approx(friction.mu_d0, rel=0.02)
    mu_v0 = r.parameters["mu_v0"]
    assert not mu_v0.identifiable and "sharper than the fit resolves" in mu_v0.note
    assert r.parameters["mu_v1"].identifiable
    assert r.parameters["mu_v1"].value == pytest.approx(friction.mu_v1, rel=0.02)


def test_a_restart_from_below_the_coarse_floor_is_fitted_on_the_finer_one():
    """RESTART_OMEGA_T's 1e-3 lies below the coarse floor (2.5e-3 rad/s): fitted there it
    was the floor again, the start 3e-3 twice. It is fitted on the finer floor, where a
    transition sharper than the coarse floor can be followed (bench_coverage seed 1's
    capture 19, drag and a cable: the arm from 1.39 to 0.76 times the noise, mu_v1 +2.7
    to +0.5 %, in 45 s instead of 75). (A start on the coarse floor reaches the finer one
    here too, since this arm sticks: the next test.)"""
    from hilrig.identify.methods.estimator.furuta import fit_shooting

    friction = TABLE_III_TRUTH.model_copy(update={"omega_t0": 3e-4})
    m = _released_at_120(friction).measurement
    below = fit_shooting(m, omega_t_start=1e-3)
    assert below.problem.floor == FINE_FLOOR
    k = below.problem.friction_index("omega_t0")
    assert math.exp(float(below.z[k])) < COARSE_FLOOR[0]
    assert below.excess[0] < 1.0


def test_the_fit_over_the_capture_is_its_segments_read_off_the_fits_own_grid():
    """The fit's angles at every sample of the capture (its fit percent, per segment and
    whole, and the response drawn) are its segments simulated on the fit's grid and
    schedule, read between grid points by the local cubic: within 1e-6 rad (under 1 % of
    an encoder count) of the same segments simulated at 8 times the capture's rate, on an
    arm whose transition (3e-4 rad/s) only the finer floor follows. (Simulated at the
    capture's own rate, one RK4 step a sample, they were 7e-7 rad off here, and 3.4e-5 on
    bench_speed's realistic capture 6, whose arm's transition is at 1e-4.)"""
    from hilrig.identify.methods.estimator.furuta import fit_shooting, segment_angles
    from hilrig.identify.model import equivalent_rigs, simulate_jobs

    friction = TABLE_III_TRUTH.model_copy(update={"omega_t0": 3e-4})
    m = _released_at_120(friction).measurement
    fit = fit_shooting(m, omega_t_start=1e-3)
    p = fit.problem
    assert p.floor == FINE_FLOOR
    rig, fr = equivalent_rigs(p.u_of(fit.z[:p.n_global]))
    spans = segment_angles(m, fit)
    assert len(spans) == p.seg.count
    assert spans[0][0].start == int(np.searchsorted(m.t, p.seg_t0[0] - 1e-12))
    assert spans[-1][0].stop == m.t.size  # to the capture's last sample
    assert all(a.stop == b.start for (a, _), (b, _) in zip(spans, spans[1:]))
    for s, (rows, sim) in enumerate(spans):
        k = m.sample_index[rows] - m.sample_index[rows.start]
        n = int(k[-1]) + 1
        fine = simulate_jobs(rig, fr, p.states(fit.z)[s:s + 1], np.zeros(1, np.int64),
                             p.seg_t0[s:s + 1], np.zeros(1, np.int64), np.array([n]),
                             1.0 / m.rate_hz, np.full(n, 8, np.int64), np.zeros(1, np.int64),
                             n, seg_t_first=np.array([m.t[rows.start]]))[k]
        assert np.abs(sim - fine).max() < 1e-6, s


def test_the_fit_is_read_at_every_sample_of_an_odd_rate_capture_ending_after_lost_frames():
    """At 1500 Hz (three samples a grid point: samples on grid points, a rounding either
    side of a segment's start), a capture whose last samples follow 25 ms of lost frames
    has no grid point near them: the last segment is simulated on past its grid (with
    three grid points of margin, as first written, the read there failed)."""
    from hilrig.identify.methods.estimator.furuta import fit_shooting, segment_angles

    cap = realistic_capture(NOMINAL, TABLE_III_TRUTH, (0.0, 120.0), 10.0,
                            Realism(seed=3, jitter_counts=1), rest_s=0.5, rate_hz=1500.0)
    m = cap.measurement
    keep = np.ones(m.sample_index.size, bool)
    keep[-40:-2] = False  # 25 ms lost, two samples after them
    m = replace(m, angles=m.angles[keep], sample_index=m.sample_index[keep])
    fit = fit_shooting(m)
    spans = segment_angles(m, fit)
    assert spans[-1][0].stop == m.t.size
    assert all(np.isfinite(sim).all() for _, sim in spans)
    last, sim = spans[-1]
    assert np.abs(sim[-2:] - m.angles[last][-2:]).max() < 0.01  # the fit, not a runaway


def test_a_fit_on_the_finer_floor_asks_for_no_finer_one():
    """omega_t0 = 3e-5 rad/s, below the finer floor too: a fit there ends with the arm's
    transition at that floor and the arm unresolved, which the result reports. Nothing is
    finer, so nothing asks for a refit: refitted on the same floor from the same start,
    seed 3's realistic capture 7 spent 1 s of its 3.6 and came back with the same fit."""
    from hilrig.identify.methods.estimator.furuta import (
        finer_floor_asked,
        fit_shooting,
        unresolved_joints,
    )
    from hilrig.identify.model import QUANTUM, quantisation_rms

    friction = TABLE_III_TRUTH.model_copy(update={"omega_t0": 3e-5})
    m = _released_at_120(friction).measurement
    fine = fit_shooting(m, omega_t_start=1e-3)
    assert fine.problem.floor == FINE_FLOOR and unresolved_joints(fine) == {"0"}
    assert not finer_floor_asked(fine, quantisation_rms(QUANTUM))


def _on_the_coarse_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fits stay on the coarse floor through their first stage (no finer_where_stuck):
    the coarse fit _refined replaces, as a capture's first fit was before that step."""
    import hilrig.identify.methods.estimator.furuta._fit as fit_module

    monkeypatch.setattr(fit_module, "finer_where_stuck", lambda problem, z: (problem, z))


@pytest.mark.slow
def test_a_refit_on_the_fine_floor_replaces_a_coarse_fit_with_no_width_to_lose(monkeypatch):
    """bench_coverage seed 2's capture 39 (drag and a cable, both transitions at 1.6-1.7e-4
    rad/s): the first fit stops 12.6 and 9.4 times above the noise, both omega_t at the
    coarse floor and every friction variance infinite. The refit's finite widths were
    read as collapsed ones, an overflow, and the coarse fit kept itself against a refit
    76,000 lower in BIC; two restarts followed (7 s). (Its first stage now goes on on the
    finer floor itself: the coarse fit is made here as it was.)"""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.methods.estimator.furuta import fit_shooting
    from hilrig.identify.signal import CONDITIONS, random_realistic_capture

    rng = np.random.default_rng(2)
    for k in range(39):
        cap = random_realistic_capture(rng, RigParams(), TABLE_III_TRUTH, 35.0,
                                       condition=CONDITIONS[k % len(CONDITIONS)])
    _on_the_coarse_floor(monkeypatch)
    coarse = fit_shooting(cap.measurement)
    friction = slice(coarse.problem.n_rig, coarse.problem.n_rig + 8)
    assert coarse.excess.min() > 5 and np.all(np.isinf(np.diag(coarse.cov)[friction]))
    fine = select._refined(coarse)
    assert fine is not coarse and fine.problem.floor == FINE_FLOOR
    assert fine.bic < coarse.bic - 10_000 and fine.excess.max() < select.RESTART_EXCESS


def _drawn(name: str):
    """A capture of bench_coverage rebuilt from its own draws, kept to the digit in
    tests/data/bench_draws.json (rounded, a fit may take another path): the rig told and
    built, friction, pose, realism and rate."""
    d = json.loads((DATA / "bench_draws.json").read_text())[name]
    lab = {"cad_uncertainty": 0.1, "uncertainty": {"m1": 0.005, "m2": 0.005, "m2_l2": 0.005}}
    return realistic_capture(NOMINAL.model_copy(update={**d["told"], **lab}),
                             TABLE_III_TRUTH.model_copy(update=d["friction"]),
                             tuple(d["pose"]), 35.0, Realism(**d["realism"]), rest_s=1.0,
                             rig=NOMINAL.model_copy(update=d["built"]),
                             rate_hz=d.get("rate_hz", 10_000.0))


def test_an_arm_refitted_on_the_fine_floor_keeps_finite_derivatives_and_the_refit():
    """A noisy sensor (6 mrad) on an arm whose transition (omega_t0 1.7e-4 rad/s) is
    sharper than both floors, held still by it for long stretches: RK4's steps there
    outran the friction's stability on the fine floor, its sensitivities grew to 1e176,
    the refit was thrown away and mu_d0 stood 7.2 % off with a +-2.6 % interval (capture 48
    of bench_coverage's seed 2). The schedule now takes substeps enough to stay stable."""
    cap = _drawn("seed 2 capture 48")
    r = identify(cap.measurement, "shooting")
    # below the coarse floor: the refit on the fine one was kept
    assert r.parameters["omega_t0"].assumed < COARSE_FLOOR[0]
    assert r.parameters["mu_d0"].value == pytest.approx(cap.friction.mu_d0, rel=0.05)


def test_a_transition_at_the_coarse_floor_on_a_noise_free_record_is_refined():
    """A noise-free capture whose pendulum transition (omega_t1 1.7e-3 rad/s) is sharper
    than the coarse floor, though the pendulum spends only 1-3 % of its time near zero
    velocity: at the floor, 2.5e-3, the arm's mu_v0 came out -4.0 % at 7.4 bounds, the
    residuals at 0.28 of the quantum's floor, where their excess says nothing (capture 1
    of bench_coverage's seed 1). Refined on the fine floor, within 0.1 %."""
    cap = _drawn("seed 1 capture 1")
    r = identify(cap.measurement, "shooting")
    assert r.parameters["omega_t1"].assumed < COARSE_FLOOR[0]
    mu_v0 = r.parameters["mu_v0"]
    assert mu_v0.value == pytest.approx(cap.friction.mu_v0, rel=0.01)
    assert mu_v0.ci95 is not None and mu_v0.ci95[0] <= cap.friction.mu_v0 <= mu_v0.ci95[1]


def test_an_arm_that_drag_brings_to_the_noise_is_not_given_a_cable():
    """A pendulum with drag (4.9e-6 N m s^2) and an arm with a weak cable (4.6e-5 N m/rad):
    the first fit leaves the arm 2.3 and the pendulum 3.8 times above the noise. Drag,
    fitted first, brings both to the noise (the arm through the coupling); the cable is
    asked of an arm that stays above the noise once drag is judged, and is not tried.
    Before, the cable and drag with the cable were fitted after it and lost, 4.3 of 9.3 s
    (capture 9 of bench_coverage's seed 1)."""
    cap = _drawn("seed 1 capture 9")
    r = identify(cap.measurement, "shooting")
    tried = [t["extra_terms"] for t in r.diagnostics["models_tried"] if "bic" in t]
    assert not any("spring0" in extras for extras in tried), tried
    chosen = next(t for t in r.diagnostics["models_tried"] if t["chosen"])
    assert chosen["extra_terms"] == ["drag1"]
    assert max(r.diagnostics["residual_over_noise"].values()) < 1.0
    drag = r.diagnostics["extra_terms"]["drag1"]
    assert drag["identifiable"] and drag["ci95"][0] <= cap.rig.drag1 <= drag["ci95"][1]


def test_a_transition_escaped_above_every_start_on_a_noise_free_record_is_restarted():
    """A noise-free capture with drag, whose pendulum's omega_t (truth 0.071 rad/s) ran
    from its 1e-2 start to 0.92 rad/s, its hump taking up the viscous term (mu_d1 -12 %,
    mu_v1 +11 %, intervals missing by 5 sigma) with residuals under the quantum's floor,
    where the excess over the noise sees nothing (capture 29 of bench_coverage's seed 2)."""
    cap = _drawn("seed 2 capture 29")
    r = identify(cap.measurement, "shooting")
    for name in ("mu_d1", "mu_v1"):
        p = r.parameters[name]
        assert p.identifiable and p.ci95[0] <= getattr(cap.friction, name) <= p.ci95[1]
        assert p.value == pytest.approx(getattr(cap.friction, name), rel=0.02)


def test_a_friction_value_held_too_loosely_for_its_wald_interval_is_an_estimate_only():
    """Table V noise on an arm whose friction the data barely reach: mu_v0 came out at
    +513 % with a standard error of 40 % and an interval missing the truth by 4.5 sigma
    (capture 57 of bench_coverage's seed 2). A log-fitted value whose standard error
    passes WALD_LOG_SD is reported with its interval but not as identified."""
    cap = _drawn("seed 2 capture 57")
    r = identify(cap.measurement, "shooting")
    mu_v0 = r.parameters["mu_v0"]
    assert not mu_v0.identifiable and mu_v0.value is None and mu_v0.note == WEAK_NOTE
    assert mu_v0.assumed is not None and mu_v0.ci95 is not None
    for p in r.parameters.values():  # nothing reported identified is held that loosely
        if p.identifiable and p.ci95 is not None and p.value:
            assert math.log(p.ci95[1] / p.ci95[0]) / 3.92 <= WALD_LOG_SD + 1e-12


@pytest.fixture(scope="module")
def table_v():
    """Seed 000's Table V condition: 35 s at 1 kHz with white noise of 0.1 rad."""
    cap = realistic_capture(NOMINAL, TABLE_III_TRUTH, (0.0, 120.0), 35.0,
                            Realism(seed=1, noise_rad=0.1), rest_s=0.5, rate_hz=1000.0)
    return cap, identify(cap.measurement, "shooting")


def test_where_the_data_cannot_carry_a_stribeck_hump_the_joint_ends_on_coulomb_and_viscous(
        table_v):
    """On Table V noise Brown-McPhee's omega_t runs to a bound of the fit: Coulomb +
    viscous wins the BIC on both joints, its friction stays within twice its Cramer-Rao
    bound, and mu_s and omega_t are said to be outside the law, not given as numbers."""
    _, r = table_v
    assert r.diagnostics["friction_laws"] == {"arm": "coulomb-viscous",
                                              "pendulum": "coulomb-viscous"}
    tried = [t["laws"] for t in r.diagnostics["models_tried"] if "bic" in t]
    assert ["brown-mcphee", "brown-mcphee"] in tried
    crb = r.diagnostics["cramer_rao"]
    for name in ("mu_d0", "mu_d1", "mu_v1"):
        p = r.parameters[name]
        assert p.identifiable and abs(p.value / TRUTH[name] - 1) < 2 * crb[name], (name, p)
        assert p.ci95[0] <= TRUTH[name] <= p.ci95[1], name
    for name in ("mu_s0", "omega_t0", "mu_s1", "omega_t1"):
        p = r.parameters[name]
        assert p.value is None and not p.identifiable
        assert "not in the chosen friction law of this joint (coulomb-viscous)" in p.note
        assert "BIC" in p.note and p.assumed is not None


def test_the_cramer_rao_bound_of_each_friction_parameter_is_reported(off_nominal, table_v):
    for _, r in (off_nominal, table_v):
        crb = r.diagnostics["cramer_rao"]
        fitted = {"mu_d0", "mu_v0", "mu_d1", "mu_v1"}
        assert fitted <= set(crb) and all(crb[n] > 0 for n in fitted)
        identified = {n for n in fitted if r.parameters[n].identifiable}
        assert all(crb[n] < math.inf for n in identified)
    # a clean capture bounds the pendulum's Coulomb term tighter than Table V noise, where
    # the arm's viscous term is out of reach (a relative bound above 1: the fit runs it
    # down to where the motion no longer feels it, and no bound holds it)
    assert table_v[1].diagnostics["cramer_rao"]["mu_v0"] > 1
    assert not table_v[1].parameters["mu_v0"].identifiable
    assert off_nominal[1].diagnostics["cramer_rao"]["mu_d1"] < table_v[1].diagnostics[
        "cramer_rao"]["mu_d1"]


def _sensor_captures(*which: int):
    """bench_coverage's noisy-sensor captures of seed 1 (every fifth draw is one)."""
    import numpy as np

    from hilrig.identify.signal import CONDITIONS, random_realistic_capture

    rng = np.random.default_rng(1)
    out = {}
    for k in range(max(which)):
        condition = CONDITIONS[k % len(CONDITIONS)]
        cap = random_realistic_capture(rng, RigParams(), TABLE_III_TRUTH, 35.0,
                                       condition=condition)
        if k + 1 in which:
            assert condition == "sensor"
            out[k + 1] = cap
    return out


@pytest.mark.slow
def test_a_noisy_sensor_capture_is_fitted_at_the_noise_and_no_term_gets_a_null_interval():
    """On bench_coverage's noisy-sensor capture 33 the arm stayed 1.58 times above the
    noise with mu_d0 33 % off and mu_v0 at 1.3e-9 with an interval of zero width; the
    chosen model's restarts from other omega_t bring it to the noise. Where the first fit
    lands depends on the last digits of its least-squares steps: with BLAS on two threads
    it reached the noise on its own, on one thread (as every identification now runs) it
    stops 1.6 times above it, as it first did, and the restarts take it down."""
    cap = _sensor_captures(33)[33]
    r = identify(cap.measurement, "shooting")
    assert max(r.diagnostics["residual_over_noise"].values()) < 1.1
    # held to the 5 % on the noisy arm's Coulomb level, the pendulum's terms to 3 %
    within = {"mu_d0": 0.05, "mu_d1": 0.03, "mu_v1": 0.03}
    for name, rel in within.items():
        assert r.parameters[name].value == pytest.approx(getattr(cap.friction, name), rel=rel)
    for p in r.parameters.values():
        assert p.ci95 is None or p.ci95[1] > p.ci95[0]


def test_a_joint_whose_hump_took_its_viscous_term_is_tried_without_the_hump():
    """Capture 17 of bench_coverage's seed 1 (Table V noise; the arm's true hump inverted,
    mu_s 0.86 mu_d): Brown-McPhee on the arm ended with its transition well determined
    (0.08-0.23 rad/s) but its viscous term gone (1e-7, an interval of 600 decades), the
    hump standing in for it, and mu_d0 +68 % at 5.4 Cramer-Rao bounds. A joint whose
    viscous term the hump took is now tried on Coulomb + viscous too, which wins the BIC.
    With the first stage stopped on small steps, Brown-McPhee ends elsewhere: no term at
    a bound or a factor 10 wide, but mu_d, mu_v and omega_t at standard errors of
    34-53 % (mu_d0 -33 %); a law held that loosely is tried without its hump as well."""
    cap = _drawn("seed 1 capture 17")
    r = identify(cap.measurement, "shooting")
    assert r.diagnostics["friction_laws"]["arm"] == "coulomb-viscous"
    tried = [t["laws"] for t in r.diagnostics["models_tried"] if "bic" in t]
    assert tried[0] == ["brown-mcphee", "brown-mcphee"]
    mu_d0 = r.parameters["mu_d0"]
    truth = cap.friction.mu_d0
    assert mu_d0.identifiable and mu_d0.ci95[0] <= truth <= mu_d0.ci95[1]
    assert abs(mu_d0.value / truth - 1) < 3 * r.diagnostics["cramer_rao"]["mu_d0"]


def test_a_joint_left_without_its_hump_above_the_noise_gets_brown_mcphee_again_from_there():
    """Capture 3 of a steady simulated session (bench_session_pooled's seed 1, session 11;
    the pendulum's hump mu_s 1.54 mu_d at omega_t 0.074 rad/s): its first Brown-McPhee
    fit once stayed at 3.8 times the noise and lost to Coulomb + viscous with drag at 1.35
    times it, mu_d1 +4.5 % and mu_v1 -5.3 % with intervals missing the truth (the
    session's pooling then called it an outlier: a false alarm). Since the substeps refine
    only the intervals next to each reversal, the first fit reaches the right valley
    itself (one model, a BIC 60,800 lower than that first fit). The step that got there
    before is tested from the model it lost to: Brown-McPhee started from Coulomb +
    viscous with drag, with a hump, wins, and the drag that stood in for the hump (the
    capture has none) is taken away."""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.methods.estimator.furuta import fit_shooting

    session = simulated_session(np.random.default_rng(100_014), NOMINAL, TABLE_III_TRUTH, 4)
    truth = session.friction
    m = session.captures[3].measurement
    r = identify(m, "shooting")
    assert r.diagnostics["friction_laws"]["pendulum"] == "brown-mcphee"
    assert not r.diagnostics["extra_terms"]
    for name in ("mu_d1", "mu_v1"):
        p, true = r.parameters[name], getattr(truth, name)
        assert abs(p.value / true - 1) < 0.02 and p.ci95[0] <= true <= p.ci95[1], name
    lost = fit_shooting(m, laws=("brown-mcphee", "coulomb-viscous"), extras=("drag1",))
    assert lost.excess[1] > select.CHOSEN_RESTART_EXCESS
    again = select._hump_again(m, None, lost, [], None)
    assert again.problem.laws == ("brown-mcphee", "brown-mcphee") and not again.extras
    assert again.bic < lost.bic and again.excess[1] < 0.5


def test_a_finer_floor_fit_with_a_term_it_no_longer_feels_replaces_the_coarse_one(
        monkeypatch):
    """A session's capture whose arm has its transition at 4.2e-4 rad/s (mu_s / mu_d 2.85),
    below the coarse floor: there the arm stays at 4-6 times the noise. On the finer floor
    it comes to the noise, with a term run down to where the motion no longer feels it,
    whose variance is infinite by design (not identified). That infinity was taken for
    an overflow of the sensitivities and the coarse fit kept: in a pooled session, nine
    more models (111 s) and the capture left out as inadequate. (Its first stage now goes
    on on the finer floor itself: the coarse fit is made here as it was.)"""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.methods.estimator.furuta import fit_shooting

    # bench_session_pooled's drift session 4 (seed 1), its capture 04. Its fit without
    # drag now runs no term down on the finer floor: with a drag the capture does not
    # carry, the finer floor runs the drag down
    session = simulated_session(np.random.default_rng(100_007), NOMINAL, TABLE_III_TRUTH, 10,
                                8.0, drift_per_hour={"mu_v1": 0.1 / 8})
    _on_the_coarse_floor(monkeypatch)
    coarse = fit_shooting(session.captures[4].measurement, extras=("drag1",))
    assert coarse.excess[0] > 2 * select.CHOSEN_RESTART_EXCESS
    fine = select._refined(coarse)
    assert fine is not coarse and fine.problem.floor == FINE_FLOOR
    assert np.isposinf(np.diag(fine.cov)).any()
    assert fine.excess.max() < 1.0 and fine.bic < coarse.bic
    k = fine.problem.friction_index("mu_d0")
    assert abs(math.exp(float(fine.z[k])) / session.friction.mu_d0 - 1) < 0.02


def test_an_extra_term_not_identified_on_a_joint_already_at_the_noise_is_not_kept():
    """The last capture of a short drift session (5 captures of 10 s, mu_v1 +10 % over
    8 h, no drag): with its pendulum at 0.47 times the noise, drag once won the BIC by 16
    with a value it could not pin down (standard error 21 %) and moved mu_v1 from +9.7 to
    +6.3 % of the truth's +10 %, which left the session without its drift. Such a term
    stands in for something else and is not kept (needed), whether or not it wins the BIC
    (since the substeps refine only next to each reversal, it no longer does here)."""
    from hilrig.identify.methods.estimator.furuta import fit_shooting
    from hilrig.identify.methods.estimator.furuta._extras import needed

    session = simulated_session(np.random.default_rng(7), NOMINAL, TABLE_III_TRUTH, 5, 8.0,
                                duration=10.0, drift_per_hour={"mu_v1": 0.1 / 8})
    m = session.captures[4].measurement
    r = identify(m, "shooting")
    assert any(t["extra_terms"] == ["drag1"] and not t["chosen"]
               for t in r.diagnostics["models_tried"])
    assert not r.diagnostics["extra_terms"]
    truth = session.friction.mu_v1 * (1 + 0.1 / 8 * session.hours[4])
    p = r.parameters["mu_v1"]
    assert abs(p.value / truth - 1) < 0.02 and p.ci95[0] <= truth <= p.ci95[1]
    base = fit_shooting(m)
    trial = fit_shooting(m, extras=("drag1",), warm=base)
    assert base.excess[1] < 1.0
    assert not needed(trial, base, ("drag1",))


def test_a_restart_that_wins_judges_its_extra_terms_again():
    """An extra term chosen in the valley a restart leaves may have stood in for the
    transition there. Here the arm's transition sits at 4.2e-4 rad/s, below the coarse
    floor, and there is no drag: a fit with drag stuck at the floor is restarted, and the
    restart that wins keeps the drag unless it is judged again; without it the BIC is
    lower. (The same rig's 35 s capture: 11.5 times the noise with a drag and a cable,
    0.81 after the restart with both kept, mu_v1 -0.9 %; judged again 0.72, no extra term,
    mu_v1 -0.0 %.)"""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.methods.estimator.furuta import fit_shooting

    session = simulated_session(np.random.default_rng(100_007), NOMINAL, TABLE_III_TRUTH, 4,
                                3.2, duration=15.0, drift_per_hour={"mu_v1": 0.1 / 8})
    m = session.captures[3].measurement
    stuck = fit_shooting(m, extras=("drag1",), omega_t_start=0.1)
    k = stuck.problem.friction_index("omega_t0")
    assert math.exp(float(stuck.z[k])) == pytest.approx(COARSE_FLOOR[0])  # at the floor
    fits: list = []
    best = select._restarted_chosen(m, None, stuck, fits, None)
    with_drag = [f for f in fits if f.extras == ("drag1",)]
    assert with_drag and min(f.bic for f in with_drag) < stuck.bic  # a restart won
    assert best.extras == () and best.bic < min(f.bic for f in with_drag)


def test_a_first_fit_far_above_the_noise_for_want_of_drag_is_restarted_with_drag_first():
    """Capture 14 of bench_coverage's seed 1 (pendulum drag 1.9e-5 N m s^2, its transition
    at 1.3e-4 rad/s): the first fit, without drag and refined on the fine floor, leaves
    the pendulum far above the noise. Four restarts from other omega_t took 17 s and
    stayed there; drag's score test now puts the same start with drag first, and that
    one restart ends the search, its BIC the lower."""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.methods.estimator.furuta import fit_shooting

    m = _drawn("seed 1 capture 14").measurement
    first = select._refined_if_asked(fit_shooting(m), m)
    assert first.excess.max() > select.RESTART_EXCESS
    restarts, _ = select._restarts(first)
    (omega, extras), *others = restarts
    assert extras == ("drag1",) and all(e == () for _, e in others)
    with_drag = select._refined_if_asked(fit_shooting(m, extras=extras, omega_t_start=omega), m)
    assert with_drag.excess.max() <= select.RESTART_EXCESS
    assert with_drag.bic < first.bic


def test_a_first_fit_far_above_the_noise_on_the_arm_is_not_restarted_with_drag_first():
    """Capture 23 of bench_coverage's seed 1 (a noisy sensor, no drag): the first fit
    leaves the arm at 7.4 times the noise and the pendulum at 4.0. Drag acts on the
    pendulum, so it is not the first restart there (tried first, it took the arm's mu_d
    from -4.3 % to -10.4 %); the restarts from other omega_t come first, as before."""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.methods.estimator.furuta import fit_shooting

    m = _drawn("seed 1 capture 23").measurement
    # (the generic start now reaches 2.0 and 2.2 times the noise: the first fit is taken
    # from a start that leaves the arm far above it)
    first = select._refined_if_asked(fit_shooting(m, omega_t_start=3e-3), m)
    assert first.excess[0] > select.RESTART_EXCESS >= first.excess[1]
    restarts, _ = select._restarts(first)
    assert [e for _, e in restarts] == [()] * len(select.RESTART_OMEGA_T)


def test_a_model_tried_from_a_fit_that_leaves_only_noise_is_not_fitted_twice(monkeypatch):
    """Each model the selection tries starts from the chosen fit; where that fit's joints
    sit at the weight floor (residuals under half the quantised angles' noise), the new
    model is weighed so from the start: it used to start from the noise and, reweighed,
    be fitted a second time (2 of the 21 Jacobians of an ideal 35 s capture)."""
    import hilrig.identify.methods.estimator.furuta._fit as furuta_fit
    cap = _capture(Realism(seed=1))
    base = furuta_fit.fit_shooting(cap.measurement)
    assert list(base.problem.sigma) == pytest.approx(list(base.noise * furuta_fit.WEIGHT_FLOOR))
    fits = []
    plain = furuta_fit.fit_free

    def counted(problem, z, free, max_iter, **kw):
        fits.append(max_iter)
        return plain(problem, z, free, max_iter, **kw)

    monkeypatch.setattr(furuta_fit, "fit_free", counted)
    trial = furuta_fit.fit_shooting(cap.measurement, laws=("brown-mcphee", "coulomb-viscous"),
                                    warm=base)
    assert len(fits) == 1  # no second fit after reweighing
    assert list(trial.noise) == list(base.noise)  # the noise reported is still the data's
    assert trial.residual_rms[1] < trial.noise[1]


def test_an_extra_term_the_capture_does_not_carry_is_not_reported_identified():
    """Drag asked for on a capture without any: the fit runs it down to ~1e-8, where the
    motion hardly feels it. It was reported identified among the rig quantities, with an
    interval that excluded zero (and on a noisy-sensor capture of bench_coverage, a drag
    of 5.7e-10 came with an interval of +-0.001 %): an extra term is judged by the
    friction's rule, so here it is an estimate, not identified, and says why."""
    from hilrig.identify.methods.estimator.furuta import identify_multiple_shooting

    cap = _capture(Realism(seed=1), duration=20.0)
    assert cap.rig.drag1 == 0.0
    r = identify_multiple_shooting(cap.measurement, extras=("drag1",))
    drag = r.rig["drag1"]
    assert not drag.identifiable and drag.value is None and drag.assumed is not None
    assert "not identifiable" in drag.note
    assert drag.ci95 is not None and drag.ci95[0] <= 0.0 + 1e-12 < drag.ci95[1]
    assert r.diagnostics["extra_terms"]["drag1"]["identifiable"] is False
    for name in MAIN:  # the friction is not bent by the term
        assert r.parameters[name].value == pytest.approx(getattr(TABLE_III_TRUTH, name),
                                                         rel=0.01)


@pytest.mark.slow
def test_a_covariance_from_derivatives_that_overflow_says_nothing_on_the_terminal():
    """bench_session_pooled's drift session 5 (seed 1), capture 8: the merged stage's fit,
    refitted where its reversals moved, ends on sensitivities that overflow on the finer
    schedule, and numpy's warnings about that covariance (overflow in the Gram products,
    an invalid subtraction) reached the terminal. Its information is not finite, which
    the selection reads as no interval; the capture still ends adequate. (Its arm ends
    at 0.9-1.12 times the quantum's floor: 1.08-1.12 alone in a process on one day's
    machine, 0.916 alone and after other captures on a later day's, the same on one
    thread, with numba's generic CPU target, and in a fresh clone of the earlier tree;
    so adequacy is asserted, not a side of 1.)"""
    from hilrig.identify.results import ADEQUATE_EXCESS

    session = simulated_session(np.random.default_rng(100_008), RigParams(), TABLE_III_TRUTH,
                                10, 8.0, duration=35.0, drift_per_hour={"mu_v1": 0.1 / 8})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = identify(session.captures[8].measurement)
    assert max(r.diagnostics["residual_over_noise"].values()) < ADEQUATE_EXCESS


def test_a_first_fit_far_above_the_noise_on_one_joint_is_moved_from_itself(monkeypatch):
    """Capture 13 of bench_speed's draws (seed 3, realistic: the arm's transition at
    1.3e-3 rad/s, mu_s 2.4 times mu_d): the first fit leaves the arm 27 times above the
    noise, its transition at 2.0e-3, and the pendulum at 2.4. The cold restarts from other
    omega_t took 10 s to bring it to the noise. The same fit moved from itself, the arm's
    transition started at 0.1 rad/s, gets there in one last stage (under 1 s), and no
    cold restart runs."""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.methods.estimator.furuta import FRICTION_FREE, fit_shooting

    cap = _drawn("seed 3 capture 13")
    m = cap.measurement
    first = select._refined_if_asked(fit_shooting(m), m)
    assert first.excess[0] > select.RESTART_EXCESS >= first.excess[1]
    starts = []
    plain = select.fit_shooting

    def recorded(*args, **kw):
        starts.append("warm" if kw.get("warm") is not None else "cold")
        return plain(*args, **kw)

    monkeypatch.setattr(select, "fit_shooting", recorded)
    best = select._restarted_first(m, None, first, None)
    assert starts == ["warm"]
    assert best.excess.max() <= select.AT_THE_NOISE
    friction = dict(zip(FRICTION_FREE, best.problem.friction_of(best.z), strict=True))
    for name in MAIN:
        assert friction[name] == pytest.approx(getattr(cap.friction, name), rel=0.015)


class _FarFit:
    """What _one_joint_restarted reads of a first fit: residuals over the noise, the noise,
    the friction (mu_d, mu_s, mu_v, omega_t per joint) and the BIC."""

    def __init__(self, excess, noise, friction, bic=0.0) -> None:
        self.excess = np.asarray(excess, dtype=float)
        self.noise = np.asarray(noise, dtype=float)
        self.z = np.zeros(1)
        self.problem = self
        self.n_global = 1
        self.laws = ("brown-mcphee", "brown-mcphee")
        self.extras = ()
        self.bic = bic
        self._friction = np.asarray(friction, dtype=float)

    def friction_of(self, g):
        return self._friction.copy()


def test_a_pendulum_whose_hump_turned_over_is_moved_from_itself_though_drag_is_asked_for(
        monkeypatch):
    """Seed 4's capture 10 (bench_speed, realistic, no drag): the first fit left the
    pendulum 38 times above the noise with its transition at 1.6e-3 rad/s (truth 6.1e-2)
    and mu_s at 0.06 of mu_d, and drag's score test asked for drag first. A hump turned
    over is no rig's: the fit is moved from itself, the pendulum's transition at 0.1 and
    its hump at 1.5 (it reached the noise in 0.4 s; the cold restarts took 3.2 s)."""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.model import QUANTUM, quantisation_rms

    floor = quantisation_rms(QUANTUM)
    turned = [6e-4, 1.2e-3, 2e-4, 2e-3, 1.2e-3, 7e-5, 2e-4, 1.6e-3]
    starts = []

    def moved(m, prior, *, laws, extras, warm, friction, progress):
        starts.append(friction)
        return _FarFit([0.6, 0.6], warm.noise, friction, bic=-1e5)

    monkeypatch.setattr(select, "fit_shooting", moved)
    monkeypatch.setattr(select, "_refined_if_asked", lambda fit, m: fit)
    fit = _FarFit([1.4, 37.7], [floor, floor], turned)
    best = select._one_joint_restarted(SimpleNamespace(resolution_rad=None), None, fit,
                                       True, None)
    assert len(starts) == 1 and best.excess.max() <= select.AT_THE_NOISE
    (start,) = starts
    assert start[7] == 0.1 and start[5] == pytest.approx(1.5 * start[4])
    assert list(start[:4]) == turned[:4]  # the arm where the first fit put it


@pytest.mark.parametrize("case", ["both joints far", "a noisy record",
                                  "drag asked for, the hump standing"])
def test_a_first_fit_is_moved_from_itself_only_where_one_joint_alone_misses_the_noise(
        case, monkeypatch):
    """Where both joints are far off, the rig or both transitions are: moved from itself
    that first fit went nowhere (seed 4's captures 2 and 11, 115 and 43 times the noise).
    On a noisy record it stopped at 1.05-1.16 times the noise with the arm 8-60 % off
    (seed 1's noisy-sensor captures 12, 42, 47). A pendulum far off whose hump still stands
    where drag is asked for lacked drag, and no transition gave it (4 drag-and-cable
    captures of seed 1). Each first fit then goes to the cold restarts untouched."""
    import hilrig.identify.methods.estimator.furuta._select as select
    from hilrig.identify.model import QUANTUM, quantisation_rms

    floor = quantisation_rms(QUANTUM)
    humped = [6e-4, 1.2e-3, 2e-4, 3e-3, 4e-4, 8e-4, 2e-4, 8e-4]
    excess, noise, drag_first = {
        "both joints far": ([70.0, 16.0], [floor, floor], False),
        "a noisy record": ([10.8, 3.6], [5e-3, 5e-3], False),
        "drag asked for, the hump standing": ([1.1, 14.0], [floor, floor], True),
    }[case]

    def no_fit(*args, **kw):
        raise AssertionError("no fit is run")

    monkeypatch.setattr(select, "fit_shooting", no_fit)
    fit = _FarFit(excess, noise, humped)
    encoder_only = SimpleNamespace(resolution_rad=None)  # the quantum's noise floor
    assert select._one_joint_restarted(encoder_only, None, fit, drag_first, None) is fit
