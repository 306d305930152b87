"""A session's captures' results put together: the verdict (no drift, drift, captures that
stand out, not tested), the session's friction and rig with honest intervals, and the
captures left out with their reasons."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hilrig.identify import ParameterEstimate, pool_results

HOURS = np.linspace(0.0, 8.0, 10)
TRUTH = {"mu_d0": 5e-4, "mu_s0": 7e-4, "mu_v0": 2.5e-4, "omega_t0": 5e-3,
         "mu_d1": 6e-4, "mu_s1": 8e-4, "mu_v1": 2.5e-4, "omega_t1": 5e-3}


def test_captures_of_a_steady_rig_say_no_drift_and_give_one_friction_within_its_interval(night):
    r = pool_results(night(HOURS), HOURS, session_id="s1")
    assert r.verdict == "no drift"
    assert r.summary.startswith("no drift over 10 captures")
    for name in ("mu_d0", "mu_v0", "mu_d1", "mu_v1"):
        p = r.parameters[name]
        assert p.identifiable and p.ci95[0] < TRUTH[name] < p.ci95[1]
    assert set(r.drift.slopes) == {"mu_d0", "mu_v0", "mu_d1", "mu_v1"}
    assert not any(s.moved for s in r.drift.slopes.values())
    assert r.schema_ == "hilrig.session-result/1"


def test_a_viscous_term_rising_10_percent_is_drift_with_its_slope_and_interval(night):
    r = pool_results(night(HOURS, drift={"mu_v1": 0.0125}), HOURS)
    assert r.verdict == "drift"
    moved = {n for n, s in r.drift.slopes.items() if s.moved}
    assert moved == {"mu_v1"}
    s = r.drift.slopes["mu_v1"]
    # per hour as a fraction of the level at mid-session: 0.0125 / 1.05
    assert s.ci95[0] < 0.0125 / 1.05 < s.ci95[1]
    assert s.over_session == pytest.approx(0.1, abs=0.01)
    assert "mu_v1 +1.2 %/h" in r.summary
    # the session's value of a level that moved: its line at mid-session
    assert r.parameters["mu_v1"].value == pytest.approx(TRUTH["mu_v1"] * 1.05, rel=0.005)


def test_one_capture_off_by_30_percent_stands_out_and_the_others_are_judged_without_it(night):
    r = pool_results(night(HOURS, outlier=6), HOURS)
    assert r.verdict == "captures disagree beyond a trend"
    assert [s.capture_id for s in r.drift.standouts] == ["c06"]
    assert r.drift.standouts[0].departure["mu_v1"] == pytest.approx(0.3, abs=0.02)
    assert r.drift.without_standouts == "no drift"
    assert "c06 stand out; without them, no drift" in r.summary
    # the session's friction leaves the capture that stands out aside
    p = r.parameters["mu_v1"]
    assert p.ci95[0] < TRUTH["mu_v1"] < p.ci95[1]


def test_a_capture_whose_own_fit_is_inadequate_is_left_out_and_named(night, capture_result):
    results = night(HOURS)
    results[3] = capture_result(3, TRUTH, excess=2.4)
    r = pool_results(results, HOURS)
    left = [c for c in r.captures if not c.included]
    assert [c.capture_id for c in left] == ["c03"]
    assert "2.4 times the noise" in left[0].reason
    assert "left out (fit inadequate): c03" in r.summary
    assert r.summary.startswith("no drift over 9 captures")


def test_two_captures_are_pooled_but_not_tested(night):
    r = pool_results(night(HOURS[:2]), HOURS[:2])
    assert r.verdict == "not tested"
    assert r.parameters["mu_d0"].identifiable
    assert r.drift.slopes == {}


def test_pooling_narrows_what_the_data_fix_and_keeps_what_every_capture_shares(night):
    """The tilt (the data's alone) narrows about sqrt(10); the friction's interval keeps
    the rig's scale, which the same weighed masses set for every capture."""
    results = night(HOURS)
    r = pool_results(results, HOURS)
    one_tilt = np.diff(results[0].rig["tilt_deg"].ci95)[0]
    assert np.diff(r.rig["tilt_deg"].ci95)[0] < one_tilt / 2.5
    lo, hi = r.parameters["mu_d1"].ci95
    one_lo, one_hi = results[0].parameters["mu_d1"].ci95
    assert math.log(hi / lo) > 0.9 * math.log(one_hi / one_lo) * 0.006 / math.hypot(0.001, 0.006)


def test_results_of_several_methods_or_a_covariate_of_another_length_are_refused(night):
    results = night(HOURS[:3])
    other = results[2].model_copy(update={"method": "grey-box"})
    with pytest.raises(ValueError, match="one method"):
        pool_results([*results[:2], other], HOURS[:3])
    with pytest.raises(ValueError, match="one finite value per result"):
        pool_results(results, HOURS[:2])


def test_a_session_result_reads_back_from_its_json_and_prints_every_capture(night):
    from hilrig.identify import SessionResult

    r = pool_results(night(HOURS, drift={"mu_v1": 0.0125}), HOURS, session_id="night")
    again = SessionResult.model_validate_json(r.to_json())
    assert again == r
    text = str(r)
    assert text.startswith("session night: drift over 10 captures")
    assert text.count("\n  c0") == 10
    assert "mu_v1     +1.2 %/h" in text


def test_a_term_only_some_captures_chose_is_pooled_over_those_that_have_it(night,
                                                                           capture_result):
    """Each capture's data choose its extra terms: air drag in a few captures and not in
    the first is the session's too, said to be identified in those few; a term in most
    of them is pooled over them; one only a capture left out chose is not the session's.
    (A session whose first capture, left out, had drag ended in a KeyError.)"""
    results = night(HOURS)

    def with_drag(r, value):
        drag = ParameterEstimate(value=value, ci95=(value * 0.98, value * 1.02),
                                 identifiable=True, note="N m s^2; a term the diagnostics chose")
        return r.model_copy(update={"rig": {**r.rig, "drag1": drag}})

    some = [with_drag(r, 2e-6) if k in (4, 7) else r for k, r in enumerate(results)]
    r = pool_results(some, HOURS)
    assert r.verdict == "no drift"
    assert not r.rig["drag1"].identifiable
    assert r.rig["drag1"].note.startswith("identified in 2 of 10 captures")
    most = [with_drag(r, 2e-6) if k else r for k, r in enumerate(results)]
    pooled = pool_results(most, HOURS).rig["drag1"]
    assert pooled.identifiable and pooled.ci95[0] < 2e-6 < pooled.ci95[1]
    assert "pooled over 9 captures" in pooled.note
    inadequate = with_drag(capture_result(0, TRUTH, excess=2.4), 2e-6)
    alone = pool_results([inadequate, *results[1:]], HOURS)
    assert "drag1" not in alone.rig and alone.summary.startswith("no drift over 9 captures")
