"""Seed 003's dc servomotor with Karnopp stick-slip friction, and its identification."""

import math

import numpy as np
import pytest

from hilrig.identify.seeds import (
    DEFAULT_MOTOR,
    SEED_003_ESTIMATE,
    SEED_003_TRUTH,
    SERVO_PARAM_NAMES,
    StickSlipParams,
    identify_servo,
    large_fast_input,
    paper_input_mix,
    servo_cost,
    servo_rhs,
    simulate_servo,
    small_slow_input,
)

# a private helper, deliberately: the compiled right-hand side the simulator runs on must
# agree with the readable one (servo_rhs) that states the seed's equations
from hilrig.identify.seeds._servo import _rhs_fast

TRUTH = SEED_003_TRUTH
# the seed's relative errors (sec. VI): J printed as 3.000e-3 (so < 0.5e-6 / 3e-3), B
# 1.199e-4, D_p 8.519e-2, T_s 9.995e-4
SEED_REL_ERR = {"J": 0.5e-6 / 3.0e-3, "B": 1e-7 / 1.2e-4, "D_p": 0.019 / 8.5,
                "T_s": 0.5e-6 / 1.0e-3}


@pytest.fixture(scope="module")
def mix_data():
    """The seed's input mix and the plant's output (shaft angle), noise-free."""
    mix = paper_input_mix()
    t = [m[0] for m in mix]
    u = [m[1] for m in mix]
    y = [simulate_servo(TRUTH, tj, uj)["theta"] for tj, uj in mix]
    return t, u, y


def test_seed_estimate_errors_are_what_the_brief_quotes():
    est, ref = SEED_003_ESTIMATE.as_array(), TRUTH.as_array()
    rel = np.abs(est - ref) / ref
    np.testing.assert_allclose(rel, [0.0, 8.3e-4, 2.24e-3, 5e-4], atol=5e-5)
    assert TRUTH.D_theta == pytest.approx(8.5e-2 / 3.0e-3)  # eq. (5)


def test_compiled_rhs_is_the_literal_eqs_1_to_5():
    mot = DEFAULT_MOTOR.as_array()
    par = TRUTH.as_array()
    K_a, K_t, K_b, L_m, R_m = mot
    J, B, D_p, T_s = par
    rng = np.random.default_rng(0)
    Ps = np.concatenate([rng.uniform(-0.3, 0.3, 300), [D_p, -D_p, np.nextafter(D_p, 0),
                                                        -np.nextafter(D_p, 0), 0.0]])
    for P in Ps:
        for i in (0.0, 0.01, T_s / K_t, -T_s / K_t, 0.5, -3.0):
            u = rng.uniform(-10, 10)
            # the seed's equations, written out in plain Python
            w = 0.0 if -D_p < P < D_p else P / J                            # (1)
            D_th = D_p / J                                                  # (5)
            T = K_t * i
            t_slip = 0.0 if -D_th < w < D_th else B * w                     # (3)
            t_stick_p = T if -D_th < w < D_th else 0.0                      # (4b)
            t_stick = min(max(t_stick_p, -T_s), T_s)                        # (4a)
            ref = (w, T - (t_slip + t_stick), (K_a * u - R_m * i - K_b * w) / L_m)
            got = servo_rhs(mot, par, u, P, i)
            fast = _rhs_fast(K_t, K_b, R_m, 1.0 / L_m, 1.0 / J, B, D_p, T_s, K_a * u, P, i)
            np.testing.assert_allclose(got, ref, rtol=1e-15, atol=1e-15)
            np.testing.assert_allclose(fast, ref, rtol=1e-12, atol=1e-12)


def test_shaft_sticks_exactly_under_small_input():
    t = np.arange(10_001) / 1000.0
    u = small_slow_input(t)
    s = simulate_servo(TRUTH, t, u)
    om, th = s["omega"], s["theta"]
    # the first pulse (1 V) holds the shaft while the momentum builds up to D_p
    first = np.flatnonzero(om != 0.0)[0]
    assert 0.9 < t[first] < 1.2
    assert np.all(om[:first] == 0.0) and np.all(th[:first] == 0.0)
    assert np.all(u[1:first] == 1.0)                     # under a non-zero input
    # it slips, stops in the pause and sticks again: a second exact-zero interval
    runs = np.flatnonzero(np.diff((om == 0.0).astype(int)))
    assert len(runs) >= 4
    t_stop, t_go = t[runs[1] + 1], t[runs[2] + 1]
    assert t_go - t_stop > 3.0
    seg = slice(runs[1] + 1, runs[2] + 1)
    assert np.all(om[seg] == 0.0) and np.ptp(th[seg]) == 0.0
    # Karnopp's NL1: the velocity is either exactly 0 or beyond the band, never between
    assert np.all((om == 0.0) | (np.abs(om) >= TRUTH.D_theta))
    # below breakaway (R_m T_s / (K_a K_t) = 12 mV) nothing ever moves, not even P
    s = simulate_servo(TRUTH, t[:5001], np.full(5001, 0.011))
    assert np.all(s["theta"] == 0.0) and np.all(s["P"] == 0.0) and np.all(s["omega"] == 0.0)


