"""A session's result read by a person: what `hilrig session identify` prints."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._result import ParameterEstimate
    from ._session_result import SessionResult

__all__ = ["covariate_unit", "percent", "percent_interval", "session_summary_text"]


def covariate_unit(covariate: str) -> str:
    """What a trend is per: 'h' for session time, else the covariate's own name."""
    return "h" if covariate == "hours" else covariate


def percent(fraction: float) -> str:
    """A signed percentage in two significant figures, never in powers of ten."""
    x = 100 * fraction
    return f"{x:+.0f}" if abs(x) >= 10 else f"{x:+.2g}"


def percent_interval(fraction: float, ci95: tuple[float, float], unit: str = "%") -> str:
    """'+1.19 %/h [+1.18, +1.20]': a signed percentage and its interval, to the decimals
    that tell the bounds apart (one significant figure of the interval's width), at least
    one below 10 %. Two significant figures alone printed +1.2 %/h [+1.2, +1.2]."""
    x, lo, hi = 100 * fraction, 100 * ci95[0], 100 * ci95[1]
    width = hi - lo
    if not (math.isfinite(width) and width > 0):
        return f"{percent(fraction)} {unit} [{percent(ci95[0])}, {percent(ci95[1])}]"
    decimals = min(4, max(-math.floor(math.log10(width)), 1 if abs(x) < 10 else 0))
    return f"{x:+.{decimals}f} {unit} [{lo:+.{decimals}f}, {hi:+.{decimals}f}]"


def _estimate(p: ParameterEstimate) -> str:
    if p.value is None:
        return "n/i"
    ci = "" if p.ci95 is None else f" [{p.ci95[0]:.5g}, {p.ci95[1]:.5g}]"
    return f"{p.value:.5g}{ci}"


def session_summary_text(result: SessionResult) -> str:
    """The verdict, the session's friction and rig, the trends and every capture."""
    unit = covariate_unit(result.covariate)
    lines = [f"session {result.session_id or '-'}: {result.summary}",
             f"  ({len([c for c in result.captures if c.included])} of "
             f"{len(result.captures)} captures by {result.capture_method}; "
             f"{result.drift.rule})", "",
             "friction of the session (95 %):"]
    for name, p in result.parameters.items():
        if p.value is not None or name in result.scatter:
            lines.append(f"  {name:<9} {_estimate(p)}")
    if result.drift.slopes:
        lines += ["", f"trend of each level, per {unit} (95 %):"]
        for name, s in result.drift.slopes.items():
            lines.append(f"  {name:<9} {percent_interval(s.per_unit, s.ci95, f'%/{unit}')}, "
                         f"{100 * s.over_session:+.3g} % over the session, p {s.p_value:.2g}"
                         + ("  moved" if s.moved else ""))
    rig = [(n, p) for n, p in result.rig.items() if p.value is not None]
    if rig:
        lines += ["", "rig (pooled, 95 %):"]
        lines += [f"  {n:<22} {_estimate(p)}" for n, p in rig]
    lines += ["", f"captures ({result.covariate}, levels):"]
    for c in result.captures:
        if not c.included:
            lines.append(f"  {c.capture_id:<24} {c.x:8.3g}  left out: {c.reason}")
            continue
        levels = "  ".join(f"{n} {p.value if p.value is not None else p.assumed:.4g}"
                           for n, p in c.levels.items()
                           if p.value is not None or p.assumed is not None)
        mark = "  stands out" if c.capture_id in {s.capture_id for s in
                                                 result.drift.standouts} else ""
        lines.append(f"  {c.capture_id:<24} {c.x:8.3g}  {levels}{mark}")
    return "\n".join(lines)
