"""The Furuta "regression" method: friction from inverse dynamics by linear least squares."""

import json

import numpy as np
import pytest

from hilrig.identify import PARAM_NAMES, TABLE_III_TRUTH, IdentificationResult
from hilrig.identify.methods import REGRESSION as METHOD
from hilrig.identify.methods import (
    JointRegression,
    identify_regression,
    regression_estimate,
    reversal_mask,
)
from hilrig.identify.signal import decimate

TRUTH = dict(zip(PARAM_NAMES, TABLE_III_TRUTH.as_array()))


def test_reversal_mask_covers_guard_samples_either_side():
    v = np.concatenate([np.ones(100), -np.ones(100)])
    near = reversal_mask(v, 10)
    assert near[89:111].all() and not near[:89].any() and not near[111:].any()


# --- the Furuta regression method on the public case --------------------------------------

@pytest.fixture(scope="module")
def regression_result(table3_measurement) -> IdentificationResult:
    return identify_regression(table3_measurement)


@pytest.mark.parametrize("name", ["mu_d0", "mu_d1", "mu_v1"])
def test_key_parameters_within_2_percent_and_intervals_hold_the_truth(regression_result, name):
    p = regression_result.parameters[name]
    assert p.identifiable
    assert p.value == pytest.approx(TRUTH[name], rel=0.02)
    lo, hi = p.ci95
    assert lo <= TRUTH[name] <= hi
    assert lo < p.value < hi


def test_result_validates_as_identification_result(regression_result):
    doc = json.loads(regression_result.to_json())
    again = IdentificationResult.model_validate(doc)
    assert doc["method"] == METHOD == "regression" == again.method
    assert list(doc["parameters"]) == list(PARAM_NAMES)
    assert set(doc["fit_percent"]) == {"arm", "pendulum"}
    assert regression_result.compute_seconds > 0
    assert regression_result.normalized_compute_time > 0
    regression_result.friction_params()  # every parameter has a value or an assumed value


@pytest.mark.parametrize("name", ["mu_s0", "omega_t0", "Fn_t0", "mu_s1", "omega_t1", "Fn_t1"])
def test_parameters_outside_the_linear_model_are_reported_not_identifiable(regression_result,
                                                                          name):
    p = regression_result.parameters[name]
    assert p.identifiable is False and p.value is None and p.ci95 is None
    assert "not identifiable" in p.note
    assert p.assumed is not None and p.assumed > 0


def test_diagnostics_carry_the_seed_002_report(regression_result):
    d = regression_result.diagnostics
    assert 1 < d["condition_number"] < 1e3
    assert d["rank"] == 4
    assert set(d["relative_std_percent"]) == {"mu_d0", "mu_v0", "mu_d1", "mu_v1"}
    # the arm barely moves fast enough for its viscous term: the 10x rule says so
    assert d["poorly_identified"] == ["mu_v0"]
    assert "poorly identified" in regression_result.parameters["mu_v0"].note
    assert d["wls"]["weighted"] and not d["ols"]["weighted"]


def test_goodness_of_fit_of_the_linear_model(regression_result):
    assert regression_result.fit_percent["arm"] > 99.0
    assert regression_result.fit_percent["pendulum"] > 99.9


def test_ols_gives_the_same_estimates_and_ess_intervals_are_wider(table3_measurement,
                                                                  regression_result):
    ols = identify_regression(table3_measurement, weighted=False, ci="ess")
    assert ols.diagnostics["estimator"] == "OLS"
    for name in ("mu_d0", "mu_v0", "mu_d1", "mu_v1"):
        a, b = ols.parameters[name], regression_result.parameters[name]
        assert a.value == pytest.approx(b.value, rel=1e-9)
        assert (a.ci95[1] - a.ci95[0]) > (b.ci95[1] - b.ci95[0])


def test_grey_box_start_is_unchanged(table3_measurement):
    m = table3_measurement
    d = decimate(m, 0.5, 1000.0)
    arm, pend = regression_estimate(d, m.rig)
    assert isinstance(arm, JointRegression) and isinstance(pend, JointRegression)
    assert arm.mu_d == pytest.approx(TRUTH["mu_d0"], rel=0.02)
    assert pend.mu_d == pytest.approx(TRUTH["mu_d1"], rel=0.02)
    assert pend.points > 1000 and len(pend.std) == 2
