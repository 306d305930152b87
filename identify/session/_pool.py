"""pool_results: several captures' results of one rig put together, and the friction's
drift tested (the statistics: ._meta).

1. Each capture's own result (the recommended estimator: its friction laws, extra terms
   and rig chosen by its data). A capture whose fit leaves residuals above
   ADEQUATE_EXCESS times its noise is left out and named with its reason.
2. Each friction level (IdentificationResult.key_parameters: the Coulomb and viscous
   terms of each joint) against the covariate (session hours): a random-effects straight
   line, its slope tested (Knapp-Hartung t, K - 2 df) at LEVEL shared over the levels.
3. Each capture against the line through the others (K - 3 df), at LEVEL shared over
   the captures and levels: one beyond it stands out.
4. The verdict: "captures disagree beyond a trend" when some capture stands out (and the
   verdict on the others, when 3 remain), else "drift" when some level moved, else "no
   drift"; fewer than MIN_TESTED captures: "not tested".
5. The session's friction and rig: each quantity's random-effects mean over the
   captures (a level that moved: its line at the covariate's mean), the scatter between
   captures in its interval, and the part every capture shares (the rig's scale) kept
   whole.

Why not one fit of all captures with the rig shared: on a simulated 10-capture session
without drift, the captures' own rigs differed by 1-5e-4 in the normalised parameters
(10-100 times their own standard errors, traded against each capture's Stribeck hump),
and a joint fit started from them stayed 2 times the captures' own chi^2 after 40
iterations (85 s): its likelihood ratios called a drift that was not there. Put
together from the results, the scatter between captures is measured, not assumed, and
a session costs nothing beyond its captures' own fits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..results import (
    ADEQUATE_EXCESS,
    CaptureInSession,
    DriftReport,
    IdentificationResult,
    LevelSlope,
    ParameterEstimate,
    SessionResult,
    Standout,
    covariate_unit,
    percent,
    percent_interval,
)
from ._meta import Departure, Line, Mean, departures, line, mean, relative_line

__all__ = ["ESTIMATED_WIDENING", "LEVEL", "MIN_CHANGE", "MIN_TESTED", "pool_results"]

#: the false alarm rate of each family of tests (the slopes; the captures standing out)
LEVEL = 0.01
#: captures a drift test needs (a line through two is no test)
MIN_TESTED = 3
#: the smallest change reported: a level moving less over the session, or a capture
#: departing less from the line through the others, is no drift and does not stand out,
#: however significant. A realistic capture fixes a level to 0.01-0.1 %, and the
#: estimator's error between releases reaches 1 % (a simulated steady session's capture
#: had its arm's mu_d 0.96 % off the others, 16 of its standard errors)
MIN_CHANGE = 0.02
RULE = (f"a level moved when its slope's t test (Knapp-Hartung, captures - 2 degrees of "
        f"freedom) gives p < {LEVEL:g} / levels and it changed by {100 * MIN_CHANGE:g} % or more "
        f"over the session; a capture stands out when a level departs from the line through "
        f"the others with p < {LEVEL:g} / (captures x levels) and by {100 * MIN_CHANGE:g} % or "
        f"more")


@dataclass(frozen=True)
class _Values:
    """One quantity over the captures that report it."""

    rows: np.ndarray  # which of the captures
    y: np.ndarray  # values (logs where `log`)
    own: np.ndarray  # standard errors another capture does not share
    common: np.ndarray  # standard errors every capture shares
    log: bool


@dataclass
class _Analysis:
    rows: np.ndarray  # the captures analysed (indices into the included ones)
    verdict: str
    lines: dict[str, Line] = field(default_factory=dict)
    moved: dict[str, bool] = field(default_factory=dict)
    standouts: list[tuple[int, float, dict[str, float]]] = field(default_factory=list)
    without: _Analysis | None = None


def _quantities(r: IdentificationResult, rig: bool) -> dict[str, ParameterEstimate]:
    """A capture's rig quantities, or its friction parameters."""
    return r.rig if rig else r.parameters


