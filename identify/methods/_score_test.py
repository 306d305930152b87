"""Would an extra term pay for itself? The score (Lagrange multiplier) test, at the fit
without it, so the richer model is fitted only when it might win.

At the restricted fit (residuals r, Jacobian J over every fitted variable), adding one
term with residual derivative j (taken at the term's null value) lowers the sum of
squares, to first order, by

    S = (j' r)^2 / (j' (I - J (J'J)^-1 J') j)

(Rao 1948; Engle, "Wald, likelihood ratio and Lagrange multiplier tests", 1984). With
the rows weighed by each joint's residual rms, S is the drop in the BIC's n log(RSS/n)
term, so the term can win the BIC only if S exceeds log n.
"""

from __future__ import annotations

import numpy as np

from ..model import NORMALISED
from ._shooting import EXTRA_TERMS, BlockJacobian, ShootingProblem

__all__ = ["score", "score_statistic"]


def score_statistic(problem: ShootingProblem, z: np.ndarray, rms: np.ndarray,
                    term: str, step: float = 1e-9) -> float:
    """S of adding the extra term `term` (EXTRA_TERMS) at the fit z of `problem`, which
    does not have it; rows weighed by rms (per joint, rad)."""
    u_index = NORMALISED.index(EXTRA_TERMS[term])
    r_full = problem.fun(z)
    jac = problem.jac(z, r_full)
    u = problem.u_of(z[:problem.n_global])
    if u[u_index] != 0.0:
        raise ValueError(f"the fit already has {term}")
    up = u.copy()
    up[u_index] = step
    base = r_full[:problem.n_data]
    j_d = (problem.residuals_at(up, problem.states(z)) - base) / step
    # weigh each joint's rows by what the fit left of it (the BIC's variance), not sigma
    w = np.tile(problem.sigma / rms, base.size // 2)
    r = base * w
    jd = j_d * w
    rows = np.zeros(jac.shape[0])
    rows[:problem.n_data] = w
    rows[problem.n_data:] = 1.0
    scaled = jac.rows_scaled(rows)
    return score(scaled, np.concatenate([r, r_full[problem.n_data:]]),
                 np.concatenate([jd, np.zeros(jac.shape[0] - jd.size)])[:, None])


def score(jac: BlockJacobian, r: np.ndarray, columns: np.ndarray) -> float:
    """S = g' M^-1 g of adding the residual derivatives `columns` (rows, c) at a fit with
    weighed residuals r and Jacobian jac (every fitted variable): g = C' r and M = C' C,
    each with what the fitted variables could take out of them removed,
    g = C' r - B' A^-1 J' r, M = C' C - B' A^-1 B, A = J' J, B = J' C. One column
    gives the module's formula; c columns can win the BIC only if S exceeds c log n."""
    info = jac.gram()
    cross = np.column_stack([jac.rmatvec(columns[:, k]) for k in range(columns.shape[1])])
    along = np.linalg.lstsq(info, cross, rcond=None)[0]
    # r with what the fitted variables could still take out of it removed (nothing at an
    # exact optimum; a reweighing leaves a little)
    g = columns.T @ r - along.T @ jac.rmatvec(r)
    m = columns.T @ columns - cross.T @ along
    try:
        s = float(g @ np.linalg.solve(m, g))
    except np.linalg.LinAlgError:
        return 0.0
    return max(s, 0.0)
