"""The recommended estimator's results of simulated sessions, put together: one session
per verdict (a steady rig, a viscous term rising 10 % over 8 h, one capture of a knocked
rig), each capture a realistic hand release of the same rig (identify.signal
.simulated_session). bench/bench_session_pooled.py runs many such sessions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hilrig.identify import identify, identify_pooled, pool_results
from hilrig.identify.model import RigParams
from hilrig.identify.reference import TABLE_III_TRUTH
from hilrig.identify.signal import simulated_session

CAPTURES, SPAN_H, DURATION_S, SEED = 5, 8.0, 10.0, 7


def _session(**kw):  # the same rig, friction and releases for every seed's draw
    return simulated_session(np.random.default_rng(SEED), RigParams(), TABLE_III_TRUTH,
                             CAPTURES, SPAN_H, duration=DURATION_S, **kw)


@pytest.fixture(scope="module")
def steady():
    s = _session()
    return s, [identify(c.measurement) for c in s.captures]


def test_a_steady_rig_is_no_drift(steady):
    s, results = steady
    for res in results:  # each capture's own error, the rig held: within its whole one
        own = res.diagnostics["within_rig_sd"]
        lo, hi = res.parameters["mu_d1"].ci95
        assert 0 < own["mu_d1"] < math.log(hi / lo) / (2 * 1.96)
    r = pool_results(results, s.hours)
    assert r.verdict == "no drift", r.summary
    for name in ("mu_d1", "mu_v1"):
        lo, hi = r.parameters[name].ci95
        assert lo < getattr(s.friction, name) < hi


def test_one_capture_of_a_knocked_rig_stands_out(steady):
    s, results = steady
    knocked = _session(outlier=2)  # the same draws; capture 2's mu_v1 x 1.3
    assert knocked.captures[3].measurement.angles.tobytes() == \
        s.captures[3].measurement.angles.tobytes()
    mixed = [*results[:2], identify(knocked.captures[2].measurement), *results[3:]]
    r = pool_results(mixed, s.hours)
    assert r.verdict == "captures disagree beyond a trend", r.summary
    assert [x.capture_id for x in r.drift.standouts] == ["session-02"]
    assert r.drift.without_standouts == "no drift"


def test_a_viscous_term_rising_10_percent_over_the_night_is_drift():
    s = _session(drift_per_hour={"mu_v1": 0.1 / SPAN_H})
    r = identify_pooled([c.measurement for c in s.captures], s.hours)
    assert r.verdict == "drift", r.summary
    assert [n for n, x in r.drift.slopes.items() if x.moved] == ["mu_v1"]
    lo, hi = r.drift.slopes["mu_v1"].ci95
    truth = 0.1 / SPAN_H / 1.05  # per hour, of the level at mid-session
    assert lo < truth < hi
    assert r.compute_seconds > 0


# -- a chain rig's night: the same three verdicts on a single pendulum ---------------------
CHAIN_DURATION_S = 20.0


def _chain_session(**kw):
    from hilrig.identify import ChainRig
    from hilrig.identify.seeds import lab_chain
    from hilrig.identify.signal import simulated_chain_session

    return simulated_chain_session(np.random.default_rng(SEED), ChainRig(kind="single"),
                                   lab_chain(1), CAPTURES, SPAN_H,
                                   duration=CHAIN_DURATION_S, **kw)


@pytest.fixture(scope="module")
def chain_steady():
    from hilrig.identify import identify_chain

    s = _chain_session()
    return s, [identify_chain(r, s.rig) for r in s.records]


def test_a_steady_chain_is_no_drift_and_its_friction_pooled_holds_the_truth(chain_steady):
    s, results = chain_steady
    r = pool_results(results, s.hours)
    assert r.verdict == "no drift", r.summary
    assert r.rig_kind == "single"
    truth = s.params.normalised().friction[0]
    for name, column in (("Fc1/nu1", 0), ("b1/nu1", 3)):
        lo, hi = r.parameters[name].ci95
        assert lo < truth[column] < hi, (name, truth[column], lo, hi)


def test_one_record_of_a_knocked_chain_stands_out(chain_steady):
    from hilrig.identify import identify_chain

    s, results = chain_steady
    knocked = _chain_session(outlier=2)  # the same draws; record 2's b1 x 1.3
    assert knocked.records[3].angles.tobytes() == s.records[3].angles.tobytes()
    mixed = [*results[:2], identify_chain(knocked.records[2], s.rig), *results[3:]]
    r = pool_results(mixed, s.hours)
    assert r.verdict == "captures disagree beyond a trend", r.summary
    assert [x.capture_id for x in r.drift.standouts] == ["session-02"]
    assert r.drift.without_standouts == "no drift"


def test_a_chains_viscous_term_rising_10_percent_over_the_night_is_drift():
    s = _chain_session(drift_per_hour={"b1": 0.1 / SPAN_H})
    r = identify_pooled(s.records, s.hours, rig=s.rig)
    assert r.verdict == "drift", r.summary
    assert [n for n, x in r.drift.slopes.items() if x.moved] == ["b1/nu1"]
    lo, hi = r.drift.slopes["b1/nu1"].ci95
    truth = 0.1 / SPAN_H / 1.05  # per hour, of the level at mid-session
    assert lo < truth < hi


def test_records_and_measurements_are_not_pooled_as_each_other(chain_steady, steady):
    s, _ = chain_steady
    with pytest.raises(ValueError, match="give the rig"):
        identify_pooled(s.records)
    with pytest.raises(ValueError, match="a Furuta measurement"):
        identify_pooled([c.measurement for c in steady[0].captures], rig=s.rig)
