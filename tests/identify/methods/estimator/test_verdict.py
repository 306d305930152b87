"""The identifiability rule every rig kind reports its parameters by: not identifiable,
an estimate, or identified, each with the interval and a reason."""

from __future__ import annotations

import math

import pytest

from hilrig.identify.methods.estimator import STRIBECK_NOTE, WALD_LOG_SD, WEAK_NOTE, Z95, judged


def test_a_well_held_value_is_identified_with_its_interval():
    log = judged(0.5, 0.05, log=True, note="mu")
    assert log.identifiable and log.value == 0.5 and log.note == "mu"
    assert log.ci95 == pytest.approx((0.5 * math.exp(-1.96 * 0.05), 0.5 * math.exp(1.96 * 0.05)))
    linear = judged(2.0, 0.1, log=False)
    assert linear.identifiable and linear.ci95 == pytest.approx((2 - Z95 * 0.1, 2 + Z95 * 0.1))


def test_a_log_fitted_value_beyond_the_wald_limit_is_an_estimate_not_identified():
    est = judged(0.5, WALD_LOG_SD * 1.5, log=True)
    assert not est.identifiable and est.value is None and est.assumed == 0.5
    assert est.note == WEAK_NOTE and est.ci95 is not None
    # a value the equations hold linearly keeps its interval up to the value's width
    assert judged(1.0, 0.4, log=False).identifiable


def test_the_kinds_caveat_makes_a_value_an_estimate():
    est = judged(0.05, 0.01, log=True, caveat=STRIBECK_NOTE)
    assert not est.identifiable and est.assumed == 0.05 and est.note == STRIBECK_NOTE


def test_a_value_the_data_cannot_tell_is_not_identifiable_whatever_the_caveat():
    wide = judged(0.05, 2.0, log=True, caveat=STRIBECK_NOTE)
    assert not wide.identifiable and "factor 10" in wide.note
    bound = judged(1e-5, 0.01, log=True, at_bound=True)
    assert "ran to its bound" in bound.note and bound.assumed == 1e-5


def test_a_torque_whose_interval_reaches_below_zero_is_indistinguishable_from_zero():
    est = judged(0.01, 0.02, log=False, nonnegative=True)
    assert not est.identifiable and est.ci95 is not None and est.ci95[0] == 0.0
    assert f"at most {0.01 + Z95 * 0.02:.3g}" in est.note
    signed = judged(0.01, 0.02, log=False)
    assert signed.ci95 is not None and signed.ci95[0] < 0 and "wider than the value" in signed.note


@pytest.mark.parametrize("log", [False, True])
def test_a_term_the_data_leave_unbounded_has_no_interval_and_its_result_reads_back(log):
    """An arm cable's rest angle on a simulated session's capture had an infinite
    variance: judged with it, its interval went into the JSON as null, and the result no
    longer read back."""
    from hilrig.identify import IdentificationResult, ParameterEstimate
    from hilrig.identify.model import PARAM_NAMES

    est = judged(2.84 if log else -2.84, math.inf, log=log)
    assert not est.identifiable and est.value is None
    if not log:  # (a log's interval is capped at a factor e^700, finite)
        assert est.ci95 is None and est.note.endswith("the data do not bound it")
    result = IdentificationResult(
        method="shooting", parameters={n: ParameterEstimate(value=1e-3, ci95=(9e-4, 1.1e-3),
                                                            identifiable=True)
                                       for n in PARAM_NAMES},
        rig={"spring_rest0": est}, fit_percent={"arm": 99.0, "pendulum": 99.0},
        compute_seconds=1.0, normalized_compute_time=1e-6, capture_seconds=35.0,
        sample_rate_hz=1e4, samples=350_000, tilt_deg=10.0)
    assert IdentificationResult.model_validate_json(result.to_json()) == result
