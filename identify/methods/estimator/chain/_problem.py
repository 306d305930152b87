"""Output error over segments for the chain rig kinds: residuals and a block Jacobian.

The unknowns z are the standard parameters (theta~'s inertial part divided by its
normaliser, identify.model.chain), the joint friction in the law being fitted (torques
divided by the same normaliser; v_t by its logarithm), and each segment's own initial
state (angles, velocities). Segments are simulated independently, so a chaotic swing
never has to be followed further than one segment, and the Jacobian is the dense
parameter columns beside one small block per segment:

    r = (q_sim(z) - q_meas) / sigma_joint, stacked sample-major within each segment.

Columns by forward sensitivities (identify.model.chain_sensitivity): the derivative of
the discrete simulation itself, in one pass beside it, segments on every core.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ....model import (
    CHAIN_FRICTION_TERMS,
    ChainParams,
    chain_sensitivity,
    inertial_names,
    inertial_normaliser,
)
from ....solvers import BlockJacobian

#: the fitted terms of one joint per friction law (v_t enters as log v_t)
LAW_TERMS: dict[str, tuple[str, ...]] = {
    "viscous": ("b",),
    "coulomb-viscous": ("Fc", "b"),
    "brown-mcphee": ("Fc", "Fs", "vt", "b"),
    "coulomb-viscous-drag": ("Fc", "b", "cd"),
    "brown-mcphee-drag": ("Fc", "Fs", "vt", "b", "cd"),
}
#: rad/s: the tanh width of the Coulomb + viscous law, whose v_t is not fitted
VT_COULOMB = 1e-2
_TERM_COLUMN = {term: c for c, term in enumerate(CHAIN_FRICTION_TERMS)}
_DIVERGED_RAD = 10.0  # a diverged simulation counts as this far from the data


@dataclass(frozen=True)
class ChainData:
    """The samples a fit sees: segments of measured angles on one step."""

    q: np.ndarray  # (N, n) angles of all segments, stacked
    lengths: np.ndarray  # (S,) samples per segment
    t_start: np.ndarray  # (S,) s, each segment's first sample on the record's clock
    dt: float
    sigma: np.ndarray  # (n,) rad, noise per joint
    g_plane: float
    slow: np.ndarray  # (N,) bool: the step from this row meets a joint's reversal
    substeps: int | np.ndarray = 1  # RK4 steps per sample step, or one count per row
    floor: float = 0.0  # rad, the noise floor: one encoder quantum's rms

    @property
    def links(self) -> int:
        return int(self.q.shape[1])

    @property
    def bounds(self) -> np.ndarray:
        """Row offsets of the segments in q, S + 1 of them."""
        return np.concatenate([[0], np.cumsum(self.lengths)])


def law_name(laws: Sequence[str]) -> str:
    """The friction law of a fit: one name when every joint has it, else each joint's."""
    return laws[0] if len(set(laws)) == 1 else ", ".join(
        f"joint {i + 1} {law}" for i, law in enumerate(laws))


