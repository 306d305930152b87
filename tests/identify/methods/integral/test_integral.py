"""Integral-based identification (seed 004): recovery, constraints, continuity, the Furuta method.

Truth is simulated exactly (matrix exponential per step, the input linear between samples,
which is also what the trapezoidal integrals assume). Noise levels used: white noise of
5e-4 rad on a 1 rad free decay, and encoder quantisation of 2 pi / 40000 rad.
"""

import json
import math

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.stats import spearmanr

from hilrig.identify import PARAM_NAMES, TABLE_III_TRUTH, Measurement
from hilrig.identify.methods.integral import (
    METHOD,
    identify_integral,
    integral_identify,
    simulate_piecewise,
)
from hilrig.identify.model import QUANTUM, to_counts

H = 1e-3
T10 = np.arange(0.0, 10.0 + H / 2, H)
BOUNDS3 = np.array([0.0, 3.3, 6.6, 10.0])
C3, K3 = np.array([0.3, 0.5, 0.8]), np.array([25.0, 30.0, 20.0])


def simulate_lti(t, bounds, coefs, x0, b=0.0, u=None):
    """theta^(n) + coefs[0] theta^(n-1) + ... + coefs[-1] theta = b u, coefs per segment."""
    coefs = np.atleast_2d(np.asarray(coefs, dtype=float))
    order = coefs.shape[1]
    h = t[1] - t[0]
    u = np.zeros_like(t) if u is None else u
    phis = []
    for cf in coefs:
        m = np.zeros((order + 2, order + 2))
        m[:order - 1, 1:order] = np.eye(order - 1)
        m[order - 1, :order] = -cf[::-1]
        m[order - 1, order] = b
        m[order, order + 1] = 1.0
        phis.append(expm(m * h))
    seg = np.clip(np.searchsorted(bounds, t[:-1] + h / 2, side="right") - 1, 0, len(coefs) - 1)
    x = np.array(x0, dtype=float)
    out = np.empty(t.size)
    out[0] = x[0]
    for n in range(t.size - 1):
        z = phis[seg[n]] @ np.concatenate([x, [u[n], (u[n + 1] - u[n]) / h]])
        x = z[:order]
        out[n + 1] = x[0]
    return out


def companion(p, zeta, w):
    """a1, a2, a3 of (s + p)(s^2 + 2 zeta w s + w^2): a stable third-order system."""
    return [p + 2 * zeta * w, w * w + 2 * zeta * w * p, p * w * w]


def relerr(est, true):
    return np.max(np.abs(np.asarray(est) / np.asarray(true) - 1.0))


@pytest.fixture(scope="module")
def free3():
    return simulate_lti(T10, BOUNDS3, np.column_stack([C3, K3]), [1.0, 0.0])


# --- recovery -------------------------------------------------------------------------

def test_constant_free_decay_recovers_c_and_k_within_1_percent():
    th = simulate_lti(T10, [0, 10], [[0.4, 20.0]], [1.0, 0.0])
    fit = integral_identify(T10, th, constant=True)
    assert relerr(fit.coef[0], [0.4, 20.0]) < 0.01
    # the shared-parameter form over several segments (eqs. 64-66) agrees
    fit3 = integral_identify(T10, th, segments=3, constant=True)
    assert np.allclose(fit3.coef, fit3.coef[0]) and relerr(fit3.coef[0], [0.4, 20.0]) < 0.01


def test_piecewise_free_decay_recovers_every_segment_within_1_percent(free3):
    fit = integral_identify(T10, free3, segments=BOUNDS3)
    assert relerr(fit.c, C3) < 0.01 and relerr(fit.k, K3) < 0.01
    assert fit.joins.shape == (2, 3)
    # initial conditions of each piece: theta and theta' of the truth at T_i
    th, v = simulate_piecewise(T10, BOUNDS3, C3, K3, [1.0, 0.0])
    rows = fit.piece_first
    assert np.allclose(fit.initial_state[:, 0], th[rows], atol=1e-6)
    assert np.allclose(fit.initial_state[:, 1], v[rows], atol=1e-4)


