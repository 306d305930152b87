"""The recommended estimator (grey-box): the issue's bar on the public case, honest intervals."""

import sys
from pathlib import Path

import pytest

from identify import PARAM_NAMES, TABLE_III_TRUTH, identify

TRUTH = dict(zip(PARAM_NAMES, TABLE_III_TRUTH.as_array()))


@pytest.fixture(scope="module")
def result(table3_measurement):
    return identify(table3_measurement, method="grey-box")


def test_fit_is_at_least_99_9_percent_on_both_joints(result):
    assert min(result.fit_percent.values()) >= 99.9


@pytest.mark.parametrize("name", ["mu_d0", "mu_d1", "mu_v1"])
def test_key_parameters_within_1_percent(result, name):
    assert result.parameters[name].value == pytest.approx(TRUTH[name], rel=0.01)


def test_every_parameter_reported_identifiable_has_an_interval_containing_the_truth(result):
    reported = [n for n, p in result.parameters.items() if p.identifiable]
    assert {"mu_d0", "mu_v0", "mu_d1", "mu_v1"} <= set(reported)
    for name in reported:
        lo, hi = result.parameters[name].ci95
        assert lo <= TRUTH[name] <= hi, name


def test_transition_forces_are_not_identifiable(result):
    assert not result.parameters["Fn_t0"].identifiable
    assert not result.parameters["Fn_t1"].identifiable


def test_intervals_cover_the_truth_at_about_their_rate_over_other_truths_tilts_and_poses():
    """Measured, not assumed: over random truths, tilts and poses the Coulomb and viscous
    intervals cover 84-98 % (stated 95 %) and all reported-identifiable ones 80-87 %: the
    residuals are quantisation, not white Gaussian noise, and the Stribeck pair has
    near-equal minima. The bar below guards against anything worse."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
    try:
        from bench_coverage import coverage
    finally:
        sys.path.pop(0)
    out = coverage(n=8, seed=2, duration=15.0)
    main = [ok for name in ("mu_d0", "mu_v0", "mu_d1", "mu_v1")
            for ok in out["per_param"].get(name, [])]
    print(f"coverage: main {sum(main)}/{len(main)}, all identifiable {out['hits']}/{out['total']}")
    assert len(main) == 32  # the Coulomb and viscous terms are always identifiable
    assert sum(main) / len(main) >= 0.8
    assert out["hits"] / out["total"] >= 0.75
    assert out["worst_fit"] > 99.9
