"""Simulated captures: the model's free decay as the encoders record it (identify.signal)."""

import math

import numpy as np

from identify import TABLE_III_TRUTH, FrictionParams, RigParams, simulate
from identify.model import QUANTUM
from identify.signal import find_release, free_decay_counts, simulated_measurement


def test_counts_are_the_rounded_simulation_after_a_rest():
    rig = RigParams(tilt_deg=12.0)
    friction = FrictionParams(mu_d1=8e-4)
    counts = free_decay_counts(rig, friction, (5.0, -90.0), 1.0, rest_s=0.25)
    _, s, _ = simulate(rig, friction, [math.radians(5.0), math.radians(-90.0), 0, 0], 1.0)
    assert counts.dtype == np.int32 and counts.shape == (2500 + 10_001, 2)
    np.testing.assert_array_equal(counts[:2500], np.repeat(counts[2500:2501], 2500, axis=0))
    np.testing.assert_array_equal(counts[2500:], np.rint(s[:, :2] / QUANTUM))


def test_measurement_is_counts_times_the_quantum_with_its_resolution():
    m = simulated_measurement(RigParams(), TABLE_III_TRUTH, (0.0, 120.0), 2.0, rest_s=0.2,
                              capture_id="c")
    counts = free_decay_counts(RigParams(), TABLE_III_TRUTH, (0.0, 120.0), 2.0, rest_s=0.2)
    np.testing.assert_array_equal(m.angles, counts * QUANTUM)
    np.testing.assert_array_equal(m.sample_index, np.arange(counts.shape[0]))
    assert (m.rate_hz, m.resolution_rad, m.capture_id, m.rig) == (1e4, QUANTUM, "c", RigParams())
    rel = find_release(m)
    assert rel.at_rest and abs(rel.time_s - 0.2) < 1e-3