def test_forced_response_recovers_c_k_and_b_within_1_percent():
    u = np.sin(2.0 * T10) + 0.5 * np.sign(np.sin(0.7 * T10))
    th = simulate_lti(T10, BOUNDS3, np.column_stack([C3, K3]), [0.2, 0.0], b=3.0, u=u)
    fit = integral_identify(T10, th, u=u, segments=BOUNDS3)
    assert relerr(fit.c, C3) < 0.01 and relerr(fit.k, K3) < 0.01
    assert fit.b == pytest.approx(3.0, rel=0.01)
    known = integral_identify(T10, th, u=u, segments=BOUNDS3, b_known=3.0)
    assert known.b == 3.0 and known.b_std is None
    assert relerr(known.c, C3) < 0.01 and relerr(known.k, K3) < 0.01


def test_equilibrium_offset_is_an_extra_constant():
    th = simulate_lti(T10, [0, 10], [[0.4, 20.0]], [0.5, 0.0]) + 0.3
    fit = integral_identify(T10, th, segments=2, offset=True)
    assert relerr(fit.c, [0.4, 0.4]) < 0.01 and relerr(fit.k, [20.0, 20.0]) < 0.01
    assert np.allclose(fit.equilibrium, 0.3, atol=1e-3)


def test_delay_model_recovers_its_coefficients_within_1_percent():
    a = np.array([companion(0.4, 0.05, 5.0), companion(0.5, 0.08, 5.5),
                  companion(0.45, 0.1, 6.0)])
    t = np.arange(0.0, 12.0 + H / 2, H)
    bounds = np.array([0.0, 4.0, 8.0, 12.0])
    u = np.sin(3.0 * t)
    th = simulate_lti(t, bounds, a, [1.0, 0.0, 0.0], b=20.0, u=u)
    fit = integral_identify(t, th, u=u, segments=bounds, model="delay")
    assert relerr(fit.a, a) < 0.01
    assert fit.b == pytest.approx(20.0, rel=0.01)
    # the constant (linear) delay model, free decay (eqs. 67-70)
    th0 = simulate_lti(T10, [0, 10], a[:1], [1.0, 0.0, 0.0])
    lin = integral_identify(T10, th0, model="delay", constant=True)
    assert relerr(lin.a[0], a[0]) < 0.01
    with pytest.raises(AttributeError):
        _ = lin.c


# --- constraints ----------------------------------------------------------------------

def test_positivity_holds_where_the_unconstrained_fit_goes_negative():
    # an undamped oscillator (c = 0) with noise of 1e-3 rad: this noise draw pulls the
    # unconstrained c below zero; eqs. 18/23 keep it positive
    th = simulate_piecewise(T10, [0, 10], [0.0], [25.0], [1.0, 0.0])[0]
    noisy = th + np.random.default_rng(1).normal(0, 1e-3, T10.size)
    free = integral_identify(T10, noisy, constrained=False)
    assert free.c[0] < 0
    fit = integral_identify(T10, noisy)
    assert fit.c[0] > 0 and fit.k[0] > 0
    assert "c_0 >= 1e-09" in fit.active
    assert math.isnan(fit.coef_std[0, 0])
    assert fit.k[0] == pytest.approx(25.0, rel=1e-3)


def test_lipschitz_constraints_hold_and_bind():
    a = np.array([companion(0.4, 0.05, 5.0), companion(0.5, 0.08, 5.5),
                  companion(0.45, 0.1, 6.0)])
    t = np.arange(0.0, 12.0 + H / 2, H)
    bounds = np.array([0.0, 4.0, 8.0, 12.0])
    u = np.sin(3.0 * t)
    th = simulate_lti(t, bounds, a, [1.0, 0.0, 0.0], b=20.0, u=u)
    gam = (0.01, 0.1, None)
    fit = integral_identify(t, th, u=u, segments=bounds, model="delay", lipschitz=gam)
    dt = np.diff(0.5 * (fit.boundaries[1:] + fit.boundaries[:-1]))
    for j in (0, 1):
        assert np.all(np.abs(np.diff(fit.a[:, j])) <= gam[j] * dt * (1 + 1e-9) + 1e-12)
    assert any(name.startswith("|a1_1 - a1_0|") for name in fit.active)
    assert np.all(fit.a > 0) and fit.b > 0


# --- continuity, noise, gaps ----------------------------------------------------------

