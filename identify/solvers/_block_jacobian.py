"""A Jacobian kept in blocks: dense columns of the global variables beside one small block
per segment, whose state columns touch only that segment's rows (multiple shooting).

Levenberg-Marquardt needs only J^T J and J^T r (JacobianOperator); built block by block
they cost a fraction of the dense products.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._arrow import Arrow


@dataclass
class BlockJacobian:
    """Each row's derivatives by the global variables (dense), and each segment's state
    columns (the same number for every segment), which touch only that segment's rows."""

    dense: np.ndarray  # (rows, n_global)
    blocks: list[tuple[int, int, np.ndarray]]  # (first row, stop row, (stop - first, width))

    @property
    def n_global(self) -> int:
        return int(self.dense.shape[1])

    @property
    def width(self) -> int:
        """State columns per segment."""
        return int(self.blocks[0][2].shape[1]) if self.blocks else 0

    @property
    def arrow(self) -> Arrow | None:
        """J^T J's pattern: the global variables, then a block per segment (None: no
        segment)."""
        return Arrow(self.n_global, self.width) if self.width else None

    @property
    def shape(self) -> tuple[int, int]:
        return self.dense.shape[0], self.n_global + self.width * len(self.blocks)

    def gram(self, rows: int | None = None) -> np.ndarray:
        """J^T J over the first `rows` rows (all by default)."""
        d = self.dense if rows is None else self.dense[:rows]
        n_g, n, w = self.n_global, self.shape[1], self.width
        out = np.zeros((n, n))
        out[:n_g, :n_g] = d.T @ d
        for k, (a, b, blk) in enumerate(self.blocks):
            if rows is not None and a >= rows:
                continue
            c = n_g + w * k
            cross = self.dense[a:b].T @ blk
            out[:n_g, c:c + w] = cross
            out[c:c + w, :n_g] = cross.T
            out[c:c + w, c:c + w] = blk.T @ blk
        return out

    def rows_scaled(self, w: np.ndarray) -> BlockJacobian:
        """diag(w) J: each row weighed by w (e.g. another variance per joint)."""
        return BlockJacobian(self.dense * w[:, None],
                             [(a, b, blk * w[a:b, None]) for a, b, blk in self.blocks])

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """J^T r."""
        out = np.empty(self.shape[1])
        out[:self.n_global] = self.dense.T @ r
        w = self.width
        for k, (a, b, blk) in enumerate(self.blocks):
            c = self.n_global + w * k
            out[c:c + w] = blk.T @ r[a:b]
        return out
