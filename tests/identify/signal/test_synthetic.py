"""Simulated captures: the model's free decay as the encoders record it (identify.signal)."""

import math

import numpy as np

from hilrig.identify import TABLE_III_TRUTH, RigParams, simulate
from hilrig.identify.model import QUANTUM
from hilrig.identify.signal import find_release, free_decay_counts, simulated_measurement


def test_counts_are_the_rounded_simulation_after_a_rest():
    rig = RigParams(tilt_deg=12.0)
    friction = TABLE_III_TRUTH.model_copy(update={"mu_d1": 8e-4})
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


# --- realistic captures: each knob does what a real rig does -------------------------------

from hilrig.identify.model import RIG_ERROR_FIELDS, Realism  # noqa: E402
from hilrig.identify.signal import realistic_capture  # noqa: E402


def _real(duration: float = 2.0, **knobs) -> object:
    return realistic_capture(RigParams(), TABLE_III_TRUTH, (0.0, 90.0), duration,
                             Realism(seed=3, **knobs), rest_s=0.5)


def test_with_every_knob_at_zero_a_realistic_capture_is_the_ideal_one():
    cap = _real()
    ideal = simulated_measurement(RigParams(), TABLE_III_TRUTH, (0.0, 90.0), 2.0, rest_s=0.5)
    assert Realism().ideal and not Realism(noise_rad=0.1).ideal
    np.testing.assert_array_equal(cap.measurement.angles, ideal.angles)
    assert cap.rig == RigParams() and cap.release_time_s == 0.5
    np.testing.assert_array_equal(cap.release_state, [0.0, math.radians(90.0), 0.0, 0.0])


def test_the_true_rig_departs_from_the_nominal_one_and_the_estimator_is_told_the_nominal():
    cap = _real(rig_error=0.1, tilt_error_deg=5.0, drag1=5e-6, spring0=0.01)
    ratios = [getattr(cap.rig, f) / getattr(RigParams(), f) for f in RIG_ERROR_FIELDS]
    assert all(0.9 <= r <= 1.1 for r in ratios) and len(set(ratios)) == len(ratios)
    assert abs(cap.rig.tilt_deg - 10.0) <= 5.0 and cap.rig.tilt_deg != 10.0
    assert (cap.rig.drag1, cap.rig.spring0) == (5e-6, 0.01)
    assert cap.measurement.rig == RigParams()


def test_a_hand_holds_the_rig_with_tremor_and_lets_go_with_a_push():
    cap = _real(hand_tremor_rad=0.005, push_rad_s=(0.05, -0.15))
    held = cap.measurement.angles[:5000, 1] - math.radians(90.0)
    assert 0.003 < held.std() < 0.008  # the pendulum trembles while held
    x0 = cap.release_state
    # the push, plus the tremor's velocity (5 mrad at 4-12 Hz: a few tenths of a rad/s)
    assert abs(x0[3] + 0.15) < 1.0 and x0[3] != -0.15
    assert abs(x0[1] - math.radians(90.0)) < 0.03


def test_the_same_seed_gives_the_same_capture_and_another_seed_another():
    knobs = {"rig_error": 0.05, "noise_rad": 1e-3, "hand_tremor_rad": 0.002}
    a, b = _real(**knobs), _real(**knobs)
    np.testing.assert_array_equal(a.measurement.angles, b.measurement.angles)
    c = realistic_capture(RigParams(), TABLE_III_TRUTH, (0.0, 90.0), 2.0,
                          Realism(seed=4, **knobs), rest_s=0.5)
    assert not np.array_equal(a.measurement.angles, c.measurement.angles)


def test_noise_jitter_and_interpolation_error_sit_on_the_counts():
    ideal = _real().measurement.angles
    noisy = _real(noise_rad=0.1).measurement.angles
    assert abs((noisy - ideal).std() - 0.1) < 0.005  # the seed's Table V noise
    jit = (_real(jitter_counts=2).measurement.angles - ideal) / QUANTUM
    assert set(np.unique(np.rint(jit))) == {-2, -1, 0, 1, 2}
    interp = (_real(interpolation_counts=0.3).measurement.angles - ideal) / QUANTUM
    assert 0 < np.abs(interp).max() <= 1.0 + 1e-9 and np.abs(interp).mean() < 0.5


def test_lost_frames_leave_gaps_of_whole_frames():
    m = _real(lost_frames=0.02).measurement
    steps = np.diff(m.sample_index)
    gaps = steps[steps > 1] - 1
    assert gaps.size > 10 and np.all(gaps % 10 == 0)
    assert 0.01 < m.lost_samples / (m.lost_samples + m.sample_index.size) < 0.03
