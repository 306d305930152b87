"""Random realistic captures for Monte Carlo studies of an estimator.

Each draw is a capture a lab could meet: friction about a centre (mu_d and mu_v x0.5-2,
mu_s / mu_d 0.8-3, omega_t 1e-4 to 1e-1 rad/s, log-uniform), a rig built +-10 % off its
nominal values and tilted 5-30 deg, released from 60-160 deg on the pendulum (either
side) and -20..20 deg on the arm by a trembling hand with a push, read through encoders
with interpolation error and count jitter over a link that loses frames. What the
estimator is told is what a lab would state: both masses and m2 l2 weighed to 0.5 %,
the tilt by eye (+-2 deg), everything else from CAD at +-10 %.
"""

from __future__ import annotations

import math

import numpy as np

from ..model import RIG_ERROR_FIELDS, FrictionParams, Realism, RigParams
from ._synthetic import SyntheticCapture, realistic_capture

__all__ = ["random_realistic_capture"]


def random_realistic_capture(rng: np.random.Generator, nominal: RigParams,
                             centre: FrictionParams, duration: float = 35.0, *,
                             rate_hz: float = 10_000.0,
                             capture_id: str | None = None) -> SyntheticCapture:
    """One random capture (see module); its measurement carries the rig the lab states."""
    c = centre.as_array()
    f = c.copy()
    for j in (0, 1):
        b = 5 * j
        f[b] = c[b] * math.exp(rng.uniform(math.log(0.5), math.log(2.0)))
        f[b + 1] = f[b] * rng.uniform(0.8, 3.0)
        f[b + 2] = c[b + 2] * math.exp(rng.uniform(math.log(0.5), math.log(2.0)))
        f[b + 3] = math.exp(rng.uniform(math.log(1e-4), math.log(1e-1)))
    friction = FrictionParams.from_array(f)
    true_tilt = float(rng.uniform(5.0, 30.0))
    built = nominal.model_copy(update={
        **{n: getattr(nominal, n) * (1 + rng.uniform(-0.1, 0.1)) for n in RIG_ERROR_FIELDS},
        "tilt_deg": true_tilt})
    told = nominal.model_copy(update={
        "m1": built.m1 * (1 + rng.normal(0, 0.005)), "m2": built.m2 * (1 + rng.normal(0, 0.005)),
        "tilt_deg": true_tilt + float(rng.uniform(-2.0, 2.0)),
        "m2_l2": built.m2 * built.l2 * (1 + rng.normal(0, 0.005)), "cad_uncertainty": 0.1,
        "uncertainty": {"m1": 0.005, "m2": 0.005, "m2_l2": 0.005}})
    realism = Realism(seed=int(rng.integers(2**31)),
                      hand_tremor_rad=float(rng.uniform(0, 0.003)),
                      push_rad_s=(float(rng.uniform(-0.2, 0.2)), float(rng.uniform(-0.2, 0.2))),
                      lost_frames=float(rng.uniform(0, 0.005)),
                      interpolation_counts=float(rng.uniform(0, 0.3)),
                      jitter_counts=int(rng.integers(0, 2)))
    pose = (float(rng.uniform(-20, 20)), float(rng.uniform(60, 160)) * float(rng.choice([-1, 1])))
    return realistic_capture(told, friction, pose, duration, realism, rest_s=1.0, rig=built,
                             rate_hz=rate_hz, capture_id=capture_id)
