"""The pipeline the methods share: where a free decay starts, one rule for every method."""

from dataclasses import replace

import numpy as np
import pytest

from hilrig.identify import (
    TABLE_III_TRUTH,
    Measurement,
    RigParams,
    find_release,
    identify,
    simulated_measurement,
)
from hilrig.identify.methods import (
    decay_start_s,
    first_defined_state,
    prepare,
    release_state,
    run_uas,
)
from hilrig.identify.signal import decimate


@pytest.fixture(scope="module")
def at_rest() -> Measurement:
    return simulated_measurement(RigParams(), TABLE_III_TRUTH, duration=6.0, rest_s=0.3)


@pytest.fixture(scope="module")
def in_motion(at_rest) -> Measurement:
    """The same decay from 0.5 s after the release on: no rest, no release in the data."""
    keep = slice(8000, None)
    return Measurement(angles=at_rest.angles[keep], sample_index=at_rest.sample_index[keep],
                       rate_hz=at_rest.rate_hz, rig=at_rest.rig,
                       resolution_rad=at_rest.resolution_rad)


def test_a_capture_released_from_rest_starts_at_its_rest_pose(at_rest):
    rel = find_release(at_rest)
    start = release_state(rel)
    assert rel.at_rest and start is not None and start.at_rest
    assert start.t == rel.time_s == decay_start_s(at_rest, rel)
    np.testing.assert_array_equal(start.x0, [*rel.rest_angles, 0.0, 0.0])


def test_a_capture_in_motion_has_no_release_state(in_motion):
    rel = find_release(in_motion)
    assert not rel.at_rest and release_state(rel) is None
    assert decay_start_s(in_motion, rel) == in_motion.t[0]


def test_the_first_defined_state_skips_the_differentiators_edge(in_motion):
    d = decimate(in_motion, 0.0)
    start = first_defined_state(d)
    k = 25  # (N1 - 1) / 2 of the N1 = 51 differentiator
    assert np.isnan(d.v[k - 1]).all() and np.isfinite(d.v[k]).all()
    assert start.t == d.t[k] and not start.at_rest
    np.testing.assert_array_equal(start.x0, [*d.q[k], *d.v[k]])
    nowhere = first_defined_state(replace(d, v=np.full_like(d.v, np.nan)))
    assert nowhere.t == d.t[0]
    np.testing.assert_array_equal(nowhere.x0, [*d.q[0], 0.0, 0.0])


def test_every_method_starts_a_capture_at_rest_from_the_same_state(at_rest):
    start = release_state(find_release(at_rest))
    for method in ("regression", "uas"):
        res = identify(at_rest, method=method)
        assert res.diagnostics["initial_state"] == [float(x) for x in start.x0], method
        assert res.diagnostics.get("release_time_s", start.t) == start.t, method
    assert identify(at_rest, method="integral").diagnostics["release_time_s"] == start.t
    init = prepare(at_rest).init  # the output-error methods' start, refined by the fit
    assert init.at_rest and init.t0 == start.t
    np.testing.assert_array_equal(np.concatenate([init.q0, init.v0]), start.x0)


def test_in_motion_each_method_starts_from_its_own_first_state(in_motion):
    d = decimate(in_motion, float(in_motion.t[0]))
    first = first_defined_state(d)
    res = identify(in_motion, method="regression")
    assert res.diagnostics["initial_state"] == [float(x) for x in first.x0]
    assert res.diagnostics["release_time_s"] == first.t
    res = identify(in_motion, method="uas")
    assert res.diagnostics["initial_state"] == [float(x) for x in run_uas(in_motion).start_state]
    init = prepare(in_motion).init  # the fit starts at the first sample, velocity refined
    assert not init.at_rest and init.t0 == d.t[0]
    np.testing.assert_array_equal(init.q0, d.q[0])
    np.testing.assert_array_equal(init.v0, first.v)
