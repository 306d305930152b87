"""What makes a simulated capture look like one from a real rig.

A real capture differs from identify's own model in every way a test of an estimator
should try: the rig is not the nominal one the estimator is told, the model leaves out
air drag and the arm's cable, a hand holds the pendulum with a little tremor and lets go
with a push, the angles are noisy, the encoder's counts jitter and carry its
interpolation error, frames are lost on the link, and over a night the friction drifts
(warming bearings, wear). `Realism` holds those knobs; the
functions below apply them, each drawing from the generator it is given, so one seed
reproduces one capture and successive draws differ as successive releases do.

Used by identify.signal.realistic_capture (captures as arrays), by the simulated device
(drivers.sim) and by `hilrig simulate`.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._params import PARAM_NAMES, UNCERTAIN_FIELDS, FrictionParams, RigParams
from .chain import friction_entry

__all__ = ["DRIFT_LIMIT", "RIG_ERROR_FIELDS", "Realism", "Tremor", "drifted_chain_friction",
           "drifted_friction", "encoder_counts", "hand_tremor", "lost_frames", "true_rig"]

#: the largest drift per hour a friction parameter may be given, as a fraction
DRIFT_LIMIT = 1.0

#: the rig quantities a CAD model or a data sheet gives, and a real rig departs from
RIG_ERROR_FIELDS = UNCERTAIN_FIELDS


class Realism(BaseModel):
    """How a simulated capture departs from the nominal model; all zero: an ideal capture."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    seed: int | None = Field(None, ge=0, description="random draws; None: fresh entropy")
    rig_error: float = Field(0.0, ge=0, le=0.5,
                             description="each of m1..L1 of the true rig is the nominal one "
                                         "times 1 + u, u uniform in +-rig_error")
    tilt_error_deg: float = Field(0.0, ge=0, le=20,
                                  description="the true tilt is the nominal one + u, u uniform "
                                              "in +-tilt_error_deg")
    drag1: float = Field(0.0, ge=0, le=1e-2,
                         description="pendulum air drag the nominal model leaves out, N m s^2")
    spring0: float = Field(0.0, ge=0, le=1.0,
                           description="cable torque on the arm, k (theta0 - rest), N m/rad")
    hand_tremor_rad: float = Field(0.0, ge=0, le=0.05,
                                   description="rms tremor of the hand holding the rig before "
                                               "the release (4-12 Hz), rad")
    push_rad_s: tuple[float, float] = Field(
        (0.0, 0.0), description="velocity the hand gives each joint as it lets go, rad/s")
    noise_rad: float = Field(0.0, ge=0, le=1.0,
                             description="white noise on the angles, standard deviation, rad")
    jitter_counts: int = Field(0, ge=0, le=10,
                               description="each count read off by up to this many, uniformly")
    interpolation_counts: float = Field(
        0.0, ge=0, le=2.0,
        description="amplitude of the encoder's interpolation error, periodic over one "
                    "line (4 counts), in counts")
    lost_frames: float = Field(0.0, ge=0, le=0.5,
                               description="probability that a frame of samples is lost")
    frame_samples: int = Field(10, ge=1, le=1000, description="samples per frame")
    drift_per_hour: dict[str, float] = Field(
        default_factory=dict,
        description="friction parameters that drift over the session, each by this fraction "
                    "of its value per hour of session time (0.02: +2 %/h), linearly: the "
                    "furuta rig's (mu_v1), or a chain rig's by term and link from 1 (b1)")

    temperature_c: float | None = Field(
        None, ge=-50, le=100,
        description="the lab's temperature at the session's start, degC, which the "
                    "simulated rig records with each capture (covariate temperature_c); "
                    "None: it records none")
    warming_c_per_hour: float = Field(
        0.0, ge=-10, le=10,
        description="how fast the lab's temperature changes over the session, degC per "
                    "hour, linearly (a drift_per_hour then reads as a trend per degC)")

    @field_validator("drift_per_hour")
    @classmethod
    def _known_drift(cls, v: dict[str, float]) -> dict[str, float]:
        for name, rate in v.items():
            if name not in PARAM_NAMES and friction_entry(name) is None:
                raise ValueError(f"drift of {name!r}: not a friction parameter (the furuta "
                                 f"rig's {', '.join(PARAM_NAMES)}; a chain rig's Fc, Fs, vt, "
                                 "b, cd and its link from 1: b1)")
            if not (math.isfinite(rate) and abs(rate) <= DRIFT_LIMIT):
                raise ValueError(f"drift of {name}: {rate!r} per hour, not within "
                                 f"+-{DRIFT_LIMIT:g}")
        return dict(v)

    @property
    def ideal(self) -> bool:
        """Nothing departs from the nominal model but quantisation (a temperature recorded
        is no departure)."""
        return self.model_copy(update={"temperature_c": None, "warming_c_per_hour": 0.0}) \
            == Realism(seed=self.seed)

    def conditions(self, hours: float) -> dict[str, float]:
        """What a simulated rig records with a capture taken `hours` into its session: the
        lab's temperature, if one is set."""
        if self.temperature_c is None:
            return {}
        return {"temperature_c": self.temperature_c + self.warming_c_per_hour * hours}

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed)


