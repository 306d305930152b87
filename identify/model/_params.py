"""Rig and friction parameters of the tilted Furuta pendulum.

Values and symbols follow shared/reference/model.md (seed 000, Table I, with the
printed mistakes corrected). All quantities are SI.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

G_ACCEL = 9.81

#: The ten Brown-McPhee friction parameters, in the order of model.md.
PARAM_NAMES: tuple[str, ...] = (
    "mu_d0", "mu_s0", "mu_v0", "omega_t0", "Fn_t0",
    "mu_d1", "mu_s1", "mu_v1", "omega_t1", "Fn_t1",
)

#: the rig quantities a CAD model or a data sheet gives, and a real rig departs from
UNCERTAIN_FIELDS: tuple[str, ...] = ("m1", "m2", "j1z", "j2x", "j2y", "j2z", "l1", "l2", "L1")

#: joint names, index 0 the arm and 1 the pendulum (the digit ending each parameter name)
JOINT_NAMES: tuple[str, str] = ("arm", "pendulum")
#: the five Brown-McPhee terms of each joint; a parameter is named term + joint digit
FRICTION_TERMS: tuple[str, ...] = ("mu_d", "mu_s", "mu_v", "omega_t", "Fn_t")


def param_name(term: str, joint: int) -> str:
    """The name of one joint's friction term: param_name("mu_s", 1) == "mu_s1"."""
    if term not in FRICTION_TERMS or joint not in (0, 1):
        raise ValueError(f"no friction parameter {term!r} of joint {joint!r}")
    return f"{term}{joint}"


def joint_params(*terms: str) -> tuple[str, ...]:
    """The named terms of both joints, arm first: joint_params("Fn_t") == ("Fn_t0", "Fn_t1")."""
    return tuple(param_name(term, j) for j in (0, 1) for term in terms)


def param_index(name: str) -> int:
    """Where the named parameter sits in PARAM_NAMES (and in FrictionParams.as_array())."""
    try:
        return PARAM_NAMES.index(name)
    except ValueError:
        raise ValueError(f"unknown friction parameter {name!r}") from None


def param_indices(names: Iterable[str]) -> list[int]:
    """param_index of each name, in the order given."""
    return [param_index(n) for n in names]


def joint_of(name: str) -> int:
    """The joint (0 arm, 1 pendulum) a friction parameter belongs to."""
    return param_index(name) // len(FRICTION_TERMS)


def term_of(name: str) -> str:
    """The friction term a parameter is of: term_of("omega_t1") == "omega_t"."""
    return FRICTION_TERMS[param_index(name) % len(FRICTION_TERMS)]


