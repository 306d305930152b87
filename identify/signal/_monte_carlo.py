"""Random realistic captures for Monte Carlo studies of an estimator.

Each draw is a capture a lab could meet: friction about a centre (mu_d and mu_v x0.5-2,
mu_s / mu_d 0.8-3, omega_t 1e-4 to 1e-1 rad/s, log-uniform), a rig built +-10 % off its
nominal values and tilted 5-30 deg, released from 60-160 deg on the pendulum (either
side) and -20..20 deg on the arm by a trembling hand with a push, read through encoders
with interpolation error and count jitter over a link that loses frames. What the
estimator is told is what a lab would state: both masses and m2 l2 weighed to 0.5 %,
the tilt by eye (+-2 deg), everything else from CAD at +-10 %.

A condition adds what some rigs and records have on top (CONDITIONS): the noise of seed
000's Table V (white, 0.1 rad, at 1 kHz), a noisy angle sensor (white, 1-10 mrad
log-uniform, at 10 kHz), air drag on the pendulum (1e-6 to 3e-5 N m s^2, log-uniform)
with a cable on the arm (0 to 5e-4 N m/rad), or joints without a Stribeck hump
(mu_s = mu_d on one joint or both). Its draws come after the realistic ones, so the
same generator gives the same rig, friction and release under every condition.
"""

from __future__ import annotations

import math

import numpy as np

from ..model import RIG_ERROR_FIELDS, FrictionParams, Realism, RigParams
from ._synthetic import SyntheticCapture, realistic_capture

__all__ = ["CONDITIONS", "NOISY_CONDITIONS", "random_chain_friction", "random_chain_release",
           "random_friction", "random_realistic_capture", "random_release", "random_rig"]

#: what a capture has on top of the realistic draw (module docstring)
CONDITIONS = ("realistic", "table-v", "sensor", "drag-cable", "no-hump")
#: the conditions whose records carry white noise well above the encoder's quantum
NOISY_CONDITIONS = ("table-v", "sensor")


def random_realistic_capture(rng: np.random.Generator, nominal: RigParams,
                             centre: FrictionParams, duration: float = 35.0, *,
                             rate_hz: float = 10_000.0,
                             capture_id: str | None = None,
                             condition: str = "realistic") -> SyntheticCapture:
    """One random capture (see module) under `condition` (CONDITIONS); its measurement
    carries the rig the lab states. Table V's condition samples at 1 kHz, whatever
    rate_hz says."""
    if condition not in CONDITIONS:
        raise ValueError(f"condition {condition!r}: expected one of {', '.join(CONDITIONS)}")
    friction = random_friction(rng, centre)
    built, told = random_rig(rng, nominal)
    realism, pose = random_release(rng)
    if condition == "table-v":
        realism, rate_hz = realism.model_copy(update={"noise_rad": 0.1}), 1_000.0
    elif condition == "sensor":
        realism = realism.model_copy(update={
            "noise_rad": math.exp(rng.uniform(math.log(1e-3), math.log(1e-2)))})
    elif condition == "drag-cable":  # on the rig as built, which the capture is told
        built = built.model_copy(update={
            "drag1": math.exp(rng.uniform(math.log(1e-6), math.log(3e-5))),
            "spring0": float(rng.uniform(0.0, 5e-4))})
    elif condition == "no-hump":
        flat = [bool(rng.integers(2)), False]
        flat[1] = not flat[0] or bool(rng.integers(2))  # one joint at least
        friction = friction.model_copy(update={
            f"mu_s{j}": getattr(friction, f"mu_d{j}") for j in (0, 1) if flat[j]})
    return realistic_capture(told, friction, pose, duration, realism, rest_s=1.0, rig=built,
                             rate_hz=rate_hz, capture_id=capture_id)


def random_friction(rng: np.random.Generator, centre: FrictionParams) -> FrictionParams:
    """A friction about `centre` (module docstring)."""
    c = centre.as_array()
    f = c.copy()
    for j in (0, 1):
        b = 5 * j
        f[b] = c[b] * math.exp(rng.uniform(math.log(0.5), math.log(2.0)))
        f[b + 1] = f[b] * rng.uniform(0.8, 3.0)
        f[b + 2] = c[b + 2] * math.exp(rng.uniform(math.log(0.5), math.log(2.0)))
        f[b + 3] = math.exp(rng.uniform(math.log(1e-4), math.log(1e-1)))
    return FrictionParams.from_array(f)


