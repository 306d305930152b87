"""What identification is told of a chain rig (ChainRig) and the chain model's parameter
sets (ChainParams)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from .._kinds import parse_rig_kind
from .._params import G_ACCEL
from ._layout import (
    CHAIN_FRICTION_TERMS,
    inertial_names,
    inertial_normaliser,
    link_pairs,
    unpack_inertial,
)

FrictionModel = Literal["auto", "viscous", "coulomb-viscous", "brown-mcphee",
                        "coulomb-viscous-drag", "brown-mcphee-drag"]


class ChainRig(BaseModel):
    """What identification is told of a chain rig: its kind, plane and friction law."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field("single", description="single or nlink:N (N = 1-3)")
    tilt_deg: float = Field(0.0, ge=0, lt=90,
                            description="plane of motion from the vertical (single), deg")
    g: float = Field(G_ACCEL, gt=0, description="gravity, m/s^2")
    friction: FrictionModel = Field(
        "auto", description="joint friction law; auto tries Coulomb + viscous and "
                            "Brown-McPhee and keeps the one the BIC prefers")

    def model_post_init(self, context: Any, /) -> None:
        kind, _ = parse_rig_kind(self.kind)
        if kind == "furuta":
            raise ValueError("rig kind furuta has its own model (RigParams), not ChainRig")

    @property
    def links(self) -> int:
        return parse_rig_kind(self.kind)[1]

    @property
    def g_plane(self) -> float:
        """Gravity in the plane of motion."""
        return self.g * math.cos(math.radians(self.tilt_deg))

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(f"theta{i + 1}" for i in range(self.links))


@dataclass(frozen=True)
class ChainParams:
    """The chain's theta~: inertial part [mu_ij, kappa_i, nu_i] and joint friction (n, 5)
    columns Fc, Fs, vt, b, cd, all in one common unit (physical, or divided by the normaliser)."""

    inertial: np.ndarray
    friction: np.ndarray

    @property
    def links(self) -> int:
        return int(self.friction.shape[0])

    def normalised(self) -> ChainParams:
        """Divided by the normaliser (mu_{n-1,n}, or nu_1 for one link); v_t is kept."""
        c = float(self.inertial[inertial_normaliser(self.links)])
        fr = self.friction.copy()
        fr[:, [0, 1, 3, 4]] /= c
        return ChainParams(self.inertial / c, fr)

    def simulate(self, g_plane: float, x0: np.ndarray, lengths: np.ndarray, dt: float,
                 substeps: int | np.ndarray = 1) -> np.ndarray:
        """Angles of segments of lengths[s] samples dt apart, each from its state x0[s];
        substeps: RK4 steps per sample step, one count or one per output row."""
        from ._equations import chain_segments  # compiled: loaded when first simulated

        kappa, mu, nu = unpack_inertial(self.inertial, self.links)
        lengths = np.asarray(lengths, dtype=np.int64)
        # a writable copy: a read-only schedule (a broadcast count) would be a second
        # signature, compiled again
        sub = np.array(np.broadcast_to(np.asarray(substeps, dtype=np.int64),
                                       (int(lengths.sum()),)))
        return chain_segments(kappa, mu, nu, g_plane, np.ascontiguousarray(self.friction),
                              np.ascontiguousarray(x0, dtype=np.float64), lengths, dt, sub)

    def run(self, g_plane: float, x: np.ndarray, n_out: int, dt: float,
            substeps: int = 1) -> np.ndarray:
        """Angles (n_out, n) from the state x (row 0), dt apart; x is advanced in place to
        the last row's state."""
        from ._equations import chain_run

        kappa, mu, nu = unpack_inertial(self.inertial, self.links)
        return chain_run(kappa, mu, nu, g_plane, np.ascontiguousarray(self.friction), x, n_out,
                         dt / substeps, substeps)

    @classmethod
    def physical(cls, m: list[float], com: list[float], l: list[float], J: list[float],
                 b: list[float] | None = None) -> ChainParams:
        """From link masses (kg), joint-to-centre-of-mass distances (m), lengths joint to
        joint (m; the last link's is not needed), inertias about the centre of mass (kg m^2)
        and viscous joint friction (N m s)."""
        n = len(m)
        lengths = list(l) + [0.0] * (n - len(l))
        if not (len(com) == len(J) == n) or n < 1:
            raise ValueError(f"m, com and J need one entry per link ({n})")
        tail = [sum(m[k + 1:]) for k in range(n)]
        nu = [m[i] * com[i] + lengths[i] * tail[i] for i in range(n)]
        kappa = [J[i] + m[i] * com[i] ** 2 + lengths[i] ** 2 * tail[i] for i in range(n)]
        mu = [lengths[i] * nu[j] for i, j in link_pairs(n)]
        fr = np.zeros((n, 5))
        fr[:, 3] = b if b is not None else 0.0
        return cls(np.array(mu + kappa + nu, dtype=np.float64), fr)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], links: int) -> ChainParams:
        """A parameter set from JSON: physical (m, com, l, J, b) or by name (kappa1, nu1,
        mu12, ... and Fc1, Fs1, vt1, b1, cd1, any common unit; missing friction terms are 0)."""
        if "m" in data:
            p = cls.physical(list(data["m"]), list(data["com"]), list(data.get("l", [])),
                             list(data["J"]), list(data.get("b", [0.0] * len(data["m"]))))
            if p.links != links:
                raise ValueError(f"the parameter set has {p.links} links, the rig {links}")
            return p
        names = inertial_names(links)
        missing = [k for k in names if k not in data]
        if missing:
            raise ValueError(f"the parameter set lacks {', '.join(missing)} (or give m, com, "
                             "l, J, b)")
        fr = np.zeros((links, 5))
        for i in range(links):
            for c, term in enumerate(CHAIN_FRICTION_TERMS):
                fr[i, c] = float(data.get(f"{term}{i + 1}", 0.0))
        fr[:, 1] = np.where(fr[:, 1] == 0, fr[:, 0], fr[:, 1])  # no Fs: Coulomb
        fr[:, 2] = np.where((fr[:, 2] <= 0) & (fr[:, 0] != 0), 1e-3, fr[:, 2])
        return cls(np.array([float(data[k]) for k in names]), fr)


__all__ = ["ChainParams", "ChainRig", "FrictionModel"]