def test_reconstruction_is_c0_continuous_at_the_joins(free3):
    noisy = free3 + np.random.default_rng(2).normal(0, 5e-4, T10.size)
    fit = integral_identify(T10, noisy, segments=6)
    assert fit.joins.shape == (5, 3)
    inside = np.abs(np.diff(fit.reconstructed))
    inside[fit.joins[:, 0]] = 0.0
    for row, p, q in fit.joins:
        assert fit.piece_end[p] == pytest.approx(fit.piece_theta0[q], abs=1e-10)
        # no step at the join beyond the ordinary sample-to-sample change
        assert abs(fit.reconstructed[row + 1] - fit.reconstructed[row]) <= inside.max()
    assert np.isfinite(fit.reconstructed).all()


def test_light_noise_and_encoder_quantisation_keep_1_percent(free3):
    noisy = free3 + np.random.default_rng(3).normal(0, 5e-4, T10.size)
    fit = integral_identify(T10, noisy, segments=BOUNDS3)
    assert relerr(fit.c, C3) < 0.01 and relerr(fit.k, K3) < 0.01
    assert fit.noise_std == pytest.approx(5e-4, rel=0.1)
    assert np.all(np.abs(fit.c - C3) < 4 * fit.coef_std[:, 0])
    counts = to_counts(free3) * QUANTUM
    fitq = integral_identify(T10, counts, segments=BOUNDS3)
    assert relerr(fitq.c, C3) < 0.01 and relerr(fitq.k, K3) < 0.01


def test_standard_deviations_match_the_scatter_over_noise_draws():
    t = np.arange(0.0, 5.0 + H / 2, H)
    bounds = [0.0, 2.5, 5.0]
    th = simulate_piecewise(t, bounds, [0.3, 0.6], [25.0, 30.0], [1.0, 0.0])[0]
    rng = np.random.default_rng(4)
    fits = [integral_identify(t, th + rng.normal(0, 1e-3, t.size), segments=bounds)
            for _ in range(40)]
    spread = np.std([f.coef for f in fits], axis=0)
    predicted = np.mean([f.coef_std for f in fits], axis=0)
    assert np.all((spread / predicted > 0.6) & (spread / predicted < 1.6))


def test_gaps_restart_the_integrals_and_break_the_continuity(free3):
    keep = np.ones(T10.size, bool)
    keep[1500:1550] = False  # inside segment 0
    keep[3300:3340] = False  # at the join T_1 = 3.3 s
    t, th = T10[keep], free3[keep]
    fit = integral_identify(t, th, segments=BOUNDS3)
    assert relerr(fit.c, C3) < 0.01 and relerr(fit.k, K3) < 0.01
    assert len(fit.piece_segment) == 4 and list(fit.piece_segment) == [0, 0, 1, 2]
    gap_rows = np.flatnonzero(np.diff(t) > 1.5 * H)
    for row, _, _ in fit.joins:  # every join lies inside a gap-free run
        assert row not in gap_rows and row - 1 not in gap_rows
    assert fit.joins.shape == (1, 3)


# --- building blocks and arguments ----------------------------------------------------

@pytest.mark.parametrize("c,k", [(0.5, 25.0), (10.0, 25.0), (12.0, 25.0)])
def test_simulate_piecewise_is_exact(c, k):
    t = np.arange(0.3, 4.0, 0.01)
    bounds = [0.0, 2.0, 4.0]
    th, v = simulate_piecewise(t, bounds, [c, 2 * c], [k, k / 2], [1.0, -0.5], t0=0.3,
                               equilibrium=[0.1, -0.2])
    phi = [expm(np.array([[0, 1], [-k, -c]]) * 0.01),
           expm(np.array([[0, 1], [-k / 2, -2 * c]]) * 0.01)]
    x = np.array([0.9, -0.5])  # theta - theta_eq at t0
    ref = []
    for tt in t:
        ref.append(x[0])
        x = phi[0 if tt < 2.0 - 1e-9 else 1] @ x
        if abs(tt + 0.01 - 2.0) < 1e-9:  # crossing the join: the equilibrium moves
            x = x + np.array([0.1 + 0.2, 0.0])
    eq = np.where(t < 2.0 - 1e-12, 0.1, -0.2)
    assert np.allclose(th - eq, ref, atol=1e-10)


@pytest.mark.parametrize("kw", [dict(model="fourth"), dict(segments=0),
                                dict(segments=[0.0, 1e-5, 10.0]), dict(lipschitz=(1.0,))])