def _values(results: Sequence[IdentificationResult], name: str, rig: bool = False
            ) -> _Values | None:
    rows, y, own, common, logs = [], [], [], [], []
    for i, r in enumerate(results):
        p = _quantities(r, rig).get(name)
        used = _usable(p)
        if p is None or used is None or p.ci95 is None:
            continue
        value, widen = used
        lo, hi = p.ci95
        log = value > 0 and lo > 0 and hi > 0
        se = math.log(hi / lo) / (2 * 1.96) if log else (hi - lo) / (2 * 1.96)
        if rig:  # a rig quantity the data fix alone is the capture's own; else the scale's
            mine = se if "from the data alone" in p.note else 0.0
        else:
            mine = min(se, float(r.diagnostics.get("within_rig_sd", {}).get(name, se)))
        rows.append(i)
        y.append(math.log(value) if log else value)
        own.append(mine * widen)
        common.append(math.sqrt(max(se * se - mine * mine, 0.0)))
        logs.append(log)
    if not rows or not all(logs) and any(logs):
        return None
    return _Values(np.array(rows), np.array(y), np.array(own), np.array(common), logs[0])


#: an estimate a capture's rule did not call identified counts with its own standard
#: error this many times over: its interval is the local one. Unresolved viscous terms
#: (a sharp transition) were within 0.25 % on a simulated session; one arm's mu_v0 was
#: 74 % off with a local standard error of 17 %, and alone it made a steady session's
#: capture stand out
ESTIMATED_WIDENING = 3.0


def _usable(p: ParameterEstimate | None) -> tuple[float, float] | None:
    """The value a capture gives and the factor on its standard error: identified (1), or
    estimated, not identified with confidence (ESTIMATED_WIDENING); None otherwise."""
    if p is None or p.ci95 is None:
        return None
    if p.identifiable and p.value is not None:
        return p.value, 1.0
    if p.assumed is not None and p.note.startswith("estimated"):
        return p.assumed, ESTIMATED_WIDENING
    return None


def _telling(v: _Values) -> _Values:
    """The captures whose own standard error of a level is at most MIN_CHANGE: one that
    fixes it more loosely cannot tell a change the tests would report (on a simulated
    steady session an arm's mu_v came out 76 % off with an identified 8.5 %, and alone it
    made its capture stand out). They still count in the session's value."""
    keep = v.own <= MIN_CHANGE if v.log else np.ones(v.rows.size, dtype=bool)
    return _Values(v.rows[keep], v.y[keep], v.own[keep], v.common[keep], v.log)


def _analyse(results: Sequence[IdentificationResult], x: np.ndarray, rows: np.ndarray,
             levels: list[str]) -> _Analysis:
    """Steps 2-4 of the module on the captures `rows`."""
    sub = [results[i] for i in rows]
    if rows.size < MIN_TESTED:
        return _Analysis(rows, "not tested")
    out = _Analysis(rows, "no drift")
    found: dict[int, dict[str, Departure]] = {}
    for name in levels:
        v = _values(sub, name)
        v = _telling(v) if v is not None else None
        if v is None or v.rows.size < MIN_TESTED:
            continue
        xs = x[rows][v.rows]
        fit = (relative_line if v.log else line)(v.y, v.own, xs - xs.mean(), v.common)
        out.lines[name] = fit
        change = abs(fit.slope) * float(np.ptp(xs)) if v.log else math.inf
        out.moved[name] = fit.p_slope < LEVEL / len(levels) and change >= MIN_CHANGE
        for d in departures(v.y, v.own, xs):
            found.setdefault(int(v.rows[d.index]), {})[name] = d
    cut = LEVEL / (rows.size * max(len(levels), 1))
    for k, ds in sorted(found.items()):
        beyond = [d for d in ds.values()
                  if d.p_value < cut and abs(math.expm1(d.departure)) >= MIN_CHANGE]
        if beyond:
            out.standouts.append((int(rows[k]), min(d.p_value for d in beyond),
                                  {n: math.expm1(d.departure) for n, d in ds.items()}))
    if out.standouts:
        out.verdict = "captures disagree beyond a trend"
        rest = np.array([i for i in rows if i not in {s[0] for s in out.standouts}])
        if rest.size >= MIN_TESTED:
            out.without = _analyse(results, x, rest, levels)
    elif any(out.moved.values()):
        out.verdict = "drift"
    return out