class FrictionParams(BaseModel):
    """Brown-McPhee friction (seed 000 eq. 5, squared Stribeck denominator) per joint.

    Joint 0 is the arm, joint 1 the pendulum. No field has a default: a friction is always
    stated (the seed's truth is identify.reference.TABLE_III_TRUTH, kept out of estimators).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    mu_d0: float = Field(ge=0, description="arm dynamic (Coulomb) coefficient")
    mu_s0: float = Field(ge=0, description="arm static coefficient")
    mu_v0: float = Field(ge=0, description="arm viscous coefficient, N m s/rad")
    omega_t0: float = Field(gt=0, description="arm Stribeck transition velocity, rad/s")
    Fn_t0: float = Field(gt=0, description="arm viscous transition force, N")
    mu_d1: float = Field(ge=0, description="pendulum dynamic (Coulomb) coefficient")
    mu_s1: float = Field(ge=0, description="pendulum static coefficient")
    mu_v1: float = Field(ge=0, description="pendulum viscous coefficient, N m s/rad")
    omega_t1: float = Field(gt=0, description="pendulum Stribeck transition velocity, rad/s")
    Fn_t1: float = Field(gt=0, description="pendulum viscous transition force, N")

    def as_array(self) -> np.ndarray:
        """The ten values in PARAM_NAMES order."""
        return np.array([getattr(self, n) for n in PARAM_NAMES], dtype=np.float64)

    @classmethod
    def from_array(cls, values: np.ndarray | list[float]) -> FrictionParams:
        if len(values) != len(PARAM_NAMES):
            raise ValueError(f"expected {len(PARAM_NAMES)} friction values, got {len(values)}")
        return cls(**{n: float(v) for n, v in zip(PARAM_NAMES, values)})

    @classmethod
    def frictionless(cls) -> FrictionParams:
        """No friction at all; the transition values are placeholders that act on nothing."""
        return cls(mu_d0=0, mu_s0=0, mu_v0=0, omega_t0=5e-3, Fn_t0=1e-2,
                   mu_d1=0, mu_s1=0, mu_v1=0, omega_t1=5e-3, Fn_t1=1e-2)


class RigParams(BaseModel):
    """Geometry, inertia, tilt and joint normal forces (seed 000 Table I)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    m1: float = Field(0.370, gt=0, description="arm mass, kg")
    m2: float = Field(0.128, gt=0, description="pendulum mass, kg")
    j1z: float = Field(3.09e-3, gt=0, description="arm inertia about its CG, axis z0, kg m^2")
    j2x: float = Field(5.25e-3, gt=0, description="pendulum inertia about its CG, joint axis")
    j2y: float = Field(5.25e-3, gt=0, description="pendulum inertia about its CG, y")
    j2z: float = Field(2.91e-6, gt=0, description="pendulum inertia about its CG, along the rod")
    l1: float = Field(0.0620, gt=0, description="arm pivot to CG, m")
    l2: float = Field(0.0620, gt=0, description="pendulum pivot to CG, m")
    L1: float = Field(0.216, gt=0, description="arm length, pivot O to pendulum joint A, m")
    g: float = Field(G_ACCEL, gt=0, description="gravity, m/s^2")
    tilt_deg: float = Field(10.0, ge=0, lt=90, description="tilt phi of the arm axis from vertical")
    Fn0: float | None = Field(None, gt=0,
                              description="arm joint normal force, N; default (m1+m2) g")
    Fn1: float | None = Field(None, gt=0,
                              description="pendulum joint normal force, N; default m2 g")
    # what the nominal model leaves out and a lab switches on when the diagnostics ask
    drag1: float = Field(0.0, ge=0, le=1.0,
                         description="pendulum air drag c in c |v| v, N m s^2")
    spring0: float = Field(0.0, ge=0, le=100.0,
                           description="cable or spring on the arm, k in k (theta0 - rest), "
                                       "N m/rad")
    spring_rest0_deg: float = Field(0.0, ge=-360, le=360,
                                    description="arm angle at which that spring is relaxed")
    # How well the values above are known. Identification takes them as a prior, never as
    # a truth: a free decay fixes the rig only up to one common factor (docs/identification.md)
    m2_l2: float | None = Field(None, gt=0, le=100.0,
                                description="pendulum static moment m2 l2 as weighed (held "
                                            "horizontal at its pivot), kg m; fixes the scale")
    uncertainty: dict[str, float] = Field(
        default_factory=dict,
        description="standard uncertainty of the values a lab measured: relative for "
                    f"{', '.join(UNCERTAIN_FIELDS)} and m2_l2 (0.005 is 0.5 %), degrees for "
                    "tilt_deg; a value not listed has cad_uncertainty (tilt: 3 deg; m2_l2: 1 %)")
    cad_uncertainty: float = Field(0.05, gt=0, le=1.0,
                                   description="relative standard uncertainty of every value "
                                               "nobody measured (a CAD model, a data sheet)")

    @field_validator("uncertainty")
    @classmethod
    def _known_quantities(cls, v: dict[str, float]) -> dict[str, float]:
        for name, sd in v.items():
            if name not in (*UNCERTAIN_FIELDS, "tilt_deg", "m2_l2"):
                raise ValueError(f"no rig quantity {name!r}; uncertainties are given for "
                                 f"{', '.join(UNCERTAIN_FIELDS)}, tilt_deg and m2_l2")
            top = 45.0 if name == "tilt_deg" else 1.0
            if not (math.isfinite(sd) and 0 < sd <= top):
                raise ValueError(f"the uncertainty of {name} must be in (0, {top:g}], got {sd}")
        return v

    @model_validator(mode="after")
    def _moment_stated_with_its_value(self) -> RigParams:
        if "m2_l2" in self.uncertainty and self.m2_l2 is None:
            raise ValueError("uncertainty.m2_l2 is given but m2_l2 (the weighed value) is not")
        return self

    # The seed leaves Fn open; model.md fixes it to the static load of each joint. Derived
    # on access, so a copy with other masses never keeps stale forces.
    @property
    def fn0(self) -> float:
        """Arm joint normal force, N."""
        return self.Fn0 if self.Fn0 is not None else (self.m1 + self.m2) * self.g

    @property
    def fn1(self) -> float:
        """Pendulum joint normal force, N."""
        return self.Fn1 if self.Fn1 is not None else self.m2 * self.g

    @property
    def tilt_rad(self) -> float:
        return math.radians(self.tilt_deg)

    def as_array(self) -> np.ndarray:
        """Packed vector for the compiled model: see identify.model.RIG_LAYOUT."""
        return np.array(
            [self.m1, self.m2, self.j1z, self.j2x, self.j2y, self.j2z, self.l1, self.l2,
             self.L1, self.g, self.tilt_rad, self.fn0, self.fn1, self.drag1, self.spring0,
             math.radians(self.spring_rest0_deg)],
            dtype=np.float64,
        )
