"""The tilted Furuta pendulum model as shared/reference/model.md states it."""

import math

import numpy as np
import pytest

from hilrig.identify import (
    TABLE_III_TRUTH,
    FrictionParams,
    RigParams,
    friction,
    simulate,
    total_energy,
)
from hilrig.identify.model import acceleration, inverse_dynamics, mass_matrix


def test_frictionless_run_conserves_energy_to_1e9_over_10s():
    rig = RigParams(tilt_deg=10.0)
    _, states, energy = simulate(rig, FrictionParams.frictionless(),
                                 [0.3, math.radians(120), 0.5, -1.0], 10.0)
    assert states.shape == (100_001, 4)
    rel = np.max(np.abs(energy - energy[0])) / abs(energy[0])
    assert rel < 1e-9


def test_friction_dissipates_energy_monotonically():
    _, _, energy = simulate(RigParams(), TABLE_III_TRUTH, [0, math.radians(120), 0, 0], 5.0)
    assert np.all(np.diff(energy) <= 1e-12)
    assert energy[-1] < energy[0]


@pytest.mark.parametrize("v, with_viscous, without", [
    (0.0, 0.0, 0.0),
    (0.01, 0.094149641680082, 0.093649641680082),
    (0.05, 0.271045160985578, 0.268545160985578),
    (0.1, 0.304865859947813, 0.299865859947813),
])
def test_friction_matches_model_md_vectors(v, with_viscous, without):
    # Fn = 1, mu_s = 0.3, mu_d = 0.2, omega_t = 0.1, mu_v tanh(4 Fn / Fn_t) = 0.05
    assert friction(v, 1.0, 0.2, 0.3, 0.05, 0.1, 1e-9) == pytest.approx(with_viscous, abs=1e-14)
    assert friction(v, 1.0, 0.2, 0.3, 0.0, 0.1, 1e-9) == pytest.approx(without, abs=1e-14)


def test_friction_is_odd_and_peaks_at_mu_s_at_the_transition_velocity():
    v = np.linspace(-1, 1, 2001)
    f = friction(v, 2.0, 0.2, 0.3, 0.0, 0.1, 1.0)
    np.testing.assert_allclose(f, -f[::-1], atol=1e-15)
    # Stribeck bump r/(r^2/4+3/4)^2 is 1 at r = 1 (squared denominator, model.md)
    bump = friction(0.1, 1.0, 0.0, 1.0, 0.0, 0.1, 1.0)
    assert bump == pytest.approx(1.0, abs=1e-12)


def test_mass_matrix_includes_the_pendulum_mass_at_the_arm_tip():
    rig = RigParams()
    h11, h12, h22 = mass_matrix(rig.as_array(), 0.0)
    expected = rig.j1z + rig.m1 * rig.l1**2 + rig.m2 * rig.L1**2 + rig.j2z
    assert h11 == pytest.approx(expected, rel=1e-15)
    assert h12 == pytest.approx(-rig.m2 * rig.l2 * rig.L1, rel=1e-15)
    assert h22 == pytest.approx(rig.j2x + rig.m2 * rig.l2**2, rel=1e-15)


def test_hanging_pose_is_an_equilibrium_of_the_tilted_rig():
    rig = RigParams(tilt_deg=10.0).as_array()
    a0, a1 = acceleration(rig, TABLE_III_TRUTH.as_array(), 0.0, 0.0, 0.0, 0.0)
    assert abs(a0) < 1e-15 and abs(a1) < 1e-15


def test_potential_energy_is_lowest_at_the_hanging_pose():
    rig = RigParams(tilt_deg=10.0).as_array()
    e0 = total_energy(rig, 0.0, 0.0, 0.0, 0.0)
    for th0, th1 in [(0.1, 0), (-0.1, 0), (0, 0.1), (0.05, -0.2)]:
        assert total_energy(rig, th0, th1, 0.0, 0.0) > e0


def test_rig_defaults_are_table_i_with_static_normal_forces():
    rig = RigParams()
    assert (rig.m1, rig.m2, rig.L1, rig.tilt_deg) == (0.370, 0.128, 0.216, 10.0)
    assert rig.fn0 == pytest.approx((0.370 + 0.128) * 9.81)
    assert rig.fn1 == pytest.approx(0.128 * 9.81)


def test_friction_params_reject_unknown_or_negative_values():
    with pytest.raises(ValueError):
        FrictionParams(mu_d0=-1.0)
    with pytest.raises(ValueError):
        FrictionParams(mu_x=1.0)  # type: ignore[call-arg]


def test_normal_forces_follow_the_masses_unless_set():
    rig = RigParams().model_copy(update={"m2": 0.2})
    assert rig.fn1 == pytest.approx(0.2 * 9.81)
    assert RigParams(Fn1=3.0).fn1 == 3.0


def test_a_cable_spring_on_the_arm_stores_energy_and_conserves_it_without_friction():
    rig = RigParams(spring0=0.02, spring_rest0_deg=15.0)
    _, states, energy = simulate(rig, FrictionParams.frictionless(),
                                 [0.3, math.radians(120), 0.5, -1.0], 5.0)
    assert np.max(np.abs(energy - energy[0])) / abs(energy[0]) < 1e-9
    # the spring pulls the arm toward its rest angle: it moves the arm's mean angle
    _, plain, _ = simulate(RigParams(), FrictionParams.frictionless(),
                           [0.3, math.radians(120), 0.5, -1.0], 5.0)
    assert abs(states[:, 0].mean() - plain[:, 0].mean()) > 0.01


def test_air_drag_takes_c_abs_v_v_times_v_of_power_from_the_pendulum():
    rig = RigParams(drag1=5e-6)
    x = [0.0, math.radians(90), 0.0, 6.0]
    _, states, energy = simulate(rig, FrictionParams.frictionless(), x, 0.01,
                                 rate_hz=100_000.0)
    power = -np.gradient(energy, 1e-5)
    v1 = states[:, 3]
    np.testing.assert_allclose(power[5:-5], 5e-6 * np.abs(v1[5:-5]) ** 3, rtol=1e-3)


def test_inverse_dynamics_returns_friction_alone_when_the_rig_has_extra_terms():
    rig = RigParams(drag1=5e-6, spring0=0.02, spring_rest0_deg=-5.0)
    arr = rig.as_array()
    fr = TABLE_III_TRUTH.as_array()
    q = np.array([[0.2, 1.0], [-0.1, 2.0]])
    qd = np.array([[0.5, 3.0], [-0.2, -4.0]])
    qdd = np.array([acceleration(arr, fr, *q[k], *qd[k]) for k in range(2)])
    expected = np.array([[friction(qd[k, j], [rig.fn0, rig.fn1][j],
                                   *fr[5 * j:5 * j + 5]) for j in range(2)] for k in range(2)])
    np.testing.assert_allclose(inverse_dynamics(arr, q, qd, qdd), expected, rtol=1e-9,
                               atol=1e-12)
