"""The recommended estimator (grey-box): the issue's bar on the public case, honest intervals."""

import numpy as np
import pytest

from hilrig.identify import (
    PARAM_NAMES,
    TABLE_III_TRUTH,
    FrictionParams,
    RigParams,
    identify,
    simulated_measurement,
)

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
    out = coverage(n=8, seed=2, duration=15.0)
    main = [ok for name in ("mu_d0", "mu_v0", "mu_d1", "mu_v1")
            for ok in out["per_param"].get(name, [])]
    print(f"coverage: main {sum(main)}/{len(main)}, all identifiable {out['hits']}/{out['total']}")
    assert len(main) == 32  # the Coulomb and viscous terms are always identifiable
    assert sum(main) / len(main) >= 0.8
    assert out["hits"] / out["total"] >= 0.75
    assert out["worst_fit"] > 99.9


def coverage(n: int, seed: int, duration: float, method: str = "grey-box") -> dict:
    """Ideal captures (quantisation only) of random truths (x0.5-2 of Table III, mu_s =
    mu_d x1.05-1.6), tilts (5-20 deg) and releases (60-150 deg): how often each
    reported-identifiable interval holds its truth."""
    rng = np.random.default_rng(seed)
    hits = total = 0
    per_param: dict[str, list[int]] = {}
    worst_fit = 100.0
    for _ in range(n):
        truth = TABLE_III_TRUTH.as_array() * np.exp(rng.uniform(np.log(0.5), np.log(2.0), 10))
        truth[[4, 9]] = TABLE_III_TRUTH.as_array()[[4, 9]]
        truth[[1, 6]] = truth[[0, 5]] * rng.uniform(1.05, 1.6, 2)
        fr = FrictionParams.from_array(truth)
        rig = RigParams(tilt_deg=float(rng.uniform(5, 20)))
        pose = (float(rng.uniform(-20, 20)), float(rng.uniform(60, 150)) * rng.choice([-1, 1]))
        res = identify(simulated_measurement(rig, fr, pose, duration, rest_s=0.5), method=method)
        worst_fit = min(worst_fit, *res.fit_percent.values())
        for name, p in res.parameters.items():
            if p.identifiable and p.ci95 is not None:
                ok = int(p.ci95[0] <= getattr(fr, name) <= p.ci95[1])
                hits += ok
                total += 1
                per_param.setdefault(name, []).append(ok)
    return {"hits": hits, "total": total, "per_param": per_param, "worst_fit": worst_fit}
