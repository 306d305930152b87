"""Single and n-link rigs: one pipeline identifies real measured swings better than the
builders' published parameters do on held-out data, and recovers simulated rigs whose
friction, tilt and encoders it is not told."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hilrig.identify import (
    ChainParams,
    ChainRig,
    Record,
    identify_chain,
    result_params,
    validate_chain,
)
from hilrig.identify.methods.estimator import STRIBECK_NOTE
from hilrig.identify.model import Realism, inertial_names
from hilrig.identify.seeds import lab_chain
from hilrig.identify.signal import chain_record

DATA = Path(__file__).parents[3] / "data" / "multiarm"
#: held-out fits may fall below the published set's by no more than this (percentage points)
MARGIN = 0.02


def _record(name: str) -> Record:
    d = np.loadtxt(DATA / name, delimiter=",", skiprows=1)
    return Record.from_times(d[:, 0], d[:, 1:])


def _compare(record: Record, rig: ChainRig, result, published: ChainParams,
             span: tuple[float, float], seg: float) -> None:
    ours = validate_chain(record, rig, result_params(result), span, seg)
    theirs = validate_chain(record, rig, published, span, seg)
    assert len(ours) == len(theirs) >= 2
    for a, b in zip(ours, theirs, strict=True):
        assert a["span"] == b["span"]
        for joint, fit in a["fit_percent"].items():
            assert fit >= b["fit_percent"][joint] - MARGIN, (a, b)


def test_real_single_pendulum_held_out_fits_beat_the_published_parameters():
    record = _record("single_pendulum_1khz.csv")
    rig = ChainRig(kind="single")
    result = identify_chain(record, rig, segment_s=9.167, exclude=[(36.668, 55.0)])
    published = ChainParams.physical([0.14758], [0.14775], [], [1.0912e-4], [2.2394e-4])
    _compare(record, rig, result, published, (36.668, 55.0), 9.167)
    # the ratio the data fix agrees with the published one to 0.5 %; the Coulomb torque the
    # published viscous-only model lacks comes with a finite interval above zero
    ratio = result.parameters["kappa1/nu1"]
    assert ratio.value == pytest.approx(published.normalised().inertial[0], rel=5e-3)
    fc = result.parameters["Fc1/nu1"]
    assert fc.identifiable and fc.ci95 is not None and 0 < fc.ci95[0] < fc.ci95[1]
    assert result.rig_kind == "single" and result.fit_percent["theta1"] > 99.9
    assert result.diagnostics["warnings"], "a real swing is not at the encoder noise floor"


def test_the_real_single_pendulums_transition_is_the_same_from_any_start(monkeypatch):
    """v_t once stayed where its fit started (0.01 -> 0.010, 0.05 -> 0.050; from 0.3 the
    BIC was 2,325 lower): a law with Stribeck's terms whose fit stays above the noise is
    fitted again from other transitions, and the best kept, whatever the first start."""
    import hilrig.identify.methods.estimator.chain._fit as chain_fit
    record = _record("single_pendulum_1khz.csv")
    rig = ChainRig(kind="single")
    plain = chain_fit._next_start
    found = []
    for vt in (0.01, 0.3):
        def start_at(fit, law, vt=vt):
            params = plain(fit, law)
            laws = [law] if isinstance(law, str) else law
            if any("vt" in chain_fit.LAW_TERMS[x] for x in laws) \
                    and not any("vt" in t for t in fit.problem.joint_terms):
                params.friction[:, 2] = vt
            return params

        monkeypatch.setattr(chain_fit, "_next_start", start_at)
        r = identify_chain(record, rig, segment_s=9.167, exclude=[(36.668, 55.0)])
        found.append((r.diagnostics["friction_law"], r.parameters["vt1"].assumed
                      or r.parameters["vt1"].value))
    (law_a, vt_a), (law_b, vt_b) = found
    assert law_a == law_b and vt_a == pytest.approx(vt_b, rel=1e-3)


def test_real_double_pendulum_held_out_fits_beat_the_published_parameters():
    record = _record("double_pendulum_1khz.csv")
    rig = ChainRig(kind="nlink:2")
    result = identify_chain(record, rig, exclude=[(69.342, 80.0)])
    published = ChainParams.physical([0.093844, 0.137596], [0.108565, 0.116779], [0.172719],
                                     [4.3753e-4, 1.26883e-3], [2.3714e-4, 1.0e-5])
    _compare(record, rig, result, published, (69.342, 80.0), 2.667)
    for name in ("kappa1/mu12", "kappa2/mu12", "nu1/mu12", "nu2/mu12"):
        p = result.parameters[name]
        assert p.identifiable and p.ci95 is not None and np.all(np.isfinite(p.ci95))


REALISM = Realism(seed=3, jitter_counts=1, interpolation_counts=0.3, lost_frames=0.002)


@pytest.mark.parametrize("tilt", [0.0, 30.0])
def test_a_single_joint_in_a_tilted_plane_recovers_brown_mcphee_friction(tilt):
    rig = ChainRig(kind="single", tilt_deg=tilt, friction="brown-mcphee")
    true = lab_chain(1)
    result = identify_chain(chain_record(rig, true, [2.0, 0.1], 30.0, REALISM), rig)
    t = true.normalised()
    est = result.parameters
    assert est["kappa1/nu1"].value == pytest.approx(t.inertial[0], rel=0.01)
    for name, col in (("Fc1/nu1", 0), ("b1/nu1", 3)):
        assert est[name].value == pytest.approx(t.friction[0, col], rel=0.05), name
    # the Stribeck pair is estimated as closely, but reported as an estimate, as for every
    # rig kind: its local intervals are not trusted (estimator._verdict.STRIBECK_NOTE)
    for name, col in (("Fs1/nu1", 1), ("vt1", 2)):
        assert not est[name].identifiable and est[name].note == STRIBECK_NOTE
        assert est[name].assumed == pytest.approx(t.friction[0, col], rel=0.05), name
    # the Cramer-Rao bound of each parameter, relative, never wider than its interval
    crb = result.diagnostics["cramer_rao"]
    for name in ("kappa1/nu1", "Fc1/nu1", "b1/nu1"):
        lo, hi = est[name].ci95 or (0.0, 0.0)
        assert 0 < 1.959964 * crb[name] * abs(est[name].value) <= (hi - lo) / 2 * (1 + 1e-9)


def test_a_double_pendulum_recovers_its_standard_parameters_and_joint_friction():
    rig = ChainRig(kind="nlink:2", friction="brown-mcphee")
    true = lab_chain(2)
    result = identify_chain(chain_record(rig, true, [2.0, 2.0, 0.1, 0.1], 30.0, REALISM), rig)
    t = true.normalised()
    names = [n for n in inertial_names(2) if n != "mu12"]
    for k, name in enumerate(names):
        assert result.parameters[f"{name}/mu12"].value == pytest.approx(
            np.delete(t.inertial, 0)[k], rel=0.01)
    for i in range(2):
        for term, col in (("Fc", 0), ("b", 3)):
            assert result.parameters[f"{term}{i + 1}/mu12"].value == pytest.approx(
                t.friction[i, col], rel=0.05)
    # joint 2's Stribeck terms are resolved (on RK4 steps short enough at the reversals);
    # joint 1's trade along a valley, which their intervals show
    assert result.parameters["Fs2/mu12"].assumed == pytest.approx(t.friction[1, 1], rel=0.05)
    for name, true_value in (("Fs1/mu12", t.friction[0, 1]), ("vt1", t.friction[0, 2])):
        lo, hi = result.parameters[name].ci95 or (0.0, 0.0)
        assert lo < true_value < hi, (name, lo, hi)


def _auto_double(true: ChainParams):
    rig = ChainRig(kind="nlink:2")  # friction: auto
    return identify_chain(chain_record(rig, true, [2.0, 2.0, 0.1, 0.1], 20.0, REALISM), rig)


def test_the_pipeline_chooses_each_joints_law_and_fits_drag_only_where_its_score_test_asks():
    true = lab_chain(2)  # Brown-McPhee on both joints
    result = _auto_double(true)
    tried = result.diagnostics["models_tried"]
    [drag] = [m for m in tried if "not_fitted" in m]
    assert drag["law"] == "brown-mcphee-drag" and drag["score"] < 2 * np.log(20 * 500 * 2)
    assert result.parameters["cd1/mu12"].value is None  # not in the chosen law
    # joint 2's Stribeck pair is resolved; joint 1's trades along a valley (see above), so
    # the data choose Coulomb + viscous there, and its other terms still hold the truth
    assert result.diagnostics["friction_laws"] == {"theta1": "coulomb-viscous",
                                                   "theta2": "brown-mcphee"}
    [chosen] = [m for m in tried if m.get("chosen")]
    assert any(m["law"] == "brown-mcphee" and m["bic"] > chosen["bic"] for m in tried)
    assert "joint 1's chosen friction law (coulomb-viscous)" in result.parameters["vt1"].note
    t = true.normalised()
    for name, value in (("Fc1/mu12", t.friction[0, 0]), ("b1/mu12", t.friction[0, 3]),
                        ("Fs2/mu12", t.friction[1, 1]), ("vt2", t.friction[1, 2])):
        lo, hi = result.parameters[name].ci95 or (0.0, 0.0)
        assert lo < value < hi, (name, lo, value, hi)


def test_a_joint_without_a_stribeck_hump_ends_on_coulomb_and_viscous_alone():
    true = lab_chain(2)
    fr = true.friction.copy()
    fr[0, 1] = fr[0, 0]  # joint 1: mu_s = mu_d, no hump
    result = _auto_double(ChainParams(true.inertial, fr))
    assert result.diagnostics["friction_laws"] == {"theta1": "coulomb-viscous",
                                                   "theta2": "brown-mcphee"}
    assert result.diagnostics["friction_law"] == ("joint 1 coulomb-viscous, "
                                                  "joint 2 brown-mcphee")
    t = ChainParams(true.inertial, fr).normalised()
    assert result.parameters["Fc1/mu12"].value == pytest.approx(t.friction[0, 0], rel=0.01)
    assert result.parameters["b1/mu12"].value == pytest.approx(t.friction[0, 3], rel=0.01)


def test_a_triple_pendulum_let_go_by_a_trembling_hand_recovers_its_standard_parameters():
    rig = ChainRig(kind="nlink:3", friction="brown-mcphee")
    true = lab_chain(3)
    realism = REALISM.model_copy(update={"hand_tremor_rad": 0.002, "push_rad_s": (0.05, -0.1)})
    record = chain_record(rig, true, [2.0] * 3 + [0.0] * 3, 20.0, realism, rest_s=1.0)
    result = identify_chain(record, rig)
    t = true.normalised()
    names = [n for n in inertial_names(3) if n != "mu23"]
    assert len(names) == 8 and sum(1 for k in result.parameters if "/" in k) >= 8
    for k, name in enumerate(names):
        assert result.parameters[f"{name}/mu23"].value == pytest.approx(
            np.delete(t.inertial, 2)[k], rel=0.01), name
    for i in range(3):
        assert result.parameters[f"Fc{i + 1}/mu23"].value == pytest.approx(
            t.friction[i, 0], rel=0.05)
    assert all(s["span_s"][0] > 1.0 for s in result.diagnostics["segments"])  # after the hold


def test_a_record_with_the_wrong_number_of_joints_is_refused():
    rig = ChainRig(kind="nlink:2")
    record = chain_record(ChainRig(kind="single"), lab_chain(1), [1.0, 0.0], 2.0)
    with pytest.raises(ValueError, match="1 joint.*nlink:2 has 2"):
        identify_chain(record, rig)


def test_held_out_spans_never_enter_the_fit():
    rig = ChainRig(kind="single", friction="viscous")
    record = chain_record(rig, lab_chain(1), [2.0, 0.0], 12.0)
    result = identify_chain(record, rig, segment_s=3.0, exclude=[(6.0, 12.0)])
    spans = [s["span_s"] for s in result.diagnostics["segments"]]
    assert spans and all(hi < 6.0 for _, hi in spans)
    with pytest.raises(ValueError, match="holds no segment"):
        validate_chain(record, rig, lab_chain(1), (20.0, 30.0), 2.0)


def test_a_fit_whose_simulation_diverges_fails_instead_of_reporting_null_intervals(
        monkeypatch):
    """A noisy nlink:2 record of bench_chain_coverage got a regression start whose
    simulation diverged on every segment: no law moved from it (its Jacobian is zero), and
    the result reported every parameter identified with an interval of zero width. Now
    the fit fails, saying why (the CLI: one line, exit 1)."""
    import hilrig.identify.methods.estimator.chain._problem as chain_problem
    def diverged(self, z):
        return np.full(self.data.q.shape, np.nan)

    monkeypatch.setattr(chain_problem.ChainProblem, "simulate", diverged)
    rig = ChainRig(kind="single", friction="viscous")
    record = chain_record(rig, lab_chain(1), [2.0, 0.0], 6.0)
    with pytest.raises(FloatingPointError, match="simulation diverges"):
        identify_chain(record, rig)


def test_a_start_whose_coupling_outweighs_its_links_is_weakened_to_a_positive_mass():
    """A real chain has kappa_i kappa_j > mu_ij^2; a regression on noisy derivatives can
    give less, an M(q) indefinite near alignment whose simulation diverges."""
    from hilrig.identify.methods.estimator.chain import MASS_MARGIN, with_positive_mass
    from hilrig.identify.model import unpack_inertial

    lab = lab_chain(2).normalised()
    assert with_positive_mass(lab) is lab  # a real chain is left alone
    squeezed = ChainParams(np.concatenate([lab.inertial[:1], lab.inertial[1:] * 0.4]),
                           lab.friction * 0.4)
    fixed = with_positive_mass(squeezed)
    kappa, mu, nu = unpack_inertial(fixed.inertial, 2)
    assert kappa[0] * kappa[1] > mu[0, 1] ** 2
    q = np.linspace(-np.pi, np.pi, 181)
    for a in q:
        m = np.array([[kappa[0], mu[0, 1] * np.cos(a)], [mu[0, 1] * np.cos(a), kappa[1]]])
        d = 1 / np.sqrt(np.diag(m))
        assert np.linalg.eigvalsh(m * d[:, None] * d[None, :]).min() >= MASS_MARGIN - 1e-9
    # each link's own frequency (nu/kappa) and damping (friction/kappa) are kept
    kappa0, _, nu0 = unpack_inertial(squeezed.inertial, 2)
    assert np.allclose(nu / kappa, nu0 / kappa0)
    assert np.allclose(fixed.friction[:, [0, 3]] / kappa[:, None],
                       squeezed.friction[:, [0, 3]] / kappa0[:, None])


def test_a_noisy_double_pendulum_whose_regression_is_an_unstable_rig_is_still_fitted():
    """10 mrad of sensor noise at 1 kHz: seed 002's regression gives kappa1 kappa2 = 0.67
    mu12^2 (bench_chain_coverage's capture 10, 0.26, diverged on every segment); from the
    weakened coupling the standard parameters come out within 1 %, the Coulomb and
    viscous terms within 5 %."""
    rig = ChainRig(kind="nlink:2", friction="coulomb-viscous")
    p = lab_chain(2)
    fr = p.friction.copy()
    fr[:, 0] = fr[:, 1] = 2 * fr[:, 3]
    true = ChainParams(p.inertial, fr)
    record = chain_record(rig, true, [2.2, -2.0, 0.05, -0.05], 20.0,
                          Realism(seed=3, noise_rad=0.01), rest_s=1.0, rate_hz=1000.0)
    result = identify_chain(record, rig)
    t = true.normalised()
    truth = dict(zip([f"{k}/mu12" for k in inertial_names(2)], t.inertial, strict=True))
    truth |= {f"{term}{i + 1}/mu12": t.friction[i, c] for i in range(2)
              for term, c in (("Fc", 0), ("b", 3))}
    del truth["mu12/mu12"]
    for name, value in truth.items():
        tolerance = 0.05 if name.startswith(("Fc", "b")) else 0.01
        assert result.parameters[name].value == pytest.approx(value, rel=tolerance), name


def _drawn(name: str) -> tuple[ChainRig, ChainParams, Record]:
    """A record of bench_chain_coverage rebuilt from its own draws, kept to the digit in
    tests/data/bench_chain_draws.json: the rig, its true parameters and the record."""
    d = json.loads((DATA.parent / "bench_chain_draws.json").read_text())[name]
    rig = ChainRig(kind=d["kind"], tilt_deg=d.get("tilt_deg", 0.0))
    true = ChainParams(np.array(d["inertial"]), np.array(d["friction"]))
    record = chain_record(rig, true, d["x0"], 30.0, Realism(**d["realism"]), rest_s=1.0,
                          rate_hz=1000.0)
    return rig, true, record


def test_a_noisy_double_pendulum_whose_regression_is_unphysical_at_the_fit_rate_is_fitted():
    """6 mrad of sensor noise at 1 kHz (bench_chain_coverage's seed 2, capture 16): at the
    fit's 500 Hz seed 002's regression gave a negative static moment and the whole
    identification failed; at a lower rate its derivatives are quieter, the start physical,
    and the fit recovers the standard parameters within 1 %, Coulomb and viscous within
    5 %."""
    from hilrig.identify.methods.estimator._stages import decimated_runs
    from hilrig.identify.methods.estimator.chain._data import FIT_RATE_HZ, chain_regression_start

    rig, true, record = _drawn("seed 2 capture 16")
    with pytest.raises(ValueError, match="non-positive inertia"):  # the fit's rate alone
        chain_regression_start(*decimated_runs(record, (), FIT_RATE_HZ), rig)
    result = identify_chain(record, rig)
    t = true.normalised()
    names = [f"{k}/mu12" for k in inertial_names(2)]
    for name, value in zip(names, t.inertial, strict=True):
        if name != "mu12/mu12":
            assert result.parameters[name].value == pytest.approx(value, rel=0.01), name
    for i in range(2):
        for term, c in (("Fc", 0), ("b", 3)):
            name = f"{term}{i + 1}/mu12"
            assert result.parameters[name].value == pytest.approx(t.friction[i, c], rel=0.05)


def test_a_transition_escaped_below_every_start_on_a_noise_free_record_is_restarted():
    """A noise-free double pendulum (bench_chain_coverage's seed 2, capture 44) whose
    joint 1 v_t ran from its 0.05 start down to 1.4e-4 rad/s (truth 0.050): Fs1 +166 %,
    Fc1 and b1 0.4 % off with intervals missing by 30 and 20 sigma, the residuals under
    the quantum's floor, where their excess over the noise sees nothing. Restarted from
    0.3 rad/s, everything is within 0.1 % and the intervals hold the truth."""
    rig, true, record = _drawn("seed 2 capture 44")
    result = identify_chain(record, rig)
    t = true.normalised()
    assert result.parameters["vt1"].assumed == pytest.approx(t.friction[0, 2], rel=0.1)
    for name, value in (("Fc1/mu12", t.friction[0, 0]), ("b1/mu12", t.friction[0, 3])):
        est = result.parameters[name]
        assert est.value == pytest.approx(value, rel=1e-3), name
        assert est.ci95 is not None and est.ci95[0] <= value <= est.ci95[1], name


def test_drag_and_a_joint_without_its_hump_are_fitted_again_as_brown_mcphee():
    """Drag and a joint without its Stribeck hump can stand in for a transition the first
    Brown-McPhee fit missed: a simulated session's 30 s double-pendulum record (both
    joints Brown-McPhee, no drag) ended on drag and joint 1 without its hump, at 0.88
    times the noise with Fc1 +6.4 % and b1 -5.7 % on intervals of +-1.2 %. Here that law
    is fitted to a 10 s record of the same rig; from it, Brown-McPhee on both joints is
    fitted again, wins the BIC, and holds the truth."""
    import hilrig.identify.methods.estimator.chain._data as chain_data
    import hilrig.identify.methods.estimator.chain._fit as chain_fit
    from hilrig.identify.signal import simulated_chain_session

    rig = ChainRig(kind="nlink:2")
    session = simulated_chain_session(np.random.default_rng(100_003), rig, lab_chain(2), 10,
                                      8.0, duration=10.0)
    record = session.records[6]
    d, runs = chain_data.free_runs(record, rig)
    data, states = chain_data.chain_data(d, runs, rig, None, record.resolution_rad)
    t = session.params.normalised()
    stand_in = t.friction.copy()
    stand_in[0, 1] = stand_in[0, 0]  # joint 1 without its hump, drag on both
    stand_in[:, 4] = 1e-3
    laws = ("coulomb-viscous-drag", "brown-mcphee-drag")
    stuck = chain_fit.fit_law(data, states, ChainParams(t.inertial, stand_in), laws)
    fits: list = []
    best = chain_fit._stribeck_again(stuck, fits, [], lambda f, msg: None)
    assert best.problem.laws == ("brown-mcphee", "brown-mcphee") and best.bic < stuck.bic
    assert best.excess.max() < stuck.excess.max()
    for column in (0, 3):  # Fc and b of both joints
        got = best.params.friction[:, column]
        np.testing.assert_allclose(got, t.friction[:, column], rtol=5e-3)
    # the law it started from is kept where Brown-McPhee does not win: the test above
    # (a double pendulum whose joint 1 pair trades along a valley) keeps its laws


def test_drag_is_fitted_before_the_restarts_and_refinement_it_makes_moot():
    """A single pendulum with air drag (bench_chain_coverage's seed 1 capture 7: drag 1.8
    times the viscous torque at 3 rad/s, plane tilted 27.5 deg): Brown-McPhee without drag
    stays 39 times above the noise, and its score test says drag can win. Drag is fitted
    from that scouted fit at once, not after restarting Brown-McPhee from two more
    transitions and refining it (3.3 of the 10.3 s it took); the result is the same to
    the printed digit: drag chosen, the Coulomb, viscous and drag terms within 0.3 %."""
    rig, true, record = _drawn("seed 1 capture 7")
    steps: list[str] = []
    result = identify_chain(record, rig, progress=lambda _f, text: steps.append(text))
    assert result.diagnostics["friction_law"] == "brown-mcphee-drag"
    assert "refining brown-mcphee" not in steps  # the law drag replaced is left as scouted
    assert steps.index("fitting brown-mcphee-drag friction") < steps.index(
        "refining brown-mcphee-drag")
    t = true.normalised().friction[0]
    for name, truth in (("Fc1/nu1", t[0]), ("b1/nu1", t[3]), ("cd1/nu1", t[4])):
        assert result.parameters[name].value == pytest.approx(truth, rel=3e-3), name


def test_a_chosen_drag_law_above_the_noise_is_restarted_from_its_own_terms():
    """A single pendulum with a wide Stribeck transition and air drag (bench_chain_coverage's
    seed 2 capture 63: v_t 0.28 rad/s, Fs 2.1 times Fc). Drag's restarts start from the
    Brown-McPhee fit it joined, whose terms had taken drag's part: the refined drag law
    stayed 2.7 times above the noise with v_t 0.79, b at 0 and Fc +304 % on intervals of
    +-2 %. Restarted from its own terms at other transitions, it reaches the noise, and
    the Coulomb, viscous and drag terms come out within 1 %, their intervals holding the
    truth."""
    rig, true, record = _drawn("seed 2 capture 63")
    result = identify_chain(record, rig)
    assert result.diagnostics["friction_law"] == "brown-mcphee-drag"
    assert result.diagnostics["residual_over_noise"]["theta1"] < 1.5
    t = true.normalised().friction[0]
    for name, truth in (("Fc1/nu1", t[0]), ("b1/nu1", t[3]), ("cd1/nu1", t[4])):
        p = result.parameters[name]
        assert p.identifiable and p.value == pytest.approx(truth, rel=0.01), name
        assert p.ci95[0] <= truth <= p.ci95[1], name


def test_a_chosen_drag_law_without_a_hump_gets_the_humps_beside_its_drag():
    """A double pendulum with air drag whose joint 2 has a hump 2.3 times its Coulomb
    torque (bench_chain_coverage's seed 2 capture 8). Brown-McPhee with drag, fitted from
    the Brown-McPhee fit, traded joint 2's Coulomb term for viscous and lost to Coulomb +
    viscous with drag, which ended 17-18 times above the noise with Fc2 +62 % on an
    interval of +-5 %; Brown-McPhee fitted again without drag lost too. With the humps
    added beside the chosen fit's drag, every joint reaches the noise and its Coulomb,
    viscous and drag terms come out within 1 %, their intervals holding the truth."""
    rig, true, record = _drawn("seed 2 capture 8")
    result = identify_chain(record, rig)
    assert all(x < 1.5 for x in result.diagnostics["residual_over_noise"].values())
    t = true.normalised().friction
    for j in range(2):
        for term, col in (("Fc", 0), ("b", 3), ("cd", 4)):
            name = f"{term}{j + 1}/mu12"
            p = result.parameters[name]
            assert p.identifiable and p.value == pytest.approx(t[j, col], rel=0.01), name
            assert p.ci95[0] <= t[j, col] <= p.ci95[1], name
