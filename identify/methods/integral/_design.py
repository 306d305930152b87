"""The linear system of integral reconstruction (seed 004): pieces, unknowns, rows, constraints.

A piece is the part of one segment inside one gap-free run of samples. Its rows are
the integral reconstructor of identify.methods.integral._core's docstring, one per
sample: the measured theta (minus a known input term) against the negated iterated
integrals of theta for the coefficients, I^(order) u for b, I^(order) 1 for an offset,
and 1, s (, s^2) for the piece's own initial condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: (segment, first row, last row inclusive)
Piece = tuple[int, int, int]


def runs(t: np.ndarray, gap_factor: float) -> list[tuple[int, int]]:
    """Gap-free runs [first, last] (inclusive): a step above gap_factor x median step is a gap."""
    dt = np.diff(t)
    if np.any(dt <= 0):
        raise ValueError("t must increase strictly")
    brk = np.flatnonzero(dt > gap_factor * np.median(dt))
    starts = np.concatenate([[0], brk + 1])
    ends = np.concatenate([brk, [t.size - 1]])
    return list(zip(starts.tolist(), ends.tolist()))


def snap(t: np.ndarray, segments: int | np.ndarray) -> np.ndarray:
    """Rows of the segment boundaries T_0..T_n: equal segments, or given times snapped to
    their nearest samples (eqs. 2-3, 5-6)."""
    if np.ndim(segments) == 0:
        n = int(segments)
        if n < 1:
            raise ValueError(f"segments must be >= 1, got {n}")
        bounds = np.linspace(t[0], t[-1], n + 1)
    else:
        bounds = np.asarray(segments, dtype=np.float64)
        if bounds.ndim != 1 or bounds.size < 2 or np.any(np.diff(bounds) <= 0):
            raise ValueError("segments must be a count or increasing boundary times T_0..T_n")
    j = np.clip(np.searchsorted(t, bounds), 1, t.size - 1)
    j = np.where(np.abs(t[j - 1] - bounds) <= np.abs(t[j] - bounds), j - 1, j)
    if np.any(np.diff(j) <= 0):
        raise ValueError("two segment boundaries fall on the same sample")
    return j


def iterated(y: np.ndarray, s: np.ndarray, times: int) -> list[np.ndarray]:
    """[I^(1) y, ..., I^(times) y] from s[0] by cumulative trapezoids (eq. 8)."""
    # on use: scipy.integrate brings scipy.optimize, slow to import for every method
    from scipy.integrate import cumulative_trapezoid

    out, cur = [], y
    for _ in range(times):
        cur = cumulative_trapezoid(cur, s, initial=0.0)
        out.append(cur)
    return out


def pieces_of(t: np.ndarray, jb: np.ndarray, gap_factor: float, min_rows: int) -> list[Piece]:
    """Every segment's parts inside gap-free runs of at least min_rows samples.

    A segment left with none cannot be identified: that is an error.
    """
    n = jb.size - 1
    pieces = []
    for a, z in runs(t, gap_factor):
        for i in range(n):
            lo, hi = max(a, int(jb[i])), min(z, int(jb[i + 1]))
            if hi - lo + 1 >= min_rows:
                pieces.append((i, lo, hi))
    have = {p[0] for p in pieces}
    if len(have) < n:
        missing = sorted(set(range(n)) - have)
        raise ValueError(f"segments {missing} hold no gap-free run of {min_rows} samples")
    return pieces


@dataclass(frozen=True)
class Layout:
    """Where each unknown sits in the parameter vector x, and its name.

    x = [coefficients per segment (one set if constant), b (if identified), offsets e_i
    (if any), then per piece theta0 and alpha (second order) or beta1, beta2 (delay)].
    """

    coef_names: tuple[str, ...]  # c, k or a1, a2, a3
    order: int  # 2 (second order) or 3 (delay)
    constant: bool
    param_names: tuple[str, ...]
    coef_ix: np.ndarray  # (segments or 1, q)
    b_ix: int  # -1 when b is not identified
    off_ix: np.ndarray | None  # offsets e_i, or None
    piece_ix: list[np.ndarray]  # per piece: theta0 and the slope parameters

    @property
    def q(self) -> int:
        """Coefficients per segment."""
        return len(self.coef_names)

    @property
    def npar(self) -> int:
        return len(self.param_names)

    @property
    def b_free(self) -> bool:
        return self.b_ix >= 0


def layout(coef_names: tuple[str, ...], order: int, n: int, npieces: int, *, constant: bool,
           b_free: bool, offset: bool) -> Layout:
    """The Layout of n segments and npieces pieces."""
    q = len(coef_names)
    pn: list[str] = []
    ncs = 1 if constant else n
    coef_ix = np.arange(ncs * q).reshape(ncs, q)
    pn += [f"{nm}_{i}" for i in range(ncs) for nm in coef_names]
    b_ix = len(pn) if b_free else -1
    if b_free:
        pn.append("b")
    off_ix = np.arange(len(pn), len(pn) + ncs) if offset else None
    if offset:
        pn += [f"e_{i}" for i in range(ncs)]
    slope_names = ("alpha",) if order == 2 else ("beta1", "beta2")
    piece_ix = []
    for p in range(npieces):
        piece_ix.append(np.arange(len(pn), len(pn) + order))
        pn += [f"theta0_{p}"] + [f"{nm}_{p}" for nm in slope_names]
    return Layout(coef_names=coef_names, order=order, constant=constant,
                  param_names=tuple(pn), coef_ix=coef_ix, b_ix=b_ix, off_ix=off_ix,
                  piece_ix=piece_ix)


@dataclass(frozen=True)
class Design:
    """min ||E x - f|| subject to C x = d: the rows of all pieces and their C0 joins."""

    e: np.ndarray  # (rows, npar)
    f: np.ndarray  # (rows,) theta minus the known input term
    row_of: np.ndarray  # (rows,) the sample each row is
    c_rows: list[np.ndarray]  # join constraints (eq. 19/39)
    d_vals: list[float]
    joins: list[tuple[int, int, int]]  # (row, piece before, piece after)
    joined: list[bool]  # per piece: it continues the previous piece at a shared sample
    stored: list[tuple[np.ndarray, np.ndarray, np.ndarray]]  # per piece: columns, rows, s


def design(t: np.ndarray, theta: np.ndarray, u: np.ndarray | None, b_known: float | None,
           pieces: list[Piece], lay: Layout) -> Design:
    """The least-squares rows of every piece and the join constraints between them.

    A piece that starts on the previous one's last sample shares it: that row is taken
    once, and C0 continuity (the previous reconstruction's value there equals this
    piece's theta0, eq. 19/39) becomes an equality constraint.
    """
    npar = lay.npar
    joined = [p > 0 and pieces[p - 1][2] == pieces[p][1] for p in range(len(pieces))]
    rows_total = sum(hi - lo + 1 - int(joined[p]) for p, (_, lo, hi) in enumerate(pieces))
    e = np.zeros((rows_total, npar))
    f = np.empty(rows_total)
    row_of = np.empty(rows_total, dtype=np.int64)
    known_end = np.zeros(len(pieces))
    c_rows: list[np.ndarray] = []
    d_vals: list[float] = []
    join_list: list[tuple[int, int, int]] = []
    last_row = np.zeros(npar)
    stored = []  # per piece: used columns, design rows (0 where not fitted), local time
    r0 = 0
    for p, (i, lo, hi) in enumerate(pieces):
        s = t[lo:hi + 1] - t[lo]
        blk, known = _piece_rows(theta[lo:hi + 1], None if u is None else u[lo:hi + 1], s,
                                 b_known, lay, 0 if lay.constant else i, p)
        known_end[p] = known[-1]
        cols = np.flatnonzero(np.any(blk != 0.0, axis=0))
        stored.append((cols, blk[:, cols] if not joined[p] else
                       np.vstack([np.zeros((1, cols.size)), blk[1:, cols]]), s))
        if joined[p]:
            crow = last_row.copy()  # the previous piece's reconstruction at this row
            crow[lay.piece_ix[p][0]] -= 1.0
            c_rows.append(crow)
            d_vals.append(-known_end[p - 1])
            join_list.append((lo, p - 1, p))
        k0 = 1 if joined[p] else 0
        m = s.size - k0
        e[r0:r0 + m] = blk[k0:]
        f[r0:r0 + m] = theta[lo + k0:hi + 1] - known[k0:]
        row_of[r0:r0 + m] = np.arange(lo + k0, hi + 1)
        r0 += m
        last_row = blk[-1].copy()
    return Design(e=e, f=f, row_of=row_of, c_rows=c_rows, d_vals=d_vals, joins=join_list,
                  joined=joined, stored=stored)


def _piece_rows(theta: np.ndarray, u: np.ndarray | None, s: np.ndarray, b_known: float | None,
                lay: Layout, ci: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """One piece's rows (eqs. 13, 30) over local time s, and the known input term b I u.

    theta(s) = theta0 + alpha s (+ beta2 s^2) - sum_j coef_j I^(j) theta + b I^(order) u
    (+ e I^(order) 1): columns -I^(j) theta for coefficient set ci, I^(order) u for b,
    I^(order) 1 for the offset, and 1, s (, s^2) for piece p's initial condition.
    """
    order = lay.order
    blk = np.zeros((s.size, lay.npar))
    ints = iterated(theta, s, order)
    for j in range(lay.q):
        blk[:, lay.coef_ix[ci, j]] = -ints[j]
    known = np.zeros(s.size)
    if u is not None:
        iu = iterated(u, s, order)[-1]
        if lay.b_free:
            blk[:, lay.b_ix] = iu
        elif b_known is not None:  # always, when b is not identified
            known = b_known * iu
    if lay.off_ix is not None:
        blk[:, lay.off_ix[ci]] = iterated(np.ones_like(s), s, order)[-1]
    blk[:, lay.piece_ix[p][0]] = 1.0
    blk[:, lay.piece_ix[p][1]] = s
    if order == 3:
        blk[:, lay.piece_ix[p][2]] = s * s
    return blk, known


@dataclass(frozen=True)
class Inequalities:
    """G x >= h, each row named (as IntegralFit.active reports them)."""

    g_rows: list[np.ndarray]
    h_vals: list[float]
    names: list[str]


def inequalities(lay: Layout, t: np.ndarray, jb: np.ndarray, *, constrained: bool,
                 floor: float, lipschitz: Sequence[float | None] | None,
                 model: str) -> Inequalities:
    """Positivity (coef >= floor, eqs. 18, 23; b >= floor for the delay model, 38, 43a)
    and the Lipschitz bounds |coef_i - coef_{i-1}| <= gamma (t_i - t_{i-1}) between
    segment centres (eqs. 43b-d), as rows of G x >= h."""
    npar, q = lay.npar, lay.q
    n = jb.size - 1
    out = Inequalities([], [], [])

    def bound(ix: int, label: str) -> None:
        row = np.zeros(npar)
        row[ix] = 1.0
        out.g_rows.append(row)
        out.h_vals.append(floor)
        out.names.append(f"{label} >= {floor:g}")

    if constrained:
        for ci in range(lay.coef_ix.shape[0]):
            for j in range(q):
                bound(int(lay.coef_ix[ci, j]), lay.param_names[lay.coef_ix[ci, j]])
        if model == "delay" and lay.b_free:
            bound(lay.b_ix, "b")
    if lipschitz is not None and not lay.constant:
        gam = list(lipschitz)
        if len(gam) != q:
            raise ValueError(f"lipschitz needs {q} entries (one per coefficient)")
        centres = 0.5 * (t[jb[:-1]] + t[jb[1:]])
        for i in range(1, n):
            dt_c = centres[i] - centres[i - 1]
            for j in range(q):
                g = gam[j]
                if g is None:
                    continue
                for sign in (1.0, -1.0):
                    row = np.zeros(npar)
                    row[lay.coef_ix[i, j]] = sign
                    row[lay.coef_ix[i - 1, j]] = -sign
                    out.g_rows.append(-row)  # -(sign (a_i - a_{i-1})) >= -gamma dt
                    out.h_vals.append(-float(g) * dt_c)
                    names = lay.coef_names
                    out.names.append(f"|{names[j]}_{i} - {names[j]}_{i - 1}| <= {g:g} dt")
    return out