def random_rig(rng: np.random.Generator, nominal: RigParams) -> tuple[RigParams, RigParams]:
    """The rig as built about `nominal`, and what a lab tells of it (module docstring)."""
    true_tilt = float(rng.uniform(5.0, 30.0))
    built = nominal.model_copy(update={
        **{n: getattr(nominal, n) * (1 + rng.uniform(-0.1, 0.1)) for n in RIG_ERROR_FIELDS},
        "tilt_deg": true_tilt})
    told = nominal.model_copy(update={
        "m1": built.m1 * (1 + rng.normal(0, 0.005)), "m2": built.m2 * (1 + rng.normal(0, 0.005)),
        "tilt_deg": true_tilt + float(rng.uniform(-2.0, 2.0)),
        "m2_l2": built.m2 * built.l2 * (1 + rng.normal(0, 0.005)), "cad_uncertainty": 0.1,
        "uncertainty": {"m1": 0.005, "m2": 0.005, "m2_l2": 0.005}})
    return built, told


def random_release(rng: np.random.Generator) -> tuple[Realism, tuple[float, float]]:
    """A hand's release and the link's imperfections (module docstring), and the pose."""
    realism = Realism(seed=int(rng.integers(2**31)),
                      hand_tremor_rad=float(rng.uniform(0, 0.003)),
                      push_rad_s=(float(rng.uniform(-0.2, 0.2)), float(rng.uniform(-0.2, 0.2))),
                      lost_frames=float(rng.uniform(0, 0.005)),
                      interpolation_counts=float(rng.uniform(0, 0.3)),
                      jitter_counts=int(rng.integers(0, 2)))
    pose = (float(rng.uniform(-20, 20)), float(rng.uniform(60, 160)) * float(rng.choice([-1, 1])))
    return realism, pose


def _log_uniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def random_chain_friction(rng: np.random.Generator, centre: np.ndarray) -> np.ndarray:
    """A chain rig's joint friction (links, 5: identify.model.CHAIN_FRICTION_TERMS) about
    `centre`: per joint a Coulomb torque x0.5-2, a breakaway 0.8-3 times it, v_t 0.01-0.3
    rad/s and a viscous term x0.5-2 (log-uniform but the breakaway's ratio)."""
    fr = np.array(centre, dtype=np.float64)
    for i in range(fr.shape[0]):
        fr[i, 0] *= _log_uniform(rng, 0.5, 2.0)
        fr[i, 1] = fr[i, 0] * rng.uniform(0.8, 3.0)
        fr[i, 2] = _log_uniform(rng, 0.01, 0.3)
        fr[i, 3] *= _log_uniform(rng, 0.5, 2.0)
    return fr


def random_chain_release(rng: np.random.Generator, links: int
                         ) -> tuple[Realism, list[float]]:
    """A chain rig's release from 90-150 deg per link (either side) by a hand with a
    0-3 mrad tremor and a push, read through encoders with 0-1 count jitter and 0-0.3
    count interpolation error over a link that loses 0-0.5 % of its frames; and the
    state it starts from, (q, q') with the push on the last link (the hand's) and the
    arm's on the others."""
    angles = [math.radians(rng.uniform(90.0, 150.0)) * float(rng.choice([-1, 1]))
              for _ in range(links)]
    push = (float(rng.uniform(-0.1, 0.1)), float(rng.uniform(-0.1, 0.1)))
    realism = Realism(seed=int(rng.integers(2**31)),
                      hand_tremor_rad=float(rng.uniform(0, 0.003)), push_rad_s=push,
                      jitter_counts=int(rng.integers(0, 2)),
                      interpolation_counts=float(rng.uniform(0, 0.3)),
                      lost_frames=float(rng.uniform(0, 0.005)))
    return realism, angles + [push[0]] * (links - 1) + [push[1]]
