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

import math

import numpy as np

from ...solvers import BlockJacobian

__all__ = ["could_win_bic", "not_fitted_note", "one_sided", "score", "score_and_step"]


def score(jac: BlockJacobian, r: np.ndarray, columns: np.ndarray) -> float:
    """S = g' M^-1 g of adding the residual derivatives `columns` (rows, c) at a fit with
    weighed residuals r and Jacobian jac (every fitted variable): g = C' r and M = C' C,
    each with what the fitted variables could take out of them removed,
    g = C' r - B' A^-1 J' r, M = C' C - B' A^-1 B, A = J' J, B = J' C. One column
    gives the module's formula; c columns can win the BIC only if S exceeds c log n."""
    return score_and_step(jac, r, columns)[0]


def score_and_step(jac: BlockJacobian, r: np.ndarray, columns: np.ndarray
                   ) -> tuple[float, np.ndarray]:
    """score's S, and the terms' values that first order gives, -M^-1 g (the Gauss-Newton
    step of the richer model from the fit, the fitted variables free to follow): where a
    fit with the terms may start (NaN where M is singular)."""
    info = jac.gram()
    cross = np.column_stack([jac.rmatvec(columns[:, k]) for k in range(columns.shape[1])])
    along = np.linalg.lstsq(info, cross, rcond=None)[0]
    # r with what the fitted variables could still take out of it removed (nothing at an
    # exact optimum; a reweighing leaves a little)
    g = columns.T @ r - along.T @ jac.rmatvec(r)
    m = columns.T @ columns - cross.T @ along
    try:
        step = -np.linalg.solve(m, g)
    except np.linalg.LinAlgError:
        return 0.0, np.full(columns.shape[1], np.nan)
    return max(float(-(g @ step)), 0.0), step


def could_win_bic(statistic: float, columns: int, rows: int) -> bool:
    """Whether terms with score `statistic` might win Schwarz's criterion: S above half
    their price there, columns log(rows) (the factor 2 spares the linearisation; on
    drag-free Furuta captures S was 0.2-4, with drag 3,900-15,700)."""
    return statistic > 0.5 * columns * math.log(rows)


def one_sided(statistic: float, step: float) -> float:
    """The score of one term that cannot go below zero, its null (a drag): S
    where first order moves it up (`step`, score_and_step's), 0 where it asks for less.
    The richer model's best fit is then the restricted one, to first order, so it cannot
    win (the one-sided score test: Silvapulle & Silvapulle, JASA 90, 1995). A trial that
    ignored the sign ran its term down to nothing: on bench_speed's realistic captures 6
    and 9 (seed 1, no drag; S 20 and 28, steps negative) a drag fitted from 1e-7 N m s^2
    slid to 2e-10 in 26 simulations (capture 6: 1.7 of its 3.9 s) and lost."""
    return statistic if step > 0 else 0.0


def not_fitted_note(statistic: float, columns: int, rows: int, step: float | None = None
                    ) -> str:
    """Why terms the score test turned down were not fitted, in one line; `step`: one
    term's first-order value where it asked for less than zero (one_sided)."""
    if step is not None and step <= 0:
        return f"first order puts it below zero (score {statistic:.3g}): it could not win"
    return (f"score {statistic:.3g} below half of the BIC's price "
            f"{columns * math.log(rows):.3g}: it could not win")