def _estimate(results: Sequence[IdentificationResult], name: str, rows: np.ndarray,
              trend: Line | None, rig: bool) -> ParameterEstimate:
    """One quantity of the session over the captures `rows`: the random-effects mean, or
    a moved level's line at the covariate's mean (`trend`)."""
    sub = [results[i] for i in rows]
    v = _values(sub, name, rig)
    # the first capture that reports it: a term one capture's data chose is not another's
    first = next(p for r in sub if (p := _quantities(r, rig).get(name)) is not None)
    need = (len(sub) + 1) // 2
    if v is None or v.rows.size < need:
        seen = 0 if v is None else v.rows.size
        assumed = [p.value if p.value is not None else p.assumed
                   for r in sub if (p := _quantities(r, rig).get(name)) is not None]
        known = [a for a in assumed if a is not None]
        return ParameterEstimate(
            value=None, ci95=None, identifiable=False,
            assumed=float(np.median(known)) if known else None,
            note=f"identified in {seen} of {len(sub)} captures; "
                 + (first.note or "not identifiable"))
    if trend is not None:  # a level that moved: its line at the covariate's mean
        value, (lo, hi), scatter = trend.level, trend.level_interval(), trend.tau
        what = "at the session's mean time, on its trend"
    else:
        m: Mean = mean(v.y, v.own, v.common)
        value, (lo, hi), scatter = m.value, m.interval(), m.tau
        what = f"pooled over {v.rows.size} captures"
    k = v.rows.size
    if v.log:
        value, lo, hi = math.exp(value), math.exp(lo), math.exp(hi)
    note = f"{what} ({k}); scatter between captures beyond their intervals " + (
        f"{100 * scatter:.2g} %" if v.log else f"{scatter:.3g}")
    if first.note and rig:
        note = f"{first.note}; {note}"
    return ParameterEstimate(value=value, ci95=(lo, hi), identifiable=True, note=note)


def pool_results(results: Sequence[IdentificationResult],
                 x: Sequence[float] | np.ndarray | None = None,
                 *, covariate: str = "hours", session_id: str | None = None,
                 compute_seconds: float = 0.0) -> SessionResult:
    """The session's answer from its captures' results (module docstring). x: each
    capture's covariate (session hours; default 0, 1, 2...)."""
    rs = list(results)
    if not rs:
        raise ValueError("no results to pool")
    xs = np.arange(len(rs), dtype=float) if x is None else np.asarray(x, dtype=float)
    if xs.shape != (len(rs),) or not np.all(np.isfinite(xs)):
        raise ValueError(f"the covariate needs one finite value per result ({len(rs)})")
    kinds = {(r.rig_kind, r.method) for r in rs}
    if len(kinds) > 1:
        raise ValueError("pool results of one rig kind and one method, got "
                         + ", ".join(f"{k} by {m}" for k, m in sorted(kinds)))
    entries = [_entry(r, float(xv), i) for i, (r, xv) in enumerate(zip(rs, xs))]
    included = np.array([i for i, e in enumerate(entries) if e.included], dtype=int)
    if included.size == 0:
        raise ValueError("no capture fit to pool: " + "; ".join(
            f"{e.capture_id}: {e.reason}" for e in entries))
    levels = [n for n in rs[0].key_parameters()]
    a = _analyse(rs, xs, included, levels)
    final = a.without or a
    for i in included:
        entries[i] = entries[i].model_copy(update={"levels": {
            n: rs[i].parameters[n] for n in levels if n in rs[i].parameters}})
    trends = {n: final.lines[n] for n, moved in final.moved.items()
              if moved and final.verdict == "drift"}
    parameters = {n: _estimate(rs, n, final.rows, trends.get(n), rig=False)
                  for n in _names(rs, final.rows, rig=False)}
    rig = {n: _estimate(rs, n, final.rows, None, rig=True)
           for n in _names(rs, final.rows, rig=True)}
    report = _report(a, rs, xs)
    scatter = {n: fit.tau for n, fit in a.lines.items()}
    left_out = [e.capture_id for e in entries if not e.included]
    return SessionResult(
        session_id=session_id, rig_kind=rs[0].rig_kind, capture_method=rs[0].method,
        covariate=covariate, verdict=a.verdict,
        summary=_summary(a, report, covariate, left_out),
        parameters=parameters, rig=rig, drift=report, captures=entries, scatter=scatter,
        compute_seconds=round(compute_seconds, 3))


