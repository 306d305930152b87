"""Monte Carlo conditions: each adds one thing a rig or record has on top of the
realistic draw, which stays the same capture under every condition."""

from __future__ import annotations

import numpy as np
import pytest

from hilrig.identify import TABLE_III_TRUTH, RigParams
from hilrig.identify.signal import CONDITIONS, random_realistic_capture


def _draw(condition: str, seed: int = 4):
    return random_realistic_capture(np.random.default_rng(seed), RigParams(), TABLE_III_TRUTH,
                                    1.0, condition=condition)


def test_every_condition_keeps_the_realistic_rig_release_and_friction():
    base = _draw("realistic")
    for condition in CONDITIONS:
        cap = _draw(condition)
        assert cap.rig.tilt_deg == base.rig.tilt_deg and cap.rig.m1 == base.rig.m1
        np.testing.assert_array_equal(cap.release_state, base.release_state)
        assert cap.friction.mu_d0 == base.friction.mu_d0
        assert cap.friction.omega_t1 == base.friction.omega_t1


def test_each_condition_adds_what_it_names():
    base = _draw("realistic")
    table_v = _draw("table-v")
    assert table_v.measurement.rate_hz == 1000.0 and base.measurement.rate_hz == 10_000.0
    # white noise of 0.1 rad on top of the swing: sample-to-sample steps of 0.14 rad rms
    steps = np.diff(table_v.measurement.angles[:, 1])
    assert 0.1 < float(np.std(steps)) < 0.2
    sensor = np.diff(_draw("sensor").measurement.angles[:, 1])
    assert 1e-3 < float(np.std(sensor)) < 2e-2
    dragged = _draw("drag-cable").rig
    assert 1e-6 <= dragged.drag1 <= 3e-5 and 0 <= dragged.spring0 <= 5e-4
    assert base.rig.drag1 == 0 and base.rig.spring0 == 0
    for seed in range(8):
        f = _draw("no-hump", seed).friction
        flat = [f.mu_s0 == f.mu_d0, f.mu_s1 == f.mu_d1]
        assert any(flat)


def test_an_unknown_condition_is_refused():
    with pytest.raises(ValueError, match="condition 'windy'"):
        _draw("windy")
