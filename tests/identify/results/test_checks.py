"""A result is fit to keep when its numbers are finite and its friction is a friction."""

from __future__ import annotations

import math

import pytest

from hilrig.identify import PARAM_NAMES, IdentificationResult, ParameterEstimate, result_problems
from hilrig.identify.results import Response


def _result(**changes) -> IdentificationResult:
    params = {n: ParameterEstimate(value=1e-3, ci95=(0.9e-3, 1.1e-3), identifiable=True)
              for n in PARAM_NAMES}
    params.update(changes.pop("parameters", {}))
    fields = dict(method="regression", parameters=params,
                  fit_percent={"arm": 99.0, "pendulum": 98.0}, compute_seconds=0.5,
                  normalized_compute_time=1e-6, capture_seconds=30.0, sample_rate_hz=1e4,
                  samples=300_001, tilt_deg=10.0)
    return IdentificationResult(**{**fields, **changes})


def test_a_sound_result_has_no_problem_nor_does_an_estimate_whose_interval_reaches_zero():
    assert result_problems(_result()) == []
    # an unconstrained regression's small viscous term: negative, its interval spans zero
    regression = ParameterEstimate(value=-2e-6, ci95=(-8e-6, 4e-6), identifiable=True)
    assert result_problems(_result(parameters={"mu_v0": regression})) == []
    # not identifiable: no value asserted; the range the data allow may lie below zero
    unresolved = ParameterEstimate(value=None, ci95=(-5e-4, -1e-4), identifiable=False,
                                   assumed=0.0)
    assert result_problems(_result(parameters={"mu_v0": unresolved})) == []
    # a chain rig's joint friction and standard parameters: only the friction is bounded
    chain = {"Fc1": ParameterEstimate(value=0.02, ci95=(0.01, 0.03), identifiable=True),
             "kappa1": ParameterEstimate(value=-0.15, ci95=(-0.16, -0.14), identifiable=True)}
    assert result_problems(_result(rig_kind="single", parameters=chain)) == []


@pytest.mark.parametrize("estimate, problem", [
    (ParameterEstimate(value=-5.0, ci95=(-5.1, -4.9), identifiable=True), "below zero"),
    (ParameterEstimate(value=-5.0, identifiable=True), "below zero"),
    (ParameterEstimate(value=math.nan, identifiable=True), "not a finite number"),
    (ParameterEstimate(value=1.0, ci95=(0.5, math.inf), identifiable=True), "not a finite"),
    (ParameterEstimate(value=None, identifiable=False, assumed=-math.inf), "not a finite"),
    (ParameterEstimate(value=1.0, ci95=(2.0, 0.5), identifiable=True), "inverted"),
])
def test_a_friction_coefficient_not_finite_or_below_zero_is_a_problem(estimate, problem):
    problems = result_problems(_result(parameters={"mu_d0": estimate}))
    assert len(problems) == 1 and problem in problems[0] and "mu_d0" in problems[0]


def test_figures_and_the_response_must_be_finite_and_whole():
    assert "compute_seconds" in result_problems(_result(compute_seconds=math.inf))[0]
    assert "out of range" in result_problems(_result(samples=0))[0]
    assert "percentage" in result_problems(_result(fit_percent={"arm": 250.0}))[0]
    ragged = Response(joints=["arm"], t_s=[0.0, 0.1], measured=[[0.0]], simulated=[[0.0, 1.0]])
    assert "unequal" in result_problems(_result(response=ragged))[0]
    nan = Response(joints=["arm"], t_s=[0.0, None], measured=[[0.0, math.nan]],
                   simulated=[[0.0, None]])
    assert "not finite" in result_problems(_result(response=nan))[0]


def test_a_result_wrong_in_many_ways_says_five_and_how_many_more():
    bad = {n: ParameterEstimate(value=math.nan, identifiable=True) for n in PARAM_NAMES}
    problems = result_problems(_result(parameters=bad))
    assert len(problems) == 6 and problems[-1] == "and 5 more"
