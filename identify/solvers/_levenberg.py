"""Levenberg-Marquardt on the normal equations, for tall residual vectors and few parameters.

scipy.optimize.least_squares factors the whole Jacobian (an SVD of 70,000 x 11 per
iteration for a 35 s capture); with a dozen parameters the p x p normal equations
carry the same step at a fraction of the cost:
    (J^T J + lambda diag(J^T J)) delta = -J^T r          (Marquardt 1963)
lambda follows the gain ratio rho (actual / predicted decrease): divided by 10 when the
linear model predicted well (rho > 0.75), multiplied by 2, 4, 8... after a rejected
step (Madsen, Nielsen & Tingleff 2004, "Methods for non-linear least squares
problems", sec. 2.2); steps are projected onto box bounds.

Stopping is statistical: when no parameter moves by more than `sigma_tol` of its own
standard error sqrt(s^2 [(J^T J)^-1]_ii), further iterations cannot change what the
result reports. With residuals in standard deviations (cost = chi^2 / 2), `chi2_tol`
also stops when an accepted step lowers chi^2 by less than it: a drop of delta moves
the estimate by about sqrt(delta) standard errors along the step, which a parameter
in a curved, flat valley (a Stribeck pair) can otherwise keep doing for dozens of
iterations while its linearised standard error stays tiny. A small step or drop is
what a damped step gives as well, though: with `remaining_chi2` either stops the fit
only where the Gauss-Newton model also promises less than that many s^2 from there,
g^T (J^T J)^-1 g (the Newton decrement, in chi^2). On a Table V capture a fit stopped
on steps below 0.1 standard errors with 33 of chi^2 left, its arm's mu_v 10 times the
truth with an interval that missed it; on the real double pendulum's record (residuals
far above the noise) the guard took 49 % longer for 1e-4 of the cost and the same
held-out fits, so the chain fits, stopped by `ftol`, go without it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ._arrow import Arrow

#: chi^2 the linear model may still promise where a small step or drop stops the fit, in
#: units of the residuals' variance s^2: about one standard error of movement along the
#: step (see the module's docstring)
REMAINING_CHI2 = 1.0


class JacobianOperator(Protocol):
    """A Jacobian kept in a structure of its own (blocks): what the normal equations need.
    One whose J^T J has an arrow pattern (multiple shooting: the rig's columns and each
    segment's) may say so with an `arrow` attribute (an Arrow, or None): the steps and
    standard errors are then solved through it."""

    def gram(self) -> np.ndarray: ...  # J^T J

    def rmatvec(self, r: np.ndarray) -> np.ndarray: ...  # J^T r


def _normal(j: Any, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(j, np.ndarray):
        return j.T @ j, j.T @ r
    return j.gram(), j.rmatvec(r)


def _solve(a: np.ndarray, rhs: np.ndarray, arrow: Arrow | None) -> np.ndarray:
    return arrow.solve(a, rhs) if arrow is not None else np.linalg.solve(a, rhs)


def _inverse_diagonal(a: np.ndarray, arrow: Arrow | None) -> np.ndarray:
    if arrow is not None:
        return arrow.inverse_diagonal(a)
    return np.diag(np.linalg.pinv(a, hermitian=True))


def _promised(a: np.ndarray, g: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray,
              arrow: Arrow | None = None) -> float:
    """The chi^2 a whole Gauss-Newton step promises to take off, g^T A^-1 g, over the
    variables not held at a bound the descent pushes them against."""
    held = ((x <= lo) & (g > 0)) | ((x >= hi) & (g < 0))
    free = ~held
    gf = g[free]
    af = a[np.ix_(free, free)] if held.any() else a
    if arrow is not None and not held[arrow.head:].any():
        return float(gf @ Arrow(arrow.head - int(held.sum()), arrow.width)
                     .solve(af, gf, pseudo=True))
    return float(gf @ (np.linalg.pinv(af, hermitian=True) @ gf))


@dataclass
class LMResult:
    x: np.ndarray
    fun: np.ndarray  # residuals at x
    jac: Any  # Jacobian at x: an array, or what jac returned (a JacobianOperator)
    cost: float  # 0.5 ||r||^2
    nfev: int
    njev: int
    success: bool
    message: str
    #: False when the derivatives overflow at the start already (x is the start): the
    #: problem, not the solver, needs changing there
    jac_finite: bool = True
    #: stopped on a step below sigma_tol standard errors: x is where the steps end, not
    #: only where the cost stopped falling (a chi^2 drop below chi2_tol on a noisy capture
    #: still left steps of 0.3 standard errors)
    small_steps: bool = False


def levenberg_marquardt(fun: Callable[[np.ndarray], np.ndarray],
                        jac: Callable[[np.ndarray, np.ndarray], Any], x0: np.ndarray,
                        bounds: tuple[np.ndarray, np.ndarray], *, sigma_tol: float = 0.05,
                        ftol: float = 1e-12, max_iter: int = 150, lam0: float = 1e-6,
                        max_step: np.ndarray | None = None,
                        chi2_tol: float | None = None,
                        remaining_chi2: float | None = None) -> LMResult:
    """Minimise 0.5 ||fun(x)||^2 within bounds. jac(x, r) returns d r / d x at x: an array,
    or a JacobianOperator (only its normal equations are used).

    max_step bounds |delta_i| per iteration (each component clipped), a trust region
    that keeps a Gauss-Newton step from leaping across the valley. remaining_chi2 (e.g.
    REMAINING_CHI2): a small step or drop stops the fit only where the Gauss-Newton step
    promises less than this many s^2 of chi^2 (module docstring); None: it stops it.
    """
    lo, hi = bounds
    x = np.clip(np.asarray(x0, dtype=np.float64), lo, hi)
    r = fun(x)
    cost = 0.5 * float(r @ r)
    j = jac(x, r)
    arrow: Arrow | None = getattr(j, "arrow", None)
    nfev, njev = 1, 1
    lam, nu = lam0, 2.0
    message, success = "maximum iterations reached", False
    dof = max(1, r.size - x.size)
    with np.errstate(over="ignore", invalid="ignore"):
        a, g = _normal(j, r)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(g))):
        return LMResult(x=x, fun=r, jac=j, cost=cost, nfev=1, njev=1, success=False,
                        message="the derivatives overflow at the start", jac_finite=False)
    for _ in range(max_iter):
        # Marquardt's scaling with a floor: a parameter the data barely see (a stuck joint's
        # viscous term) must not get an unbounded step
        d = np.maximum(np.diag(a), 1e-9 * max(float(np.max(np.diag(a))), 1e-300))
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                step = _solve(a + lam * np.diag(d), -g, arrow)
        except np.linalg.LinAlgError:
            step = np.full_like(x, np.nan)
        if not np.all(np.isfinite(step)):
            lam, nu = lam * nu, 2 * nu
            if lam > 1e16:
                message, success = "no step reduces the cost", True
                break
            continue
        if max_step is not None:  # per component, so one wild direction cannot stall the rest
            step = np.clip(step, -max_step, max_step)
        x_new = np.clip(x + step, lo, hi)
        dx = x_new - x
        # the decrease the linear model promises
        predicted = float(-(g @ dx) - 0.5 * dx @ (a @ dx))
        accepted = predicted > 0
        if accepted:
            # (a step the clipping to max_step or the bounds turned uphill in the linear
            # model is refused without simulating it: most of a fit's rejected steps)
            r_new = fun(x_new)
            nfev += 1
            cost_new = 0.5 * float(r_new @ r_new)
            rho = (cost - cost_new) / predicted
            accepted = bool(np.isfinite(cost_new) and rho > 0)
        if accepted:
            # where the model's derivatives overflow (a transition too stiff to follow)
            # the step counts as failed: the next one is shorter
            with np.errstate(over="ignore", invalid="ignore"):
                j_new = jac(x_new, r_new)
                a_new, g_new = _normal(j_new, r_new)
            njev += 1
            accepted = bool(np.all(np.isfinite(a_new)) and np.all(np.isfinite(g_new)))
        if not accepted:
            lam, nu = lam * nu, 2 * nu
            if lam > 1e16:
                message, success = "no step reduces the cost", True
                break
            continue
        drop = cost - cost_new
        sigma = np.sqrt(np.clip(_inverse_diagonal(a, arrow) * 2 * cost_new / dof, 1e-300, None))
        x, r, cost, j, a, g = x_new, r_new, cost_new, j_new, a_new, g_new
        # a good linear model (rho near 1) earns a near Gauss-Newton step next time
        lam = max(lam * (0.1 if rho > 0.75 else 0.5 if rho > 0.25 else 2.0), 1e-15)
        nu = 2.0
        if drop <= ftol * cost:
            message, success = "relative cost reduction below ftol", True
            break
        small_step = bool(np.all(np.abs(dx) <= sigma_tol * sigma))
        small_drop = chi2_tol is not None and 2.0 * drop < chi2_tol
        # a damped step is small too: stop only where the linear model agrees
        # in units of the residuals' own variance s^2, as the standard errors above: a
        # model the data outgrow (residuals above the noise) has larger ones
        if (small_step or small_drop) and (remaining_chi2 is None
                                           or _promised(a, g, x, lo, hi, arrow)
                                           < remaining_chi2 * 2 * cost / dof):
            message = (f"steps below {sigma_tol:g} standard errors" if small_step
                       else f"chi^2 drop below {chi2_tol:g}")
            return LMResult(x=x, fun=r, jac=j, cost=cost, nfev=nfev, njev=njev,
                            success=True, message=message, small_steps=small_step)
    return LMResult(x=x, fun=r, jac=j, cost=cost, nfev=nfev, njev=njev, success=success,
                    message=message)