def _names(results: Sequence[IdentificationResult], rows: np.ndarray, rig: bool) -> list[str]:
    """Every quantity a capture of `rows` reports, in the order first reported: an extra
    term (air drag, a cable) one capture's data chose and another's did not is the
    session's too, over the captures that have it (_estimate: identified in k of n)."""
    seen: dict[str, None] = {}
    for i in rows:
        for name in _quantities(results[i], rig):
            seen.setdefault(name)
    return list(seen)


def _entry(r: IdentificationResult, xv: float, i: int) -> CaptureInSession:
    excess = {k: float(v) for k, v in r.diagnostics.get("residual_over_noise", {}).items()
              if isinstance(v, (int, float))}
    worst = max(excess.values(), default=0.0)
    reason = ("" if worst <= ADEQUATE_EXCESS else
              f"its fit leaves residuals {worst:.2g} times the noise (above "
              f"{ADEQUATE_EXCESS:g}): the model does not explain it")
    return CaptureInSession(capture_id=r.capture_id or f"capture {i}", x=xv,
                            included=not reason, reason=reason, residual_over_noise=excess)


def _report(a: _Analysis, rs: Sequence[IdentificationResult], xs: np.ndarray) -> DriftReport:
    span = float(np.ptp(xs[a.rows])) if a.rows.size else 0.0
    slopes = {}
    for name, fit in a.lines.items():
        if math.isnan(fit.slope_se):
            continue
        lo, hi = fit.slope_interval()
        # the line through the level's values, its slope a fraction of the level at the
        # covariate's mean (relative_line)
        slopes[name] = LevelSlope(per_unit=fit.slope, df=fit.df, ci95=(lo, hi),
                                  over_session=fit.slope * span,
                                  p_value=fit.p_slope, moved=a.moved[name])
    stand = [Standout(capture_id=rs[i].capture_id or f"capture {i}", p_value=p, departure=d)
             for i, p, d in a.standouts]
    return DriftReport(level=LEVEL, rule=RULE, slopes=slopes, standouts=stand,
                       without_standouts=a.without.verdict if a.without else None)


def _summary(a: _Analysis, report: DriftReport, covariate: str, left_out: list[str]) -> str:
    unit = covariate_unit(covariate)
    n = a.rows.size
    moved = [f"{name} {percent_interval(s.per_unit, s.ci95, f'%/{unit}')}"
             for name, s in report.slopes.items() if s.moved]
    head = {"no drift": f"no drift over {n} captures",
            "drift": f"drift over {n} captures: " + ", ".join(moved),
            "not tested": f"{n} captures pooled; drift not tested ({MIN_TESTED} needed)",
            "captures disagree beyond a trend": "captures disagree beyond a trend"
            }[a.verdict]
    if a.verdict == "captures disagree beyond a trend":
        head += ": " + ", ".join(s.capture_id for s in report.standouts) + " stand out"
        if a.without is not None:
            head += f"; without them, {a.without.verdict}"
            if a.without.verdict == "drift":
                head += ": " + ", ".join(
                    f"{name} {percent(fit.slope)} %/{unit}"
                    for name, fit in a.without.lines.items() if a.without.moved[name])
    if left_out:
        head += f"; left out (fit inadequate): {', '.join(left_out)}"
    return head
