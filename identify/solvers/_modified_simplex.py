"""The modified simplex algorithm of seed 003 (Cheok, Hu & Loh, Appendix), as a general optimiser.

`modified_simplex(fun, x0, ...)` minimises a scalar function without derivatives and
returns a `scipy.optimize.OptimizeResult`, like `scipy.optimize.minimize(...,
method="Nelder-Mead")`. It is the classical Spendley-Hext-Himsworth simplex with the
three modifications the seed's Appendix lists, each on by default and each switchable
off so that its effect can be measured:

(1) 2n points, not n+1 (`npoints`). "Lesuisse [10] has shown that the optimal number of
    points is 2n and not the minimum number (n+1)."
(2) Hanus contraction (`hanus`). "If the contraction point is not better than the
    current worst one [...] a new point z_n is chosen halfway between the worst point and
    the best one: z_n = (z_l + z_h)/2 (16). If the new point z_n is better than the current
    worst point z_h, it takes its place in the simplex with the associated cost given by
    f(z_n). If not, it also takes the place of the worst point but with the associated
    cost given by f(z_h), and a new iteration is started." With `hanus=False` the
    classical general contraction of eq. (14) is done instead.
(3) Restart on a successful extension (`restart_on_extension`), the seed's own
    modification: "If the new point z_e after extension is better than the reflection
    point z_r, then take this point as initial point, and a new simplex algorithm is
    started with new set of initial points around z_e. If not, continue in usual way."

The transformations (Appendix, eqs. 11-15; m = number of points):

    centroid     z_cr = sum_{i != h} z_i / (m - 1)                     (12)
    reflection   z_r  = (1 + alpha) z_cr - alpha z_h,  alpha = 1       (11)
    contraction  z_c  = (1 - beta) z_cr + beta z_h,    beta = 0.5      (13)
    extension    z_e  = (1 - gamma) z_cr + gamma z_r,  gamma = 2       (15)
    general contraction  z_i = (1 - beta) z_i + beta z_l, all i        (14)

(eq. 14 is printed "(1 - beta) z_i + beta z_i"; "all the points are contracted towards
the best point" fixes the second z_i as z_l.) One iteration, in the Appendix's words:

* "The simplex iteration begins with reflection. [...] If the reflection point is better
  than the current best point, the extension procedure is tried; else the reflection
  point is compared to all the other points except the worst one. If the reflection
  point is better than one of other points, then it takes the place of the worst one and
  a new iteration can be repeated; else the contraction procedure is tried."
* "The contraction procedure consists of trying to replace the worst point z_h by a
  contraction point z_c. If the contraction point is better than the worst point, then
  it takes the place of that point and a new iteration starts; else" the Hanus step (2)
  (or the general contraction, eq. 14, with `hanus=False`).
* "When the reflection point is better than the current best one, the extension
  procedure is applied. If this new extension point is better than the reflection point,
  it replaces that point in the simplex" (classical; with modification (3): restart
  around z_e), else z_r replaces the worst point.
* "Moreover, when the simplex has reached an optimum, the entire procedure can be
  restarted with a new simplex for exploring the vicinity around this newly found
  optimum." (`restarts_at_optimum`)

Where the seed is silent, this implementation chooses (and says so):

* Initial simplex of m = 2n points around a point z with per-coordinate steps s: z itself
  (so the best point found so far is never lost), z + s_i d_i e_i for every i, and
  z - s_i d_i e_i for every i but one, d_i = +-1. For the first simplex d = +1 and the
  missing backward point is that of the last coordinate. On a restart d is the sign of
  the extension direction z_e - z_cr, and the backward point left out is the one along the
  coordinate in which the extension moved furthest (in units of s): behind z_e in that
  direction lies z_r, already known to be worse. With npoints = n + 1 the points are z and
  the n forward ones (the classical right-angled simplex).
* Size of a restart simplex: the initial steps `scale`, i.e. "a new simplex algorithm is
  started" exactly as the first one was, only around z_e. (Keeping the size the simplex
  had reached, or the span from z_e to its points, was tried and is much worse: on
  Rosenbrock 4-D and on the servo problem of identify.seeds._servo it stalls for thousands of
  evaluations, because each restart then inherits a simplex far too long across a narrow
  valley; the full-size restart re-explores, which is also what lets this method leave
  the premature stops where scipy's Nelder-Mead ends on the servo problem.)
* The restart "at an optimum" also uses the initial `scale`; at most
  `restarts_at_optimum` such restarts are made, and they stop as soon as one improves
  the optimum by no more than `fatol`.
* "Better" is a strict "<". The reflection is compared with the stored costs of the
  other points; after a failed Hanus step the stored cost of the moved point is f(z_h),
  not its true value (as Hanus prescribes); the returned x and fun are always the best
  point actually evaluated.
* Convergence (the seed's "er", the scale of the convergence criterion) is scipy's
  Nelder-Mead test: every point within `xatol` (per coordinate) of the best and every
  stored cost within `fatol` of the best. K_max is `maxiter`; `maxfev` bounds the
  evaluations.
* Bounds (the seed has none): every trial point is projected onto the box, as scipy's
  Nelder-Mead does; a starting step that would leave the box is taken the other way.
* A NaN cost counts as +inf.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # imported where a result is made: scipy.optimize is slow to import
    from scipy.optimize import OptimizeResult

__all__ = ["initial_points", "modified_simplex"]

# operation names, as counted in result.ops and listed per iteration in result.history
OPS = ("reflection", "extension", "restart", "contraction", "hanus", "hanus_failed",
       "general_contraction", "restart_at_optimum")

Bounds = tuple[np.ndarray, np.ndarray]


class _Stop(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def initial_points(z: np.ndarray, steps: np.ndarray, npoints: int,
                   direction: np.ndarray | None = None, drop: int | None = None,
                   bounds: Bounds | None = None) -> np.ndarray:
    """The (npoints, n) starting simplex around z (see the module docstring).

    direction: signs d_i (default +1); drop: the coordinate whose backward point is left
    out when npoints < 2n + 1 (default the last). Steps that would leave `bounds` are
    taken the other way, then clipped.
    """
    z = np.asarray(z, dtype=np.float64)
    n = z.size
    if not n + 1 <= npoints <= 2 * n + 1:
        raise ValueError(f"npoints must lie in [n+1, 2n+1] = [{n + 1}, {2 * n + 1}]")
    d = np.ones(n) if direction is None else np.where(np.asarray(direction) < 0, -1.0, 1.0)
    if drop is None:
        drop = n - 1
    backward = [i for i in range(n) if i != drop] + [drop]
    pts = [z.copy()]
    for i in range(n):
        pts.append(_step(z, i, d[i] * steps[i], bounds))
    for i in backward[: npoints - n - 1]:
        pts.append(_step(z, i, -d[i] * steps[i], bounds))
    return np.array(pts)


def _step(z: np.ndarray, i: int, s: float, bounds: Bounds | None) -> np.ndarray:
    """z moved by s along coordinate i; the other way if that leaves the box, then clipped."""
    p = z.copy()
    p[i] += s
    if bounds is not None:
        lo, hi = bounds
        if p[i] > hi[i] or p[i] < lo[i]:
            p[i] = z[i] - s
        p = np.clip(p, lo, hi)
    return p


def _callback_wants_result(callback: Callable[..., Any]) -> bool:
    try:
        return "intermediate_result" in inspect.signature(callback).parameters
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class _Settings:
    """The checked arguments of one modified_simplex run."""

    n: int
    npoints: int  # m, points of the simplex
    steps: np.ndarray  # (n,) starting step per coordinate (`scale`)
    box: Bounds | None
    maxfev: int
    maxiter: int
    alpha: float  # reflection (11)
    beta: float  # contraction (13, 14)
    gamma: float  # extension (15)
    xatol: float
    fatol: float
    hanus: bool
    restart_on_extension: bool
    restarts_at_optimum: int

    def project(self, z: np.ndarray) -> np.ndarray:
        """A trial point projected onto the box (as scipy's Nelder-Mead does)."""
        return z if self.box is None else np.clip(z, *self.box)


def _settings(x0: np.ndarray, scale: float | Sequence[float] | np.ndarray | None, bounds: Any,
              npoints: int | None, maxfev: int | None, maxiter: int | None, alpha: float,
              beta: float, gamma: float, xatol: float, fatol: float, hanus: bool,
              restart_on_extension: bool, restarts_at_optimum: int) -> _Settings:
    """Check the arguments and fill in the defaults (see modified_simplex)."""
    n = x0.size
    npoints = 2 * n if npoints is None else int(npoints)
    if not n + 1 <= npoints <= 2 * n + 1:
        raise ValueError(f"npoints must lie in [n+1, 2n+1] = [{n + 1}, {2 * n + 1}]")
    if not (alpha > 0 and 0 < beta < 1 and gamma > 1):
        raise ValueError("need alpha > 0, 0 < beta < 1, gamma > 1 (seed eqs. 11, 13, 15)")
    if scale is None:
        s0 = np.where(x0 != 0, 0.25 * np.abs(x0), 0.25)
    else:
        s0 = np.broadcast_to(np.asarray(scale, dtype=np.float64), (n,)).copy()
        if np.any(s0 <= 0) or not np.all(np.isfinite(s0)):
            raise ValueError("scale must be positive and finite")
    return _Settings(
        n=n, npoints=npoints, steps=s0, box=_parse_bounds(bounds, n),
        maxfev=2000 * n if maxfev is None else int(maxfev),
        maxiter=2000 * n if maxiter is None else int(maxiter),
        alpha=alpha, beta=beta, gamma=gamma, xatol=xatol, fatol=fatol, hanus=hanus,
        restart_on_extension=restart_on_extension,
        restarts_at_optimum=int(restarts_at_optimum))


class _Objective:
    """fun(z, *args) counted against maxfev, NaN as +inf, remembering the best point."""

    def __init__(self, fun: Callable[..., float], args: tuple[Any, ...], maxfev: int,
                 x0: np.ndarray) -> None:
        self.fun, self.args, self.maxfev = fun, args, maxfev
        self.nfev = 0
        self.best_x = x0.copy()
        self.best_f = math.inf

    def __call__(self, z: np.ndarray) -> float:
        if self.nfev >= self.maxfev:
            raise _Stop("Maximum number of function evaluations has been exceeded.")
        self.nfev += 1
        v = float(self.fun(z, *self.args))
        if math.isnan(v):
            v = math.inf
        if v < self.best_f:
            self.best_f = v
            self.best_x = z.copy()
        return v


def _new_simplex(f: _Objective, s: _Settings, z: np.ndarray, fz: float | None,
                 direction: np.ndarray | None = None, drop: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Points (m, n) and costs (m,) of a starting simplex around z (fz: its known cost)."""
    pts = initial_points(z, s.steps, s.npoints, direction, drop, s.box)
    fs = np.empty(s.npoints)
    fs[0] = f(pts[0]) if fz is None else fz
    for k in range(1, s.npoints):
        fs[k] = f(pts[k])
    return pts, fs


@dataclass
class _History:
    """Counts of each operation, and with keep_history the best cost after each iteration."""

    keep: bool
    ops: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OPS, 0))
    fun: list[float] = field(default_factory=list)
    nfev: list[int] = field(default_factory=list)
    op: list[str] = field(default_factory=list)

    def record(self, op: str, f: _Objective) -> None:
        self.ops[op] += 1
        if self.keep:
            self.fun.append(f.best_f)
            self.nfev.append(f.nfev)
            self.op.append(op)


def _converged(z: np.ndarray, fz: np.ndarray, s: _Settings) -> bool:
    """Every point within xatol of the best in every coordinate, every cost within fatol."""
    best = int(np.argmin(fz))
    return bool(np.max(np.abs(z - z[best])) <= s.xatol and np.max(fz) - fz[best] <= s.fatol)


def _iteration(f: _Objective, s: _Settings, z: np.ndarray, fz: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, str]:
    """One iteration of the Appendix: reflection, then extension or contraction.

    Returns the simplex (updated in place, or a new one after a restart) and the operation.
    """
    best = int(np.argmin(fz))
    h = int(np.argmax(fz))
    zh = z[h].copy()
    zcr = (z.sum(axis=0) - zh) / (s.npoints - 1)                           # (12)
    zr = s.project((1.0 + s.alpha) * zcr - s.alpha * zh)                    # (11)
    fr = f(zr)
    if fr < fz[best]:
        return _extension(f, s, z, fz, h, zcr, zr, fr)
    if fr < np.max(np.delete(fz, h)):
        z[h], fz[h] = zr, fr
        return z, fz, "reflection"
    return _contraction(f, s, z, fz, best, h, zcr, zh)


def _extension(f: _Objective, s: _Settings, z: np.ndarray, fz: np.ndarray, h: int,
               zcr: np.ndarray, zr: np.ndarray, fr: float
               ) -> tuple[np.ndarray, np.ndarray, str]:
    """z_e = (1 - gamma) z_cr + gamma z_r (15), tried when the reflection beat the best.

    With restart_on_extension (the seed's modification) a z_e better than z_r starts a
    new simplex around it, "built as the first one"; else z_e or z_r replaces the worst.
    """
    ze = s.project((1.0 - s.gamma) * zcr + s.gamma * zr)                    # (15)
    fe = f(ze)
    if fe < fr and s.restart_on_extension:
        move = (ze - zcr) / s.steps
        pts, fs = _new_simplex(f, s, ze, fe, direction=np.sign(move),
                               drop=int(np.argmax(np.abs(move))))
        return pts, fs, "restart"
    if fe < fr:
        z[h], fz[h] = ze, fe
        return z, fz, "extension"
    z[h], fz[h] = zr, fr
    return z, fz, "reflection"


def _contraction(f: _Objective, s: _Settings, z: np.ndarray, fz: np.ndarray, best: int,
                 h: int, zcr: np.ndarray, zh: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    """z_c = (1 - beta) z_cr + beta z_h (13); if no better than z_h, the Hanus step
    z_n = (z_l + z_h)/2 (16) or, with hanus off, the general contraction (14)."""
    zc = s.project((1.0 - s.beta) * zcr + s.beta * zh)                      # (13)
    fc = f(zc)
    if fc < fz[h]:
        z[h], fz[h] = zc, fc
        return z, fz, "contraction"
    if s.hanus:
        zn = s.project(0.5 * (z[best] + zh))                                # (16)
        fn = f(zn)
        if fn < fz[h]:
            z[h], fz[h] = zn, fn
            return z, fz, "hanus"
        z[h] = zn  # keeps the cost f(z_h), as Hanus prescribes
        return z, fz, "hanus_failed"
    zl = z[best].copy()
    for k in range(s.npoints):
        if k != best:
            z[k] = s.project((1.0 - s.beta) * z[k] + s.beta * zl)           # (14)
            fz[k] = f(z[k])
    return z, fz, "general_contraction"


def _notify(callback: Callable[..., Any], wants_result: bool, f: _Objective) -> bool:
    """Tell the callback the best point so far; True if it asks to stop (StopIteration)."""
    from scipy.optimize import OptimizeResult

    try:
        if wants_result:
            callback(intermediate_result=OptimizeResult(x=f.best_x.copy(), fun=f.best_f))
        else:
            callback(f.best_x.copy())
    except StopIteration:
        return True
    return False


def modified_simplex(fun: Callable[..., float], x0: Sequence[float] | np.ndarray, *,
                     args: tuple[Any, ...] = (),
                     scale: float | Sequence[float] | np.ndarray | None = None,
                     bounds: Any = None, xatol: float = 1e-4, fatol: float = 1e-4,
                     maxfev: int | None = None, maxiter: int | None = None,
                     alpha: float = 1.0, beta: float = 0.5, gamma: float = 2.0,
                     npoints: int | None = None, hanus: bool = True,
                     restart_on_extension: bool = True, restarts_at_optimum: int = 1,
                     callback: Callable[..., Any] | None = None, keep_history: bool = True
                     ) -> OptimizeResult:
    """Minimise fun(x, *args) by the modified simplex of seed 003's Appendix.

    scale: starting step per coordinate (scalar or array); default 25 % of |x0_i|, or
        0.25 where x0_i = 0. Every restart (after a successful extension, and at an
        optimum) builds its simplex with these steps again, so `scale` should be of the
        order of the expected distance to the optimum: scipy's Nelder-Mead default of 5 %
        makes this method crawl (Rosenbrock 4-D then needs ~3x the evaluations).
    bounds: None, a sequence of (low, high) pairs (None for unbounded), or an object with
        .lb and .ub (scipy.optimize.Bounds).
    xatol, fatol: convergence when all points lie within xatol of the best in every
        coordinate and all stored costs within fatol of the best.
    maxfev, maxiter: defaults 2000 n each (K_max in the seed).
    alpha, beta, gamma: reflection, contraction, extension coefficients (1, 0.5, 2 as in
        the seed, after Hanus).
    npoints: simplex points, default 2n (Lesuisse); n+1 gives the classical simplex.
    hanus: the Hanus contraction (16) instead of the general contraction (14).
    restart_on_extension: the seed's restart around a successful extension point.
    restarts_at_optimum: how many times to restart around a converged optimum.
    callback: called after each iteration with the best point (callback(xk)) or, if its
        parameter is named intermediate_result, with an OptimizeResult(x, fun); raising
        StopIteration ends the search.

    Returns an OptimizeResult with x, fun, nfev, nit, success, status (0 converged, 1
    maxfev, 2 maxiter, 3 stopped by callback), message, final_simplex (points, stored
    costs), ops (counts of each operation), nrestart, and, with keep_history, history
    {"fun": best cost after each iteration, "nfev": evaluations so far, "op": operation}.
    """
    x0 = np.atleast_1d(np.asarray(x0, dtype=np.float64)).ravel()
    s = _settings(x0, scale, bounds, npoints, maxfev, maxiter, alpha, beta, gamma, xatol,
                  fatol, hanus, restart_on_extension, restarts_at_optimum)
    if s.box is not None:
        x0 = np.clip(x0, *s.box)
    wants_result = callback is not None and _callback_wants_result(callback)
    f = _Objective(fun, args, s.maxfev, x0)
    history = _History(keep=keep_history)
    nit = 0
    nrestart = 0
    status, message = 0, "Optimization terminated successfully."
    z = np.empty((s.npoints, s.n))
    fz = np.full(s.npoints, math.inf)
    try:
        z, fz = _new_simplex(f, s, x0, None)
        optima_left = s.restarts_at_optimum
        last_optimum = math.inf
        while True:
            if _converged(z, fz, s):
                # "when the simplex has reached an optimum, the entire procedure can be
                # restarted with a new simplex for exploring the vicinity"
                if optima_left > 0 and last_optimum - f.best_f > s.fatol:
                    optima_left -= 1
                    last_optimum = f.best_f
                    history.ops["restart_at_optimum"] += 1
                    nrestart += 1
                    z, fz = _new_simplex(f, s, f.best_x.copy(), f.best_f)
                    continue
                break
            if nit >= s.maxiter:
                status, message = 2, "Maximum number of iterations has been exceeded."
                break
            nit += 1
            z, fz, op = _iteration(f, s, z, fz)
            if op == "restart":
                nrestart += 1
            history.record(op, f)
            if callback is not None and _notify(callback, wants_result, f):
                status, message = 3, "Stopped by the callback."
                break
    except _Stop as stop:
        status, message = 1, stop.message
    return _result(f, z, fz, nit, nrestart, status, message, history)


def _result(f: _Objective, z: np.ndarray, fz: np.ndarray, nit: int, nrestart: int,
            status: int, message: str, history: _History) -> OptimizeResult:
    """The OptimizeResult of a run: the best point actually evaluated, and the counts."""
    from scipy.optimize import OptimizeResult

    res = OptimizeResult(
        x=f.best_x, fun=f.best_f, nfev=f.nfev, nit=nit,
        success=status == 0, status=status, message=message,
        final_simplex=(z.copy(), fz.copy()), ops=history.ops, nrestart=nrestart)
    if history.keep:
        res.history = {"fun": np.array(history.fun), "nfev": np.array(history.nfev,
                                                                         dtype=np.int64),
                       "op": history.op}
    return res


def _parse_bounds(bounds: Any, n: int) -> Bounds | None:
    """None, (low, high) pairs with None for unbounded, or an object with .lb, .ub."""
    if bounds is None:
        return None
    if hasattr(bounds, "lb") and hasattr(bounds, "ub"):
        lo = np.broadcast_to(np.asarray(bounds.lb, dtype=np.float64), (n,)).copy()
        hi = np.broadcast_to(np.asarray(bounds.ub, dtype=np.float64), (n,)).copy()
    else:
        pairs = list(bounds)
        if len(pairs) != n:
            raise ValueError(f"bounds must have {n} (low, high) pairs")
        lo = np.array([-np.inf if p[0] is None else p[0] for p in pairs], dtype=np.float64)
        hi = np.array([np.inf if p[1] is None else p[1] for p in pairs], dtype=np.float64)
    if np.any(lo > hi):
        raise ValueError("bounds: a lower bound exceeds its upper bound")
    return lo, hi