def test_creep_on_the_band_edge_is_the_filippov_sliding_motion():
    # B D_theta (3.4e-3 N m) > T_s (1e-3 N m): at 0.3 V after a breakaway the momentum is
    # trapped on P = D_p and the shaft creeps, chattering between stick and slip
    t = np.arange(4001) / 1000.0
    u = np.where(t < 1.5, 1.0, 0.3)
    s = simulate_servo(TRUTH, t, u)
    late = t >= 3.0
    assert np.max(np.abs(s["P"][late] - TRUTH.D_p)) < 1e-6
    om = s["omega"][late]
    assert 0.2 < np.mean(om == 0.0) < 0.8
    assert np.all((om == 0.0) | (om >= TRUTH.D_theta))
    speed = (s["theta"][-1] - s["theta"][3000]) / 1.0
    # Filippov: lambda (K_t i - B D_theta) + (1 - lambda)(K_t i - T_s) = 0, with the mean
    # current K_t i = K_t (K_a u - K_b lambda D_theta) / R_m
    m, p = DEFAULT_MOTOR, TRUTH
    lam = ((m.K_t * m.K_a * 0.3 / m.R_m - p.T_s)
           / (p.B * p.D_theta - p.T_s + m.K_t * m.K_b * p.D_theta / m.R_m))
    assert speed == pytest.approx(lam * p.D_theta, rel=0.03)


def test_slip_reaches_the_linear_steady_state():
    t = np.arange(20_001) / 1000.0      # 13 mechanical time constants
    s = simulate_servo(TRUTH, t, np.full(t.size, 5.0))
    m = DEFAULT_MOTOR
    w_ss = m.K_a * m.K_t * 5.0 / (m.R_m * TRUTH.B + m.K_t * m.K_b)
    assert s["omega"][-1] == pytest.approx(w_ss, rel=1e-4)
    assert not s["stuck"][-1]


def test_input_mix_has_small_slow_and_large_fast_parts():
    (ts, us), (tf, uf) = paper_input_mix()
    assert np.max(np.abs(us)) == 1.0 and np.max(np.abs(uf)) == pytest.approx(10.0, rel=1e-3)
    slow = simulate_servo(TRUTH, ts, us)
    fast = simulate_servo(TRUTH, tf, uf)
    assert np.mean(slow["stuck"]) > 0.6           # mostly stick-slip
    assert np.mean(fast["stuck"]) < 0.3           # mostly slipping, linear
    assert np.max(np.abs(fast["omega"])) > 3 * np.max(np.abs(slow["omega"]))
    np.testing.assert_array_equal(large_fast_input(tf), uf)


@pytest.mark.parametrize("start", [(1.5, 0.5, 1.5, 0.5), (0.5, 1.5, 0.5, 1.5)])
def test_reproduces_seed_003_from_a_start_50_percent_off(mix_data, start, capsys):
    t, u, y = mix_data
    fit = identify_servo(t, u, y, start=TRUTH.scaled(start))
    rel = fit.relative_errors(TRUTH)
    with capsys.disabled():
        print(f"\nstart truth x {start}: nfev {fit.nfev}, {fit.seconds:.1f} s, "
              f"cost {fit.cost:.1e}")
        for k in SERVO_PARAM_NAMES:
            print(f"  {k:4s} {getattr(fit, k):.6e}  rel err {rel[k]:.1e}  "
                  f"(seed {SEED_REL_ERR[k]:.1e})")
    assert fit.success, fit.message
    for k in SERVO_PARAM_NAMES:
        assert rel[k] <= SEED_REL_ERR[k], k     # at least as close as the seed
        assert rel[k] < 1e-4, k                  # and, in fact, much closer
    assert fit.D_theta == pytest.approx(fit.D_p / fit.J)
    assert fit.nfev < 4000


def test_nelder_mead_on_the_same_problem(mix_data, capsys):
    """scipy's Nelder-Mead from the same starting simplex stops early on this problem."""
    t, u, y = mix_data
    start = TRUTH.scaled((1.5, 0.5, 1.5, 0.5))
    nm = identify_servo(t, u, y, start=start, optimizer="nelder-mead")
    ms = identify_servo(t, u, y, start=start, maxfev=1500, restarts_at_optimum=0,
                        npoints=5, hanus=False)  # the seed's restart alone, n+1 points
    with capsys.disabled():
        for name, f in (("Nelder-Mead", nm), ("classical + seed's restart", ms)):
            rel = f.relative_errors(TRUTH)
            print(f"\n{name}: nfev {f.nfev}, cost {f.cost:.1e}, rel err "
                  + ", ".join(f"{k} {v:.1e}" for k, v in rel.items()))
    assert ms.cost <= nm.cost


