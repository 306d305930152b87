"""IntegralFit: the result object of integral_identify (seed 004)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MODELS = {"second_order": ("c", "k"), "delay": ("a1", "a2", "a3")}


@dataclass(frozen=True)
class IntegralFit:
    """Result of integral_identify. Segment arrays have length n, piece arrays length P.

    A piece is the part of one segment inside one gap-free run of samples; each piece has
    its own initial condition (theta at its start and the alpha or beta parameters).
    """

    model: str
    constant: bool
    boundaries: np.ndarray  # (n+1,) T_0..T_n, snapped to sample times
    coef_names: tuple[str, ...]
    coef: np.ndarray  # (n, q): c, k (second order) or a1, a2, a3 (delay) per segment
    coef_std: np.ndarray  # (n, q); NaN where the parameter sits on an active bound
    b: float | None  # input gain: identified, the known value, or None without input
    b_std: float | None
    offset: np.ndarray | None  # (n,) e_i: k_i theta_eq,i (second order), a3_i theta_eq,i
    offset_std: np.ndarray | None
    piece_segment: np.ndarray  # (P,) segment of each piece
    piece_first: np.ndarray  # (P,) first row of each piece
    piece_last: np.ndarray  # (P,) last row (inclusive)
    piece_theta0: np.ndarray  # (P,) theta_{i-1}: the reconstruction's value at the start
    piece_slopes: np.ndarray  # (P, order-1): alpha (second order) or beta1, beta2 (delay)
    piece_end: np.ndarray  # (P,) the reconstruction's value at the last row
    initial_state: np.ndarray  # (P, order): theta, theta' (, theta'') at each piece start
    joins: np.ndarray  # (J, 3) int: row, piece before, piece after (C0 continuity imposed)
    t: np.ndarray
    theta: np.ndarray
    reconstructed: np.ndarray  # (N,) integral reconstruction; NaN on rows not used
    residuals: np.ndarray  # (N,) theta - reconstructed
    x: np.ndarray  # all parameters, named by param_names
    std: np.ndarray  # standard deviations from the measurement noise (see noise_std)
    cov: np.ndarray  # their covariance
    param_names: tuple[str, ...]
    rss: float
    dof: int
    noise_std: float  # white measurement noise estimated from the residual's differences
    active: tuple[str, ...]  # inequality constraints that hold with equality

    def _col(self, name: str) -> np.ndarray:
        if name not in self.coef_names:
            raise AttributeError(f"{self.model} model has no coefficient {name!r}")
        return self.coef[:, self.coef_names.index(name)]

    @property
    def c(self) -> np.ndarray:
        return self._col("c")

    @property
    def k(self) -> np.ndarray:
        return self._col("k")

    @property
    def a(self) -> np.ndarray:
        if self.model != "delay":
            raise AttributeError("only the delay model has a1, a2, a3")
        return self.coef

    @property
    def damping_ratio(self) -> np.ndarray:
        """Equivalent damping ratio c / (2 sqrt k) per segment (second order)."""
        return self.c / (2.0 * np.sqrt(self.k))

    @property
    def equilibrium(self) -> np.ndarray:
        """theta_eq,i = e_i / k_i (or e_i / a3_i): zero without an offset."""
        n = self.coef.shape[0]
        if self.offset is None:
            return np.zeros(n)
        return self.offset / self.coef[:, -1]