def test_bad_arguments_raise(free3, kw):
    with pytest.raises(ValueError):
        integral_identify(T10, free3, **kw)


# --- the Furuta method on the public case ---------------------------------------------

@pytest.fixture(scope="module")
def furuta(table3_measurement):
    return identify_integral(table3_measurement)


def test_furuta_result_names_the_method_and_no_brown_mcphee_values(furuta):
    assert furuta.method == METHOD == "integral"
    assert list(furuta.parameters) == list(PARAM_NAMES)
    for p in furuta.parameters.values():
        assert p.identifiable is False and p.value is None and p.ci95 is None
        assert "equivalent linear damping and stiffness" in p.note
    doc = json.loads(furuta.to_json())
    assert doc["method"] == "integral" and set(doc["fit_percent"]) == {"arm", "pendulum"}
    with pytest.raises(ValueError):
        furuta.friction_params()  # nothing to simulate the full model with


def test_furuta_table_per_joint(furuta):
    for joint in ("arm", "pendulum"):
        rows = furuta.diagnostics["joints"][joint]["segments"]
        assert len(rows) == 8
        for a, b in zip(rows, rows[1:]):
            assert a["t_end_s"] == b["t_start_s"]
        for r in rows:
            assert r["t_start_s"] < r["t_end_s"] and r["amplitude_rad"] > 0
            assert r["c_1_s"] > 0 and r["k_1_s2"] > 0
            assert r["damping_ratio"] == pytest.approx(r["c_1_s"] / (2 * math.sqrt(r["k_1_s2"])))


def test_furuta_fit_is_reported_per_joint(furuta, table3_measurement):
    fit = furuta.fit_percent
    assert fit["pendulum"] > 90.0
    # the arm is driven by the pendulum through the coupling: a decoupled second-order
    # model cannot follow it, and the fit says so rather than hiding it
    assert math.isfinite(fit["arm"]) and fit["arm"] < fit["pendulum"]
    for joint in ("arm", "pendulum"):
        assert furuta.diagnostics["joints"][joint]["fit_percent"] == fit[joint]
        assert furuta.diagnostics["joints"][joint]["reconstruction_fit_percent"] > 90.0
    m = table3_measurement
    assert furuta.normalized_compute_time == pytest.approx(
        furuta.compute_seconds / (m.duration_s * m.rate_hz))


def test_equivalent_damping_grows_as_the_amplitude_decays(furuta):
    for joint in ("arm", "pendulum"):
        rows = furuta.diagnostics["joints"][joint]["segments"]
        c = np.array([r["c_1_s"] for r in rows])
        amp = np.array([r["amplitude_rad"] for r in rows])
        assert c[np.argmin(amp)] == c.max(), joint
        assert c[4:].mean() > 1.3 * c[:4].mean(), joint


def test_pendulum_damping_follows_the_coulomb_describing_function(table3_measurement):
    # c_eq = c_v + 4 f_c / (pi omega A): with Coulomb friction the equivalent damping rises
    # as 1/A; f_c is the Coulomb torque per unit inertia, mu_d1 Fn1 / (j2x + m2 l2^2)
    res = identify_integral(table3_measurement, segments=16)
    pend = res.diagnostics["joints"]["pendulum"]
    c = [r["c_1_s"] for r in pend["segments"]]
    amp = [r["amplitude_rad"] for r in pend["segments"]]
    assert spearmanr(c, amp)[0] < -0.9
    rig = table3_measurement.rig
    f_c = TABLE_III_TRUTH.mu_d1 * rig.fn1 / (rig.j2x + rig.m2 * rig.l2 ** 2)
    assert pend["describing_function"]["coulomb_per_inertia"] == pytest.approx(f_c, rel=0.2)


def test_furuta_method_skips_lost_samples(table3_measurement, furuta):
    m = table3_measurement
    keep = np.ones(m.angles.shape[0], bool)
    keep[100_000:100_200] = False  # 20 ms lost in mid-decay
    lossy = Measurement(angles=m.angles[keep], sample_index=m.sample_index[keep],
                        rate_hz=m.rate_hz, rig=m.rig, resolution_rad=m.resolution_rad)
    res = identify_integral(lossy)
    assert res.lost_samples == 200
    assert res.fit_percent["pendulum"] == pytest.approx(furuta.fit_percent["pendulum"], abs=2.0)