def _information(experiments, d=0.05):
    """Gauss-Newton information S^T S of the angle w.r.t. log(J, B, D_p, T_s).

    Central differences with a 5 % step: the simulated angle jumps by O(D_theta dt) at
    stick-slip switches, so much smaller steps measure those jumps, not the slope.
    """
    h = np.zeros((4, 4))
    p0 = TRUTH.as_array()
    for t, u in experiments:
        cols = []
        for k in range(4):
            pp, pm = p0.copy(), p0.copy()
            pp[k] *= math.exp(d)
            pm[k] *= math.exp(-d)
            cols.append((simulate_servo(pp, t, u)["theta"]
                         - simulate_servo(pm, t, u)["theta"]) / (2 * d))
        s = np.array(cols).T
        h += s.T @ s
    return h


def test_the_mix_of_inputs_matters(mix_data, capsys):
    t, u, y = mix_data
    slow, fast = (t[0], u[0]), (t[1], u[1])
    # standard errors of log-parameters per unit of output noise (Cramer-Rao)
    se = {name: np.sqrt(np.diag(np.linalg.inv(_information(ex))))
          for name, ex in (("slow", [slow]), ("fast", [fast]), ("mix", [slow, fast]))}
    # cost of a 10 % error in each parameter, per experiment set
    c10 = {}
    for name, idx in (("slow", [0]), ("fast", [1]), ("mix", [0, 1])):
        c10[name] = np.array([
            servo_cost(TRUTH.scaled(np.where(np.arange(4) == k, 1.1, 1.0)),
                       [t[i] for i in idx], [u[i] for i in idx], [y[i] for i in idx])
            for k in range(4)])
    with capsys.disabled():
        print("\nstandard error per rad of output noise, and cost of a 10 % error:")
        for name in se:
            print(f"  {name:4s} se " + " ".join(f"{k} {v:.1e}" for k, v in
                                                 zip(SERVO_PARAM_NAMES, se[name]))
                  + " | cost " + " ".join(f"{v:.1e}" for v in c10[name]))
    # only large fast inputs: the cost is flat along T_s (the shaft is almost never held
    # by the stick friction with a small torque): a 10 % error in T_s costs a millionth of
    # a 10 % error in J, against a thousandth with the mix, and T_s is > 10x worse known
    assert c10["fast"][3] / c10["fast"][0] < 1e-5
    assert c10["mix"][3] / c10["mix"][0] > 1e-4
    assert se["fast"][3] > 10 * se["mix"][3]
    # D_p and B too are worse known from the fast input alone
    assert se["fast"][1] > 3 * se["mix"][1] and se["fast"][2] > 3 * se["mix"][2]
    # only small slow inputs: the shaft never runs much faster than D_theta, so the
    # inertia is seen mostly through D_theta = D_p / J: J is > 5x worse known
    assert se["slow"][0] > 5 * se["mix"][0]
    # the mix is better conditioned than either part
    cond = {k: np.linalg.cond(_information(ex)) for k, ex in
            (("slow", [slow]), ("fast", [fast]), ("mix", [slow, fast]))}
    assert cond["mix"] < cond["slow"] and cond["mix"] < cond["fast"]


def test_identify_servo_takes_one_experiment_and_checks_its_arguments():
    t = np.arange(3001) / 1000.0
    u = large_fast_input(t)
    y = simulate_servo(TRUTH, t, u)["theta"]
    assert servo_cost(TRUTH, t, u, y) == 0.0
    assert servo_cost(TRUTH.scaled([1.01, 1, 1, 1]), t, u, y) > 0.0
    fit = identify_servo(t, u, y, start=TRUTH.scaled([1.1, 0.9, 1.1, 1.0]), maxfev=60)
    assert fit.nfev == 60 and not fit.success
    assert isinstance(fit.params, StickSlipParams)
    with pytest.raises(ValueError):
        identify_servo(t, u, y, start=[1.0, 1.0, -1.0, 1.0])
    with pytest.raises(ValueError):
        identify_servo(t, u, y, start=TRUTH, optimizer="bfgs")
    with pytest.raises(ValueError):
        simulate_servo(TRUTH, np.array([0.0, 0.001, 0.003]), np.zeros(3))
    with pytest.raises(ValueError):
        servo_cost(TRUTH, [t, t], [u], [y, y])
