"""Linear least squares with the quality report of seed 002 (section III.B, eqs. 20-24).

Regression model (seed 002 eq. 20):

    Y = W theta + rho,    W: m x p (m = p_samples * n_joints rows), theta: p-vector.

Ordinary least squares (OLS) minimises ||rho||^2. Weighted least squares (WLS) minimises
sum_k w_k rho_k^2 with row weights w_k (inverse error variances): it is OLS on the scaled
system sqrt(w) Y = sqrt(w) W theta + sqrt(w) rho, and every formula below is applied to
that scaled system (W_w = diag(sqrt(w)) W, Y_w = diag(sqrt(w)) Y).

    residual variance   sigma^2 = ||Y_w - W_w theta||^2 / (m - rank)            (eq. 23)
    covariance          C = sigma^2 (W_w^T W_w)^-1                              (eq. 24)
    standard deviation  sigma_i = sqrt(C_ii)
    relative std, %     sigma_ir = 100 sigma_i / |theta_i|
    condition number    Cond(W_w) = s_max / s_min (2-norm), the sensitivity of theta to
                        errors in W and Y (eq. 21 ff.)
    poorly identified   sigma_ir > 10 min_j sigma_jr (the seed's rule, end of III.B)

For WLS the weights are taken as known up to a common factor, so sigma^2 is still
estimated from the weighted residuals (it is about 1 when the weights are the true inverse
variances); this is the usual "scaled" covariance.

The seed's WLS procedure (end of III.B, after Gautier / Khalil & Dombre [5]): the equation
of joint i is weighted with the inverse of the standard deviation of the error of that
joint's equations. :func:`group_weighted_least_squares` does exactly that: an OLS pass,
then per group g (the rows of one joint's equation) sigma_g^2 = ||rho_g||^2 / (m_g - p m_g / m)
from the OLS residuals (the group's share of the degrees of freedom), then WLS with row
weights 1 / sigma_g^2; by default sigma_g^2 is re-estimated once from the WLS residuals
and WLS repeated (see the function).

Numerics: QR of [W_w | Y_w] (Q never formed), then the SVD of the small R = U S V^T, so
W_w = (Q U) S V^T and no normal equations are formed: theta = V S^+ U^T Q^T Y_w,
(W_w^T W_w)^-1 = V S^-2 V^T, Cond = s_max / s_min, rank =
#{s > max(m, p) eps s_max} (numpy's matrix_rank tolerance). If W_w is rank deficient,
theta is the minimum-norm solution, and parameters that touch the null space get an
infinite standard deviation (they are not identifiable from these data).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ._qr import qr_r

#: the seed's rule: relative std above this factor times the smallest -> poorly identified
POOR_FACTOR = 10.0


@dataclass(frozen=True)
class LinearFit:
    """Estimate and quality report of one linear least-squares solution."""

    names: tuple[str, ...]
    theta: np.ndarray  # (p,)
    covariance: np.ndarray  # (p, p), sigma^2 (W_w^T W_w)^-1
    std: np.ndarray  # (p,) sqrt(diag C)
    relative_std_percent: np.ndarray  # (p,) 100 std / |theta|
    sigma2: float  # residual variance of the (weighted) system, eq. 23
    residuals: np.ndarray  # (m,) Y - W theta, unweighted
    condition: float  # Cond(W_w), 2-norm
    condition_scaled: float  # Cond of W_w with unit-norm columns (unit-free)
    rank: int
    rows: int
    weighted: bool
    weights: np.ndarray | None = field(default=None, repr=False)

    @property
    def dof(self) -> int:
        return self.rows - self.rank

    @property
    def poorly_identified(self) -> np.ndarray:
        """Seed 002's rule: relative std > 10 x the smallest relative std."""
        r = self.relative_std_percent
        finite = r[np.isfinite(r)]
        if finite.size == 0:
            return np.ones(r.shape, dtype=bool)
        return ~(r <= POOR_FACTOR * finite.min())

    @property
    def poorly_identified_names(self) -> tuple[str, ...]:
        return tuple(n for n, bad in zip(self.names, self.poorly_identified) if bad)

    def ci95(self, inflation: float = 1.0) -> np.ndarray:
        """(p, 2) normal 95 % intervals theta -+ 1.96 std sqrt(inflation)."""
        half = 1.959963984540054 * self.std * np.sqrt(inflation)
        return np.column_stack([self.theta - half, self.theta + half])

    def as_dict(self) -> dict[str, object]:
        """JSON-friendly summary (floats, lists)."""
        def f(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {
            "weighted": self.weighted,
            "parameters": {
                n: {"value": f(v), "std": f(s), "relative_std_percent": f(r),
                    "poorly_identified": bool(p)}
                for n, v, s, r, p in zip(self.names, self.theta, self.std,
                                         self.relative_std_percent, self.poorly_identified)
            },
            "sigma2": f(self.sigma2),
            "condition": f(self.condition),
            "condition_scaled": f(self.condition_scaled),
            "rank": self.rank,
            "rows": self.rows,
        }

    def table(self) -> str:
        """A Table II-like text table: parameter, value, relative std %, flag."""
        lines = [f"{'parameter':<14} {'value':>14} {'rel. std %':>11}"]
        for n, v, r, p in zip(self.names, self.theta, self.relative_std_percent,
                              self.poorly_identified):
            lines.append(f"{n:<14} {v:>14.6g} {r:>11.4g}{'  poorly identified' if p else ''}")
        lines.append(f"Cond(W) = {self.condition:.4g}, rank {self.rank}/{self.theta.size}, "
                     f"sigma^2 = {self.sigma2:.4g}, rows {self.rows}"
                     f"{', WLS' if self.weighted else ', OLS'}")
        return "\n".join(lines)


def linear_least_squares(W: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None,
                         names: Sequence[str] | None = None) -> LinearFit:
    """OLS (weights None) or WLS (weights: per-row inverse variances, >= 0) of y = W theta.

    Rows with a non-finite entry in W or y, or with zero weight, are an error: select rows
    before calling. See the module docstring for the formulas (seed 002 eqs. 20-24).
    """
    W = np.asarray(W, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if W.ndim != 2 or y.shape != (W.shape[0],):
        raise ValueError(f"need W (m, p) and y (m,), got {W.shape} and {y.shape}")
    m, p = W.shape
    if names is None:
        names = tuple(f"theta{i + 1}" for i in range(p))
    names = tuple(names)
    if len(names) != p:
        raise ValueError(f"{len(names)} names for {p} columns")
    if m <= p:
        raise ValueError(f"need more rows than parameters, got {m} rows for {p} parameters")
    if not (np.isfinite(W).all() and np.isfinite(y).all()):
        raise ValueError("W and y must be finite")
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (m,) or not np.isfinite(w).all() or (w <= 0).any():
            raise ValueError("weights must be finite, positive, one per row")
        sw = np.sqrt(w)
        Ww, yw = W * sw[:, None], y * sw
    else:
        w = None
        Ww, yw = W, y

    # QR of [W_w | Y_w] without forming Q (cheap for tall W): R_aug = [[R, z], [0, rho]],
    # z = Q^T Y_w; then the SVD of the small R, so W_w = Q R = (Q U) S V^T
    r_aug = qr_r(np.column_stack([Ww, yw]))
    rm, z = r_aug[:p, :p], r_aug[:p, p]
    u, s, vt = np.linalg.svd(rm)
    tol = max(m, p) * np.finfo(np.float64).eps * (s[0] if s.size else 0.0)
    keep = s > tol
    rank = int(keep.sum())
    s_inv = np.where(keep, 1.0 / np.where(keep, s, 1.0), 0.0)
    theta = vt.T @ (s_inv * (u.T @ z))
    rw = yw - Ww @ theta
    sigma2 = float(rw @ rw) / (m - rank) if m > rank else float("nan")
    v = vt.T
    cov = sigma2 * (v * s_inv**2) @ v.T
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if rank < p:
        null = v[:, ~keep]
        touched = np.abs(null).max(axis=1) > np.sqrt(np.finfo(np.float64).eps)
        std = np.where(touched, np.inf, std)
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(theta != 0, 100.0 * std / np.abs(theta), np.inf)
    cond = float(s[0] / s[-1]) if s[-1] > 0 else float("inf")
    norms = np.linalg.norm(rm, axis=0)  # = column norms of W_w
    if (norms > 0).all():
        sc = np.linalg.svd(rm / norms, compute_uv=False)
        cond_scaled = float(sc[0] / sc[-1]) if sc[-1] > 0 else float("inf")
    else:
        cond_scaled = float("inf")
    return LinearFit(names=names, theta=theta, covariance=cov, std=std,
                     relative_std_percent=rel, sigma2=sigma2, residuals=y - W @ theta,
                     condition=cond, condition_scaled=cond_scaled, rank=rank, rows=m,
                     weighted=w is not None, weights=w)


def group_variances(residuals: np.ndarray, groups: np.ndarray, n_params: int
                    ) -> dict[int, float]:
    """Per-group error variance from OLS residuals: ||rho_g||^2 / (m_g - p m_g / m)."""
    residuals = np.asarray(residuals, dtype=np.float64)
    groups = np.asarray(groups)
    m = residuals.size
    out: dict[int, float] = {}
    for g in np.unique(groups):
        sel = groups == g
        mg = int(sel.sum())
        dof = mg - n_params * mg / m
        out[int(g)] = float(residuals[sel] @ residuals[sel]) / max(dof, 1.0)
    return out


def group_weighted_least_squares(W: np.ndarray, y: np.ndarray, groups: np.ndarray,
                                 names: Sequence[str] | None = None, passes: int = 2
                                 ) -> tuple[LinearFit, LinearFit]:
    """Seed 002's WLS: OLS, then weight each group's rows by 1/sigma_g^2. Returns (OLS, WLS).

    sigma_g^2 comes from the OLS residuals first; with passes = 2 (default) it is then
    re-estimated once from the WLS residuals and WLS solved again: in the OLS fit the
    noisiest group drags theta and spills into the other groups' residuals (measured: a
    group with 100x smaller noise got weights 3.5x too small after one pass).
    """
    ols = linear_least_squares(W, y, names=names)
    groups = np.asarray(groups)
    floor = np.finfo(np.float64).tiny
    fit = ols
    for _ in range(max(1, passes)):
        var = group_variances(fit.residuals, groups, ols.theta.size)
        w = np.empty(groups.shape[0])
        for g, vg in var.items():
            w[groups == g] = 1.0 / max(vg, floor)
        fit = linear_least_squares(W, y, weights=w, names=names)
    return ols, fit


def integrated_autocorrelation(r: np.ndarray, max_lag: int | None = None) -> tuple[float, int]:
    """tau = 1 + 2 sum_{k=1..K} rho_k of a residual series with gaps (NaN = missing).

    rho_k is the lag-k autocorrelation over the pairs where both samples are present
    (zero-filled FFT products divided by the pair counts). K is the last lag before rho
    first drops to or below zero (the "initial positive sequence"): the negative lobes that
    differentiated noise has are left out, so tau is conservative (>= the full sum). The
    variance of a mean, or of a regression coefficient whose regressor varies slowly over
    K samples, is tau times its white-noise value; the effective sample size is n / tau.
    Returns (max(tau, 1), K).
    """
    r = np.asarray(r, dtype=np.float64)
    ok = np.isfinite(r)
    n = r.size
    if ok.sum() < 3:
        return 1.0, 0
    x = np.where(ok, r - r[ok].mean(), 0.0)
    msk = ok.astype(np.float64)
    max_lag = n - 1 if max_lag is None else min(max_lag, n - 1)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    fx = np.fft.rfft(x, size)
    fm = np.fft.rfft(msk, size)
    num = np.fft.irfft(fx * np.conj(fx), size)[: max_lag + 1]
    cnt = np.rint(np.fft.irfft(fm * np.conj(fm), size)[: max_lag + 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(cnt > 0, num / np.maximum(cnt, 1.0), 0.0)
    if c[0] <= 0:
        return 1.0, 0
    rho = c / c[0]
    nonpos = np.flatnonzero(rho[1:] <= 0.0)
    k = int(nonpos[0]) if nonpos.size else max_lag
    tau = 1.0 + 2.0 * float(rho[1:k + 1].sum())
    return max(tau, 1.0), k


def hac_covariance(fit: LinearFit, W: np.ndarray, lags: int, groups: np.ndarray | None = None,
                   position: np.ndarray | None = None) -> np.ndarray:
    """Covariance of theta robust to autocorrelated errors (Newey-West, Bartlett window).

    Eq. 24 assumes white errors. With errors correlated in time (differentiated,
    smoothed data), Cov(theta) = A Omega A with A = (W_w^T W_w)^-1 and
    Omega = sum_{|k| <= lags} (1 - |k|/(lags+1)) sum_t s_t s_{t+k}^T, s_t = W_w,t rho_w,t
    (the score of row t; rows at the same sample position lag k apart). Rows of different
    `groups` (e.g. different joints' equations) are taken as uncorrelated; `position` is
    each row's integer sample index on a uniform grid (gaps are simply absent pairs).
    Defaults: one group, position = row number. Scaled by m / (m - rank).

    Unlike an inflation of sigma^2 by the residual's own autocorrelation time, this also
    uses how slowly the regressors vary: differentiated noise with negative autocorrelation
    lobes has little power at the regressors' frequencies, and then Omega is *smaller*
    than the white-noise value.
    """
    W = np.asarray(W, dtype=np.float64)
    m, p = W.shape
    if m != fit.rows or p != fit.theta.size:
        raise ValueError("W does not match the fit")
    sw = np.sqrt(fit.weights) if fit.weights is not None else np.ones(m)
    scores = W * (sw * sw * fit.residuals)[:, None]  # W_w,t * rho_w,t = w_t W_t rho_t
    groups = np.zeros(m, dtype=np.int64) if groups is None else np.asarray(groups)
    if position is None:
        position = np.arange(m)
    position = np.asarray(position, dtype=np.int64)
    lags = max(int(lags), 0)
    omega = np.zeros((p, p))
    for g in np.unique(groups):
        sel = groups == g
        pos = position[sel]
        lo = int(pos.min())
        n = int(pos.max()) - lo + 1
        dense = np.zeros((n, p))
        np.add.at(dense, pos - lo, scores[sel])
        size = 1 << int(np.ceil(np.log2(2 * n)))
        f = np.fft.rfft(dense, size, axis=0)
        k = np.arange(1, min(lags, n - 1) + 1)
        wk = 1.0 - k / (lags + 1.0)
        for a in range(p):
            # c[k, b] = sum s_a(t+k) s_b(t)
            c = np.fft.irfft(f[:, a:a + 1] * np.conj(f), size, axis=0)
            # Gamma_k[a, b] = sum_t s_a(t) s_b(t+k) = c[-k, b]; Gamma_k^T[a, b] = c[k, b]
            omega[a] += c[0] + (wk[:, None] * (c[k] + c[size - k])).sum(axis=0)
    a_mat = fit.covariance / fit.sigma2 if fit.sigma2 > 0 else np.full((p, p), np.nan)
    scale = m / max(m - fit.rank, 1)
    return scale * a_mat @ omega @ a_mat