def drifted_friction(friction: FrictionParams, realism: Realism, hours: float
                     ) -> FrictionParams:
    """The friction after `hours` of session time: each parameter of drift_per_hour times
    1 + rate x hours (never below a tenth of its start, as no bearing loses all its
    friction; a transition velocity stays above zero)."""
    chain = [name for name in realism.drift_per_hour if name not in PARAM_NAMES]
    if chain:
        raise ValueError(f"drift of {chain[0]}: a chain rig's friction term; the furuta rig "
                         f"drifts {', '.join(PARAM_NAMES)}")
    if not realism.drift_per_hour or hours == 0:
        return friction
    return friction.model_copy(update={
        name: getattr(friction, name) * _drifted(rate, hours)
        for name, rate in realism.drift_per_hour.items()})


def drifted_chain_friction(friction: np.ndarray, realism: Realism, hours: float
                           ) -> np.ndarray:
    """A chain rig's friction (links, 5: identify.model.CHAIN_FRICTION_TERMS) after
    `hours` of session time, as drifted_friction: each term of drift_per_hour (Fc1, b2...)
    times 1 + rate x hours, never below a tenth of its start. ValueError for a term the
    rig does not have."""
    out = np.array(friction, dtype=np.float64)
    for name, rate in realism.drift_per_hour.items():
        entry = friction_entry(name)
        if entry is None or entry[0] >= out.shape[0]:
            links = out.shape[0]
            raise ValueError(f"drift of {name}: not a friction term of a chain of {links} "
                             f"link{'s' if links > 1 else ''} (Fc, Fs, vt, b, cd and the "
                             f"link, 1{f' to {links}' if links > 1 else ''}: b1)")
        out[entry] *= _drifted(rate, hours)
    return out


def _drifted(rate: float, hours: float) -> float:
    return max(0.1, 1.0 + rate * hours)


def true_rig(nominal: RigParams, realism: Realism, rng: np.random.Generator) -> RigParams:
    """The rig as built: the nominal one with its errors, drag and cable (one draw)."""
    e = realism.rig_error
    changes: dict[str, float] = {
        name: getattr(nominal, name) * (1.0 + rng.uniform(-e, e)) if e else
        getattr(nominal, name) for name in RIG_ERROR_FIELDS}
    tilt = nominal.tilt_deg + (rng.uniform(-realism.tilt_error_deg, realism.tilt_error_deg)
                               if realism.tilt_error_deg else 0.0)
    return nominal.model_copy(update={
        **changes, "tilt_deg": min(max(tilt, 0.0), 89.0),
        "drag1": nominal.drag1 + realism.drag1, "spring0": nominal.spring0 + realism.spring0})


