"""The dc servomotor with Karnopp stick-slip friction of seed 003, its simulator and identifier.

Seed 003 (Cheok, Hu & Loh, "Modeling and identification of a class of servomechanism
systems with stick-slip friction") models an armature-controlled dc motor (its Figs. 1-3)
with Karnopp's stick-slip friction [Karnopp 1985] and identifies J, B, D_p, T_s by
minimising the output error (its eqs. 6-10) with a modified simplex
(identify.solvers.modified_simplex).

State equations (Fig. 2; SI units). The armature circuit, amplifier and motor:

    L_m di/dt = K_a u - R_m i - K_b theta_m'            (armature voltage balance)
    T = K_t i                                           (motor torque)
    dP/dt = T - T_f                                     (P: angular momentum)
    d theta_m/dt = theta_m'

and the two nonlinearities, as the seed prints them:

    NL1 (1):  theta_m' = 0      if -D_p < P < D_p,  else P / J
    NL2 (2):  T_f = T_slip + T_stick
        (3):  T_slip = 0 if -D_theta < theta_m' < D_theta, else B theta_m'
        (4a): T_stick = -T_s if T'_stick < -T_s; T'_stick if |T'_stick| < T_s; T_s if T'_stick > T_s
        (4b): T'_stick = T if -D_theta < theta_m' < D_theta, else 0
        (5):  D_p = J D_theta

So inside the momentum dead band |P| < D_p the shaft is stuck (theta_m' = 0 exactly) and
the stick friction cancels the motor torque up to T_s: P does not move while |T| <= T_s
and creeps by T - T_s sign(T) once the torque exceeds the stick level. When P leaves the
band the shaft slips at theta_m' = P/J (at least D_theta = D_p/J) against viscous
friction B theta_m' only: in the seed's model the slip friction is purely viscous, D_p
is a momentum threshold (N m s), not a Coulomb torque, and T_s is the saturation
(breakaway) torque of the stick friction. Because |P| >= D_p implies |P/J| >= D_p/J,
the velocity test of (3)-(4b) and the momentum test of (1) always agree: `servo_rhs`
evaluates them literally, in the seed's order; the integrator uses one test (the tests
check that the two agree).

Integration, as Karnopp does it: fixed-step classic RK4 on the state (theta_m, P, i), the
dead-band test re-evaluated in every stage, no event location. That is the point of
Karnopp's formulation: the momentum integrates smoothly through zero velocity and the
band absorbs the switching, so an ordinary fixed-step integrator gives exact sticking
(theta_m' = 0, theta_m constant). The input is held constant over each sample interval
(a zero-order-hold DAC); the output is sampled at the same rate; `substeps` RK4 steps per
sample (default 8: 125 us at 1 kHz, a tenth of L_m/R_m).

One property of the seed's numbers matters for simulation and identification: the
friction just outside the band, B D_theta = 1.2e-4 * 28.3 = 3.4e-3 N m, is larger than
the most the band can hold, T_s = 1.0e-3 N m. The torque K_t i is the same on both sides
of the band edge (i is a state), so for T_s < |K_t i| < B D_theta the momentum is pushed
out of the band from inside and back in from outside: it is trapped on |P| = D_p and
the shaft creeps at a mean speed between 0 and D_theta (a sliding mode), which the
fixed-step scheme produces by chattering between stick and slip from one RK4 stage to
the next, O(dt) close to the Filippov solution. Every switch of a stage between stick and
slip moves theta_m by up to D_theta dt / 3, so the simulated output, and the output-error
cost, jump by that much when a parameter moves by any amount. Isolated stick-slip
transitions give a few such jumps (with 4 substeps instead of 8 they already leave small
ledges, spurious local minima at cost ~2e-10 that stop 2 of 16 start guesses); a long
creep gives thousands. See `small_slow_input` for what this means for the choice of inputs.

The motor constants. The seed gives none for K_a, K_t, K_b, L_m, R_m ("usually specified
by the manufacturer"). Its J = 3.0e-3 kg m^2 is about a hundred times the rotor inertia of
a small motor, so it is the inertia of motor plus load, and the drive must accelerate
it: a small coreless motor (K_t of a few tens of mN m/A, L_m/R_m of 0.05-0.1 ms) would
be both too weak and too stiff for a fixed-step simulation. DEFAULT_MOTOR is therefore a
small permanent-magnet, iron-core (slotted-armature) brushed dc servomotor of the
50-100 W, 24 V class (NEMA 23 frame size), with typical catalogue values:

    K_t = 0.055 N m/A, K_b = 0.055 V s/rad (equal in SI units; no-load speed
          24 V / 0.055 = 436 rad/s = 4200 rpm)
    R_m = 1.6 ohm (terminal resistance; stall current 15 A at 24 V)
    L_m = 2.0 mH (terminal inductance; electrical time constant L_m/R_m = 1.25 ms)
    K_a = 2.4 V/V (a linear voltage amplifier mapping a +-10 V command u to +-24 V)

These are representative values of that motor class, not one catalogue entry. With the
seed's J and B they give a mechanical time constant J / (B + K_t K_b/R_m) = 1.5 s, a
steady speed of 41 rad/s per volt of u, breakaway from rest at u = R_m T_s/(K_a K_t) =
12 mV, and sustained slip (above D_theta = 28.3 rad/s) for u above 0.69 V; between the
two the shaft sticks and creeps. The back-emf damping K_t K_b/R_m = 1.9e-3 N m s is 16
times B, so B is only 6 % of the damping in slip and T_s is small beside the motor
torque: both are identifiable from clean data but carry the least information (see the
tests), as the seed's own errors (B 8e-4, T_s 5e-4) also suggest.

Inputs (seed sec. V): "a set of input signals which have high and low frequency
components as well as small and large magnitude. The small magnitude low frequency
signal excites the nonlinear stick slip friction characteristics while moderately large
magnitude high frequency signal incites mostly the linear behavior." `paper_input_mix`
builds one experiment of each kind; `identify_servo` fits them together with the
multiresponse objective (10).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit
from scipy.optimize import OptimizeResult, minimize

from ..solvers import initial_points, modified_simplex

__all__ = [
    "DEFAULT_MOTOR", "SEED_003_ESTIMATE", "SEED_003_TRUTH", "SERVO_PARAM_NAMES", "DcMotor",
    "ServoFit", "StickSlipParams", "identify_servo", "karnopp_velocity", "large_fast_input",
    "paper_input_mix", "servo_cost", "servo_rhs", "simulate_servo", "small_slow_input",
]

SERVO_PARAM_NAMES = ("J", "B", "D_p", "T_s")
#: a current this small (A) is zero: with no input the current decays towards zero into
#: subnormal numbers, each operation on which costs the processor a hundred cycles or more
#: (the seed's slow experiment spent 27 % of its samples there, and its cost took 7 times
#: as long per step as the fast one's). Nothing the model measures moves at this size
SUBNORMAL_GUARD = 1e-200


@dataclass(frozen=True)
class DcMotor:
    """Known constants of the drive (seed: K_a, K_t, K_b, L_m, R_m). SI units."""

    K_a: float = 2.4      # amplifier gain, V/V
    K_t: float = 0.055    # torque constant, N m/A
    K_b: float = 0.055    # back-emf constant, V s/rad
    L_m: float = 2.0e-3   # armature inductance, H
    R_m: float = 1.6      # armature resistance, ohm

    def as_array(self) -> np.ndarray:
        return np.array([self.K_a, self.K_t, self.K_b, self.L_m, self.R_m], dtype=np.float64)


DEFAULT_MOTOR = DcMotor()


@dataclass(frozen=True)
class StickSlipParams:
    """The identified parameters: J (kg m^2), B (N m s/rad), D_p (N m s), T_s (N m)."""

    J: float
    B: float
    D_p: float
    T_s: float

    @property
    def D_theta(self) -> float:
        """Limiting angular velocity of the dead band, rad/s (seed eq. 5: D_p = J D_theta)."""
        return self.D_p / self.J

    def as_array(self) -> np.ndarray:
        return np.array([self.J, self.B, self.D_p, self.T_s], dtype=np.float64)

    @classmethod
    def from_array(cls, a: Sequence[float]) -> StickSlipParams:
        a = [float(v) for v in a]
        return cls(*a)

    def scaled(self, factors: Sequence[float]) -> StickSlipParams:
        return StickSlipParams.from_array(self.as_array() * np.asarray(factors, float))


# Seed 003 sec. VI: the simulated plant, and what its modified simplex recovered.
SEED_003_TRUTH = StickSlipParams(J=3.0e-3, B=1.2e-4, D_p=8.5e-2, T_s=1.0e-3)
SEED_003_ESTIMATE = StickSlipParams(J=3.000e-3, B=1.199e-4, D_p=8.519e-2, T_s=9.995e-4)


# ---------------------------------------------------------------------------------------
# compiled model


@njit(cache=True)
def karnopp_velocity(P: float, J: float, D_p: float) -> float:
    """NL1, seed eq. (1): 0 inside the momentum band -D_p < P < D_p, else P/J."""
    if -D_p < P < D_p:
        return 0.0
    return P / J


@njit(cache=True)
def servo_rhs(mot: np.ndarray, par: np.ndarray, u: float, P: float, i: float
              ) -> tuple[float, float, float]:
    """(theta_m', dP/dt, di/dt) at momentum P, current i, input u (seed Fig. 2, eqs. 1-5).

    Written out literally, for reading and for the tests; the integrator uses the
    equivalent _rhs_fast.
    """
    K_a, K_t, K_b, L_m, R_m = mot[0], mot[1], mot[2], mot[3], mot[4]
    J, B, D_p, T_s = par[0], par[1], par[2], par[3]
    w = karnopp_velocity(P, J, D_p)                      # (1)
    D_th = D_p / J                                       # (5)
    T = K_t * i
    if -D_th < w < D_th:                                 # stick region
        t_slip = 0.0                                     # (3)
        t_stick = T                                      # (4b)
    else:                                                # slip region
        t_slip = B * w                                   # (3)
        t_stick = 0.0                                    # (4b)
    if t_stick < -T_s:                                   # (4a)
        t_stick = -T_s
    elif t_stick > T_s:
        t_stick = T_s
    T_f = t_slip + t_stick                               # (2)
    return w, T - T_f, (K_a * u - R_m * i - K_b * w) / L_m


@njit(cache=True, inline="always")
def _rhs_fast(K_t: float, K_b: float, R_m: float, inv_L: float, inv_J: float, B: float,
              D_p: float, T_s: float, e: float, P: float, i: float
              ) -> tuple[float, float, float]:
    """servo_rhs with e = K_a u and the divisions hoisted.

    |P| >= D_p gives |P/J| >= D_p/J = D_theta, so the velocity test of (3)/(4b) always
    agrees with the momentum test of (1) and one test decides both.
    """
    T = K_t * i
    if -D_p < P < D_p:                                   # stick: w = 0, T_f = sat(T)
        if T > T_s:
            dP = T - T_s
        elif T < -T_s:
            dP = T + T_s
        else:
            dP = 0.0
        return 0.0, dP, (e - R_m * i) * inv_L
    w = P * inv_J                                        # slip: T_f = B w
    return w, T - B * w, (e - R_m * i - K_b * w) * inv_L


@njit(cache=True)
def _rk4_step(mot: np.ndarray, par: np.ndarray, u: float, x: np.ndarray, dt: float) -> None:
    """One classic RK4 step of x = (theta_m, P, i), u held; the band re-tested per stage."""
    K_t, K_b, R_m = mot[1], mot[2], mot[4]
    inv_L = 1.0 / mot[3]
    inv_J = 1.0 / par[0]
    B, D_p, T_s = par[1], par[2], par[3]
    e = mot[0] * u
    h = 0.5 * dt
    P, i = x[1], x[2]
    w1, p1, c1 = _rhs_fast(K_t, K_b, R_m, inv_L, inv_J, B, D_p, T_s, e, P, i)
    w2, p2, c2 = _rhs_fast(K_t, K_b, R_m, inv_L, inv_J, B, D_p, T_s, e, P + h * p1, i + h * c1)
    w3, p3, c3 = _rhs_fast(K_t, K_b, R_m, inv_L, inv_J, B, D_p, T_s, e, P + h * p2, i + h * c2)
    w4, p4, c4 = _rhs_fast(K_t, K_b, R_m, inv_L, inv_J, B, D_p, T_s, e, P + dt * p3,
                           i + dt * c3)
    s = dt / 6.0
    x[0] += s * (w1 + 2.0 * w2 + 2.0 * w3 + w4)
    x[1] = P + s * (p1 + 2.0 * p2 + 2.0 * p3 + p4)
    i_next = i + s * (c1 + 2.0 * c2 + 2.0 * c3 + c4)
    x[2] = 0.0 if abs(i_next) < SUBNORMAL_GUARD else i_next


@njit(cache=True)
def simulate_servo_kernel(mot: np.ndarray, par: np.ndarray, x0: np.ndarray, u: np.ndarray,
                          h: float, substeps: int) -> np.ndarray:
    """Rows (theta_m, theta_m', P, i) at t_k = k h, u[k] held over [t_k, t_k+1)."""
    n = u.shape[0]
    out = np.empty((n, 4))
    x = x0.copy()
    dt = h / substeps
    for k in range(n):
        out[k, 0] = x[0]
        out[k, 1] = karnopp_velocity(x[1], par[0], par[2])
        out[k, 2] = x[1]
        out[k, 3] = x[2]
        if k + 1 < n:
            for _ in range(substeps):
                _rk4_step(mot, par, u[k], x, dt)
    return out


@njit(cache=True)
def _sse_kernel(mot: np.ndarray, par: np.ndarray, x0: np.ndarray, u: np.ndarray, h: float,
                substeps: int, y: np.ndarray, velocity: bool) -> float:
    """sum_k (y_k - y_m(t_k))^2 without storing the trajectory; y_m angle or velocity."""
    n = u.shape[0]
    x = x0.copy()
    dt = h / substeps
    s = 0.0
    for k in range(n):
        if velocity:
            e = y[k] - karnopp_velocity(x[1], par[0], par[2])
        else:
            e = y[k] - x[0]
        s += e * e
        if not math.isfinite(s):
            return math.inf
        if k + 1 < n:
            for _ in range(substeps):
                _rk4_step(mot, par, u[k], x, dt)
    return s


# ---------------------------------------------------------------------------------------
# simulation and inputs


def _uniform_step(t: np.ndarray) -> float:
    t = np.asarray(t, dtype=np.float64)
    if t.ndim != 1 or t.size < 2:
        raise ValueError("t must be a 1-D array of at least two sample times")
    d = np.diff(t)
    h = float(d.mean())
    if not h > 0 or np.max(np.abs(d - h)) > 1e-6 * h:
        raise ValueError("t must be uniformly spaced and increasing")
    return h


def simulate_servo(params: StickSlipParams | Sequence[float], t: np.ndarray, u: np.ndarray,
                   x0: Sequence[float] | None = None, *, motor: DcMotor = DEFAULT_MOTOR,
                   substeps: int = 8) -> dict[str, np.ndarray]:
    """Simulate the servo at the sample times t (uniform) under input u (V, held per sample).

    x0 = (theta_m rad, P N m s, i A), default at rest and stuck (0, 0, 0). RK4 with
    `substeps` steps per sample interval. Returns a dict of arrays: t, u, theta (rad),
    omega (rad/s, NL1's output: exactly 0 while stuck), P (N m s), i (A), torque (N m),
    stuck (bool, |P| < D_p).
    """
    par = (params if isinstance(params, StickSlipParams)
           else StickSlipParams.from_array(params)).as_array()
    if np.any(par <= 0) or not np.all(np.isfinite(par)):
        raise ValueError("J, B, D_p and T_s must be positive and finite")
    if substeps < 1:
        raise ValueError("substeps must be >= 1")
    t = np.asarray(t, dtype=np.float64)
    h = _uniform_step(t)
    u = np.ascontiguousarray(np.broadcast_to(np.asarray(u, dtype=np.float64), t.shape))
    x = np.zeros(3) if x0 is None else np.asarray(x0, dtype=np.float64).reshape(3).copy()
    out = simulate_servo_kernel(motor.as_array(), par, x, u, h, int(substeps))
    return {"t": t, "u": u, "theta": out[:, 0], "omega": out[:, 1], "P": out[:, 2],
            "i": out[:, 3], "torque": motor.K_t * out[:, 3], "stuck": np.abs(out[:, 2]) < par[2]}


def small_slow_input(t: np.ndarray, amplitude: float = 1.0, period: float = 10.0
                     ) -> np.ndarray:
    """Small, slow input (V): a three-level square wave +A, 0, -A, 0, a quarter period each.

    With the defaults (1 V, 10 s) each pulse holds the shaft stuck while the momentum
    builds up (1.05 s from rest, 2.1 s from the opposite band edge), breaks it away into slip
    just above D_theta (steady speed 41 rad/s), and each pause lets it brake back into the
    band and stick, in both directions: the stick-slip behaviour of seed sec. V.

    Why steps and not a slow sine: a sine dwells in the range where the torque lies
    between T_s and the friction B D_theta just outside the band (u from 12 mV to 0.69 V
    here), where the momentum is trapped on the band edge and Karnopp's fixed-step
    scheme chatters between stick and slip from one RK4 stage to the next (see
    `simulate_servo`). The chattering creep is part of the model, but it makes the
    simulated output jump by O(D_theta dt) when a parameter moves by any amount, and
    that noise floor in the cost, not the optimiser, then limits the estimates (with a
    1 V, 0.2 Hz sine instead of these steps, T_s came out 2e-4 to 2e-2 off, depending on
    the start). The steps cross that range within the electrical time constant.
    """
    t = np.asarray(t, dtype=np.float64)
    phase = np.mod(t / period, 1.0)
    return np.where(phase < 0.25, amplitude, np.where((phase >= 0.5) & (phase < 0.75),
                                                      -amplitude, 0.0))


def large_fast_input(t: np.ndarray, amplitude: float = 10.0, frequency: float = 0.5
                     ) -> np.ndarray:
    """Large, faster input (V): A sin(2 pi f t), the full +-10 V command at 0.5 Hz.

    The shaft slips at up to ~130 rad/s and spends three quarters of the time in slip,
    where the motor, J and B behave linearly; each reversal still has to carry the
    momentum across the band (2 D_p = 0.17 N m s), which takes ~0.2 s. The seed's
    D_theta = 28 rad/s is large, so "fast" here means periods of seconds: at 1 Hz the
    shaft is stuck half of the time, at 2 Hz 86 % of it.
    """
    t = np.asarray(t, dtype=np.float64)
    return amplitude * np.sin(2.0 * np.pi * frequency * t)


def paper_input_mix(rate_hz: float = 1000.0, slow_seconds: float = 10.0,
                    fast_seconds: float = 4.0) -> list[tuple[np.ndarray, np.ndarray]]:
    """The seed's input mix as two experiments: [(t, small slow u), (t, large fast u)]."""
    out = []
    for seconds, gen in ((slow_seconds, small_slow_input), (fast_seconds, large_fast_input)):
        t = np.arange(int(round(seconds * rate_hz)) + 1) / rate_hz
        out.append((t, gen(t)))
    return out


# ---------------------------------------------------------------------------------------
# identification


@dataclass
class ServoFit:
    """Result of identify_servo. `params` holds J, B, D_p, T_s; D_theta follows by eq. (5)."""

    params: StickSlipParams
    start: StickSlipParams
    cost: float                     # J_e of eq. (10) at params (weighted, normalised)
    nfev: int
    nit: int
    seconds: float
    success: bool
    message: str
    optimizer: str
    weights: np.ndarray
    result: OptimizeResult = field(repr=False)

    @property
    def J(self) -> float:
        return self.params.J

    @property
    def B(self) -> float:
        return self.params.B

    @property
    def D_p(self) -> float:
        return self.params.D_p

    @property
    def T_s(self) -> float:
        return self.params.T_s

    @property
    def D_theta(self) -> float:
        return self.params.D_theta

    def relative_errors(self, truth: StickSlipParams) -> dict[str, float]:
        est, ref = self.params.as_array(), truth.as_array()
        return dict(zip(SERVO_PARAM_NAMES, (np.abs(est - ref) / ref).tolist()))


#: one experiment's samples (1-D), or a sequence of experiments' (eq. 10)
Samples = Sequence[Any] | np.ndarray
#: an experiment as the cost takes it: (step h, input u, output y, initial state x0)
_Experiment = tuple[float, np.ndarray, np.ndarray, np.ndarray]


def _as_experiments(t: Samples, u: Samples, y: Samples, x0: Samples | None
                    ) -> list[_Experiment]:
    """Normalise (t, u, y, x0) to lists of experiments (eq. 10)."""
    if len(t) == 0:
        raise ValueError("no samples")
    if np.ndim(t[0]) == 0:                       # one experiment
        ts, us, ys, x0s = [t], [u], [y], [x0]
    else:                                        # a sequence of experiments
        ts, us, ys = list(t), list(u), list(y)
        if not len(ts) == len(us) == len(ys):
            raise ValueError("t, u and y must list the same number of experiments")
        if x0 is None:
            x0s = [None] * len(ts)
        elif np.ndim(x0[0]) == 0:                # one initial state for all
            x0s = [x0] * len(ts)
        else:
            x0s = list(x0)
            if len(x0s) != len(ts):
                raise ValueError("x0 must give one initial state per experiment")
    exps = []
    for tj, uj, yj, xj in zip(ts, us, ys, x0s):
        tj = np.asarray(tj, dtype=np.float64)
        h = _uniform_step(tj)
        uj = np.ascontiguousarray(np.asarray(uj, dtype=np.float64))
        yj = np.ascontiguousarray(np.asarray(yj, dtype=np.float64))
        if uj.shape != tj.shape or yj.shape != tj.shape:
            raise ValueError("each experiment's t, u, y must have the same length")
        xj = np.zeros(3) if xj is None else np.asarray(xj, dtype=np.float64).reshape(3).copy()
        exps.append((h, uj, yj, xj))
    return exps


def servo_cost(params: StickSlipParams | Sequence[float], t: Samples, u: Samples, y: Samples,
               x0: Samples | None = None, *,
               motor: DcMotor = DEFAULT_MOTOR, substeps: int = 8, output: str = "angle",
               weights: Sequence[float] | None = None) -> float:
    """The multiresponse objective J_e of seed eq. (10) with q_i = 1.

    weights w_j default to 1 / sum_i y_pj(t_i)^2, so each experiment's term is its
    relative squared output error and a small-signal experiment is not swamped by a
    large one.
    """
    exps = _as_experiments(t, u, y, x0)
    w = _weights(exps, weights)
    par = (params if isinstance(params, StickSlipParams)
           else StickSlipParams.from_array(params)).as_array()
    return _cost(par, exps, w, motor.as_array(), int(substeps), _velocity_flag(output))


def _velocity_flag(output: str) -> bool:
    if output not in ("angle", "velocity"):
        raise ValueError("output must be 'angle' or 'velocity'")
    return output == "velocity"


def _weights(exps: list[_Experiment], weights: Sequence[float] | None) -> np.ndarray:
    """w_j of eq. (10): given, or 1 / sum_i y_j(t_i)^2 (each experiment's output power)."""
    if weights is None:
        w = np.array([1.0 / max(float(np.sum(y * y)), 1e-300) for _, _, y, _ in exps])
    else:
        w = np.asarray(weights, dtype=np.float64).reshape(len(exps))
    return w


def _cost(par: np.ndarray, exps: list[_Experiment], w: np.ndarray, mot: np.ndarray,
          substeps: int, velocity: bool) -> float:
    """J_e = sum_j w_j sum_i (y_j(t_i) - y_m(t_i))^2 (eq. 10); inf outside J, B, D_p, T_s > 0."""
    if not np.all(np.isfinite(par)) or np.any(par <= 0):
        return math.inf
    total = 0.0
    for wj, (h, uj, yj, xj) in zip(w, exps):
        total += wj * _sse_kernel(mot, par, xj, uj, h, substeps, yj, velocity)
    return total


def identify_servo(t: Samples, u: Samples, y: Samples, x0: Samples | None = None, *,
                   start: StickSlipParams | Sequence[float],
                   optimizer: str = "simplex", motor: DcMotor = DEFAULT_MOTOR,
                   output: str = "angle", substeps: int = 8,
                   weights: Sequence[float] | None = None, scale: float = 0.3,
                   xatol: float = 1e-7, fatol: float = 1e-15, maxfev: int = 4000,
                   **options: Any) -> ServoFit:
    """Fit J, B, D_p, T_s to measured output(s) by the output-error method of seed 003.

    t, u, y: one experiment (1-D arrays: uniform sample times s, input V, output) or
        sequences of them (the multiresponse objective, eq. 10). y is the shaft angle in
        rad (output="angle") or its velocity in rad/s (output="velocity").
    x0: initial state (theta_m, P, i), default at rest (0, 0, 0); one per experiment or
        one for all.
    start: the initial guess of (J, B, D_p, T_s). The seed gives none.
    optimizer: "simplex" (modified_simplex, the seed's method) or "nelder-mead" (scipy's,
        from the same starting simplex, for comparison).
    The search runs over log(J, B, D_p, T_s) (so every coordinate is a relative change,
    and the parameters stay positive) with starting steps `scale` (0.3 = 35 %) and stops
    when all simplex points agree to `xatol` in log (relative) units and their costs to
    `fatol` (J_e is normalised by the output power, so 1e-15 is tiny). Extra keyword
    options go to the optimiser (e.g. restarts_at_optimum, keep_history).

    Returns a ServoFit; D_theta = D_p / J follows by eq. (5), as in the seed.
    """
    t0 = time.perf_counter()
    exps = _as_experiments(t, u, y, x0)
    w = _weights(exps, weights)
    mot = motor.as_array()
    velocity = _velocity_flag(output)
    start = start if isinstance(start, StickSlipParams) else StickSlipParams.from_array(start)
    p0 = start.as_array()
    if not (np.all(np.isfinite(p0)) and np.all(p0 > 0)):
        raise ValueError("start must hold four positive finite values")
    z0 = np.log(p0)
    substeps = int(substeps)

    def fun(z: np.ndarray) -> float:
        with np.errstate(over="ignore"):
            par = np.exp(z)
        return _cost(par, exps, w, mot, substeps, velocity)

    if optimizer == "simplex":
        res = modified_simplex(fun, z0, scale=scale, xatol=xatol, fatol=fatol, maxfev=maxfev,
                               maxiter=options.pop("maxiter", 10 * maxfev), **options)
    elif optimizer in ("nelder-mead", "Nelder-Mead"):
        sim = initial_points(z0, np.full(4, float(scale)), 5)
        opts = {"xatol": xatol, "fatol": fatol, "maxfev": maxfev, "maxiter": 10 * maxfev,
                "initial_simplex": sim}
        opts.update(options)
        res = minimize(fun, z0, method="Nelder-Mead", options=opts)
    else:
        raise ValueError("optimizer must be 'simplex' or 'nelder-mead'")
    est = StickSlipParams.from_array(np.exp(res.x))
    return ServoFit(params=est, start=start, cost=float(res.fun), nfev=int(res.nfev),
                    nit=int(res.nit), seconds=time.perf_counter() - t0,
                    success=bool(res.success), message=str(res.message), optimizer=optimizer,
                    weights=w, result=res)