class ChainProblem:
    """Residuals and Jacobian of a friction law per joint on ChainData (one law names it
    for every joint)."""

    def __init__(self, data: ChainData, laws: str | Sequence[str]):
        n = data.links
        laws = (laws,) * n if isinstance(laws, str) else tuple(laws)
        for law in laws:
            if law not in LAW_TERMS:
                raise ValueError(f"friction law {law!r}: expected one of {', '.join(LAW_TERMS)}")
        if len(laws) != n:
            raise ValueError(f"{len(laws)} friction laws for {n} joints")
        self.data, self.laws = data, laws
        self.norm = inertial_normaliser(n)
        self.inertial = [k for k in inertial_names(n) if k != inertial_names(n)[self.norm]]
        #: each joint's fitted terms, in z's order after the standard parameters
        self.joint_terms = [LAW_TERMS[law] for law in laws]
        self.n_param = len(self.inertial) + sum(len(t) for t in self.joint_terms)
        self.width = 2 * n  # state columns per segment

    @property
    def law(self) -> str:
        return law_name(self.laws)

    def _friction_slots(self) -> list[tuple[int, int, str]]:
        """(position in z, joint, term) of every fitted friction term."""
        k = len(self.inertial)
        return [(k + c, i, t) for c, (i, t) in enumerate(
            (i, t) for i, terms in enumerate(self.joint_terms) for t in terms)]

    def parameter_names(self) -> list[str]:
        norm = inertial_names(self.data.links)[self.norm]
        names = [f"{k}/{norm}" for k in self.inertial]
        return names + [f"vt{i + 1}" if t == "vt" else f"{t}{i + 1}/{norm}"
                        for _, i, t in self._friction_slots()]

    # --- z <-> parameters and states -------------------------------------------------
    def params(self, z: np.ndarray) -> ChainParams:
        n = self.data.links
        k = len(self.inertial)
        inertial = np.insert(z[:k], self.norm, 1.0)
        fr = np.zeros((n, 5))
        fr[:, 2] = VT_COULOMB
        for at, i, term in self._friction_slots():
            fr[i, _TERM_COLUMN[term]] = np.exp(z[at]) if term == "vt" else z[at]
        for i, terms in enumerate(self.joint_terms):
            if "Fs" not in terms:
                fr[i, 1] = fr[i, 0]
        return ChainParams(inertial, fr)

    def pack(self, params: ChainParams, states: np.ndarray) -> np.ndarray:
        """z from normalised parameters (terms outside the laws are dropped) and states."""
        k = [params.inertial[i] for i in range(params.inertial.size) if i != self.norm]
        fr = [np.log(params.friction[i, 2]) if t == "vt" else params.friction[i, _TERM_COLUMN[t]]
              for _, i, t in self._friction_slots()]
        return np.concatenate([k, fr, np.asarray(states, dtype=np.float64).ravel()])

    def states(self, z: np.ndarray) -> np.ndarray:
        return z[self.n_param:].reshape(-1, self.width)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lo = np.full(self.n_param + self.width * self.data.lengths.size, -np.inf)
        hi = -lo
        for i, name in enumerate(self.inertial):
            if name.startswith(("kappa", "nu")):
                lo[i] = 1e-12  # a pendulum's inertia and static moments are positive
        for at, _, term in self._friction_slots():
            lo[at], hi[at] = (np.log(1e-5), np.log(10.0)) if term == "vt" else (0.0, np.inf)
        return lo, hi

    # --- residuals and Jacobian ------------------------------------------------------
    def simulate(self, z: np.ndarray) -> np.ndarray:
        d = self.data
        return self.params(z).simulate(d.g_plane, self.states(z), d.lengths, d.dt, d.substeps)

    def _weighted(self, sim: np.ndarray) -> np.ndarray:
        e = np.where(np.isfinite(sim), sim - self.data.q, _DIVERGED_RAD)
        return (e / self.data.sigma).ravel()

    def residuals(self, z: np.ndarray) -> np.ndarray:
        return self._weighted(self.simulate(z))

    def _triplets(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(raw parameter, z column, weight): dq/dz_c = sum weight * dq/dp_raw (the raw
        layout of identify.model.chain_sensitivity)."""
        raw = [i for i in range(len(self.inertial) + 1) if i != self.norm]
        col = list(range(len(raw)))
        weight = [1.0] * len(raw)
        base = len(self.inertial) + 1
        for at, i, term in self._friction_slots():
            raw.append(base + 5 * i + _TERM_COLUMN[term])
            col.append(at)
            weight.append(float(np.exp(z[at])) if term == "vt" else 1.0)
            if term == "Fc" and "Fs" not in self.joint_terms[i]:  # Fs = Fc moves with it
                raw.append(base + 5 * i + _TERM_COLUMN["Fs"])
                col.append(at)
                weight.append(1.0)
        return np.array(raw), np.array(col), np.array(weight)

    def jacobian(self, z: np.ndarray, r: np.ndarray) -> BlockJacobian:
        d = self.data
        p = self.params(z)
        raw, col, weight = self._triplets(z)
        _, d_z, d_x0 = chain_sensitivity(p.inertial, p.friction, d.g_plane, self.states(z),
                                         d.lengths, d.dt, d.substeps, raw, col, weight,
                                         self.n_param, row_scale=1.0 / d.sigma)
        jp, js = d_z.reshape(-1, self.n_param), d_x0.reshape(-1, self.width)  # views
        row_bounds = d.bounds * d.links
        blocks = [(int(row_bounds[s]), int(row_bounds[s + 1]),
                   js[row_bounds[s]:row_bounds[s + 1]]) for s in range(d.lengths.size)]
        return BlockJacobian(jp, blocks)