class Tremor:
    """A hand's tremor while it holds the rig: angle offsets and their velocity in time.

    Physiological tremor lies at 4-12 Hz: five sines per joint of random frequency and
    phase in that band, scaled to `rms_rad` on the pendulum and a third of it on the
    arm (the hand holds the pendulum; the arm follows through the coupling). The offset
    is zero at t = 0, where the hand took hold.
    """

    def __init__(self, rms_rad: float, rng: np.random.Generator, joints: int = 2) -> None:
        self.w = np.zeros((joints, 5))
        self.phase = np.zeros((joints, 5))
        self.amp = np.zeros((joints, 5))
        if rms_rad <= 0:
            return
        # the hand holds the last link; the others follow at a third (for the Furuta rig:
        # the arm at a third of the pendulum)
        for j, scale in enumerate([1.0 / 3.0] * (joints - 1) + [1.0]):
            a = rng.uniform(0.5, 1.0, 5)
            self.amp[j] = a * scale * rms_rad / math.sqrt(0.5 * float(np.sum(a * a)))
            self.w[j] = 2 * math.pi * rng.uniform(4.0, 12.0, 5)
            self.phase[j] = rng.uniform(0.0, 2 * math.pi, 5)

    def angles(self, t: np.ndarray) -> np.ndarray:
        """Offsets (n, joints) at times t (s since the hand took hold)."""
        t = np.asarray(t, dtype=np.float64)[:, None, None]
        q = (self.amp * (np.sin(self.w * t + self.phase) - np.sin(self.phase))).sum(axis=2)
        return np.asarray(q)

    def velocity(self, t: float) -> np.ndarray:
        """Velocity (joints,) at time t."""
        return np.asarray((self.amp * self.w * np.cos(self.w * t + self.phase)).sum(axis=1))


def hand_tremor(n: int, rate_hz: float, rms_rad: float, rng: np.random.Generator,
                joints: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Tremor offsets (n, joints) at n samples from the hold's start, and the velocity
    (joints,) at the last of them (see Tremor)."""
    tremor = Tremor(rms_rad, rng, joints)
    t = np.arange(n) / rate_hz
    return tremor.angles(t), tremor.velocity(float(t[-1]) if n else 0.0)


def encoder_counts(angles: np.ndarray, quantum: float, realism: Realism,
                   rng: np.random.Generator) -> np.ndarray:
    """Angles (n, 2) read by the encoders: noise, interpolation error, rounding, jitter.

    The interpolation error of a quadrature encoder repeats every line, four counts:
    a sin(2 pi theta / (4 Q)) counts. Jitter moves each count by an integer uniform in
    +-jitter_counts.
    """
    x = np.asarray(angles, dtype=np.float64) / quantum
    if realism.noise_rad:
        x = x + rng.normal(0.0, realism.noise_rad / quantum, x.shape)
    if realism.interpolation_counts:
        x = x + realism.interpolation_counts * np.sin(2 * math.pi * x / 4.0)
    counts = np.rint(x)
    if realism.jitter_counts:
        counts += rng.integers(-realism.jitter_counts, realism.jitter_counts + 1, counts.shape)
    return counts.astype(np.int64)


def lost_frames(n: int, realism: Realism, rng: np.random.Generator,
                first_index: int = 0) -> np.ndarray:
    """Which of n samples arrive (bool mask): frames of frame_samples, aligned to the
    device's sample index, each lost with probability lost_frames."""
    keep = np.ones(n, bool)
    if realism.lost_frames <= 0 or n == 0:
        return keep
    fs = realism.frame_samples
    frame = (first_index + np.arange(n)) // fs
    frames = np.unique(frame)
    lost = frames[rng.random(frames.size) < realism.lost_frames]
    keep[np.isin(frame, lost)] = False
    return keep
