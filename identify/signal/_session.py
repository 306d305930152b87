"""Simulated sessions: one rig released again and again over hours, its friction drifting
or not, as a lab's night of captures (for the pooled estimator's tests and benchmark).

One rig is built and told once (random_rig), one friction drawn about a centre
(random_friction); each capture is a new hand release with its own tremor, push, pose
and link losses (random_release), at its session time, with the friction that time has
drifted it to (identify.model.drifted_friction). An outlier capture, if asked for, has
some friction parameters off by a factor at its time only (a knocked rig, a bearing
that caught): what a drift model cannot explain.

A chain rig's session (simulated_chain_session) is the same night on a single or n-link
pendulum: its joints' friction drawn about a centre (random_chain_friction), drifting by
the terms a chain names (b1: link 1's viscous term), each release a new hand
(random_chain_release).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..model import (
    ChainParams,
    ChainRig,
    FrictionParams,
    Realism,
    RigParams,
    drifted_chain_friction,
    drifted_friction,
    friction_entry,
)
from ._measurement import Record
from ._monte_carlo import (
    random_chain_friction,
    random_chain_release,
    random_friction,
    random_release,
    random_rig,
)
from ._synthetic import SyntheticCapture, chain_record, realistic_capture

__all__ = ["SimulatedChainSession", "SimulatedSession", "simulated_chain_session",
           "simulated_session"]


@dataclass(frozen=True)
class SimulatedSession:
    """The captures of a simulated session, their session times and the truth."""

    captures: list[SyntheticCapture]  # each with the friction of its time
    hours: np.ndarray  # (K,) session time of each release, h
    rig: RigParams  # the rig as built (the same for every capture)
    friction: FrictionParams  # the friction at hour 0
    drift_per_hour: dict[str, float]
    outlier: int | None  # the capture whose friction stands out, if any


def simulated_session(rng: np.random.Generator, nominal: RigParams, centre: FrictionParams,
                      captures: int = 10, span_h: float = 8.0, *,
                      drift_per_hour: Mapping[str, float] | None = None,
                      duration: float = 35.0, rate_hz: float = 10_000.0,
                      outlier: int | None = None,
                      outlier_factor: Mapping[str, float] | None = None) -> SimulatedSession:
    """`captures` realistic captures of one random rig over span_h hours, evenly spaced
    (the first at hour 0), the friction drifting by drift_per_hour (see module);
    capture `outlier` with its friction times outlier_factor (default mu_v1 x 1.3)."""
    if captures < 1 or not span_h >= 0:
        raise ValueError("a session needs at least one capture and a span of 0 h or more")
    drift = dict(drift_per_hour or {})
    realism_drift = Realism(drift_per_hour=drift)  # checks the names and rates
    friction = random_friction(rng, centre)
    built, told = random_rig(rng, nominal)
    hours = np.linspace(0.0, span_h, captures) if captures > 1 else np.zeros(1)
    out = []
    for k, h in enumerate(hours):
        realism, pose = random_release(rng)
        f = drifted_friction(friction, realism_drift, float(h))
        if k == outlier:
            f = f.model_copy(update={n: getattr(f, n) * x for n, x in
                                     (outlier_factor or {"mu_v1": 1.3}).items()})
        out.append(realistic_capture(told, f, pose, duration, realism, rest_s=1.0, rig=built,
                                     rate_hz=rate_hz, capture_id=f"session-{k:02d}"))
    return SimulatedSession(out, hours, built, friction, drift, outlier)


@dataclass(frozen=True)
class SimulatedChainSession:
    """The records of a simulated chain rig's session, their session times and the truth."""

    records: list[Record]  # each with the friction of its time
    hours: np.ndarray  # (K,) session time of each release, h
    rig: ChainRig
    params: ChainParams  # the true parameters at hour 0
    drift_per_hour: dict[str, float]
    outlier: int | None  # the record whose friction stands out, if any


def simulated_chain_session(rng: np.random.Generator, rig: ChainRig, centre: ChainParams,
                            captures: int = 10, span_h: float = 8.0, *,
                            drift_per_hour: Mapping[str, float] | None = None,
                            duration: float = 30.0, rate_hz: float = 1000.0,
                            outlier: int | None = None,
                            outlier_factor: Mapping[str, float] | None = None
                            ) -> SimulatedChainSession:
    """`captures` records of one chain rig (its inertia as `centre` has it, its friction
    drawn about centre's) over span_h hours, evenly spaced, the friction drifting by
    drift_per_hour (Fc1, b2...); record `outlier` with its friction times outlier_factor
    (default the last link's viscous term x 1.3)."""
    if captures < 1 or not span_h >= 0:
        raise ValueError("a session needs at least one capture and a span of 0 h or more")
    links = rig.links
    if centre.links != links:
        raise ValueError(f"rig kind {rig.kind} has {links} links; the parameters have "
                         f"{centre.links}")
    drift = dict(drift_per_hour or {})
    realism_drift = Realism(drift_per_hour=drift)  # checks the names and rates
    factor = dict(outlier_factor or {f"b{links}": 1.3})
    friction = random_chain_friction(rng, centre.friction)
    drifted_chain_friction(friction, realism_drift, 0.0)  # a term the chain has not: now
    hours = np.linspace(0.0, span_h, captures) if captures > 1 else np.zeros(1)
    out = []
    for k, h in enumerate(hours):
        realism, x0 = random_chain_release(rng, links)
        fr = drifted_chain_friction(friction, realism_drift, float(h))
        if k == outlier:
            for name, x in factor.items():
                entry = friction_entry(name)
                if entry is None or entry[0] >= links:
                    raise ValueError(f"outlier_factor: {name} is no friction term of "
                                     f"rig kind {rig.kind}")
                fr[entry] *= x
        out.append(chain_record(rig, ChainParams(centre.inertial, fr), x0, duration, realism,
                                rest_s=1.0, rate_hz=rate_hz, capture_id=f"session-{k:02d}"))
    return SimulatedChainSession(out, hours, rig, ChainParams(centre.inertial, friction),
                                 drift, outlier)
