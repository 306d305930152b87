"""Symmetric matrices with an arrow pattern: a dense head (the variables every row sees,
the rig and its friction) bordering a block diagonal (each shooting segment's own start
state), solved through the Schur complement of the blocks:

    [A   B] [x_h]   [b_h]     S   = A - sum_k B_k D_k^-1 B_k^T
    [B^T D] [x_d] = [b_d]     x_h = S^-1 (b_h - sum_k B_k D_k^-1 b_k)
                              x_k = D_k^-1 (b_k - B_k^T x_h)

(Brown & Dennis 1972; Triggs et al. 2000, "Bundle adjustment: a modern synthesis", sec.
6.1). A capture with lost frames has a hundred segments or more: some 600 unknowns, whose
dense solve and eigendecomposition (for the standard errors) took 30 % of a realistic
session capture's identification; here h^3 + n_blocks w^3, with h about 25 and w = 4.

The diagonal of the inverse (standard errors) follows from the same pieces:

    (M^-1)_hh = S^-1,   (M^-1)_kk = D_k^-1 + D_k^-1 B_k^T S^-1 B_k D_k^-1

with pseudo-inverses of S and of each D_k, as a dense pseudo-inverse would drop a
direction no row sees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Arrow"]


@dataclass(frozen=True)
class Arrow:
    """The pattern: `head` dense variables, then blocks of `width` variables each, every
    block coupled to the head and to nothing else."""

    head: int
    width: int

    def _parts(self, m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A (h, h), B (blocks, h, w), D (blocks, w, w) of the dense matrix m."""
        h, w = self.head, self.width
        n_b = (m.shape[0] - h) // w
        if h + n_b * w != m.shape[0]:
            raise ValueError(f"a {m.shape[0]}-square matrix is no head of {h} and blocks of {w}")
        tail = m[h:, h:].reshape(n_b, w, n_b, w)
        k = np.arange(n_b)
        d = tail[k, :, k, :]
        b = m[:h, h:].reshape(h, n_b, w).transpose(1, 0, 2)
        return m[:h, :h], b, d

    def solve(self, m: np.ndarray, rhs: np.ndarray, *, pseudo: bool = False) -> np.ndarray:
        """x with m x = rhs: np.linalg.LinAlgError where m or a block is singular; with
        `pseudo`, through pseudo-inverses of S and of each block instead (m^+ rhs where
        every block is regular)."""
        h, w = self.head, self.width
        a, b, d = self._parts(m)
        n_b = d.shape[0]
        rd = rhs[h:].reshape(n_b, w)
        # D_k^-1 [B_k^T, b_k] in one batched solve
        rhs_d = np.concatenate([b.transpose(0, 2, 1), rd[:, :, None]], axis=2)
        dinv = (np.linalg.pinv(d, hermitian=True) @ rhs_d if pseudo
                else np.linalg.solve(d, rhs_d))
        dinv_bt, dinv_b = dinv[:, :, :h], dinv[:, :, h]
        out = np.empty(rhs.shape, dtype=np.float64)
        if h:
            s = a - np.einsum("khw,kwj->hj", b, dinv_bt)
            rs = rhs[:h] - np.einsum("khw,kw->h", b, dinv_b)
            xh = np.linalg.pinv(s, hermitian=True) @ rs if pseudo else np.linalg.solve(s, rs)
            out[:h] = xh
            out[h:] = (dinv_b - dinv_bt @ xh).ravel()
        else:
            out[:] = dinv_b.ravel()
        return out

    def inverse_diagonal(self, m: np.ndarray) -> np.ndarray:
        """diag of m's inverse (module docstring), through pseudo-inverses of S and of the
        blocks: where a head variable no row sees makes m singular, the same diagonal as
        the dense pseudo-inverse's (what it drops, this drops)."""
        h = self.head
        a, b, d = self._parts(m)
        dinv = np.linalg.pinv(d, hermitian=True)
        dinv_bt = dinv @ b.transpose(0, 2, 1)  # (blocks, w, h)
        tail = np.einsum("kii->ki", dinv)
        if not h:
            return tail.ravel()
        s_inv = np.linalg.pinv(a - np.einsum("khw,kwj->hj", b, dinv_bt), hermitian=True)
        # diag(D^-1 B^T S^-1 B D^-1) per block: rows of D^-1 B^T through S^-1
        tail = tail + np.sum((dinv_bt @ s_inv) * dinv_bt, axis=2)
        return np.concatenate([np.diag(s_inv), tail.ravel()])
