"""A session's result read by a person: what `hilrig session identify` prints."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._result import ParameterEstimate
    from ._session_result import SessionResult

__all__ = ["percent", "session_summary_text"]


def percent(fraction: float) -> str:
    """A signed percentage in two significant figures, never in powers of ten."""
    x = 100 * fraction
    return f"{x:+.0f}" if abs(x) >= 10 else f"{x:+.2g}"


def _estimate(p: ParameterEstimate) -> str:
    if p.value is None:
        return "n/i"
    ci = "" if p.ci95 is None else f" [{p.ci95[0]:.5g}, {p.ci95[1]:.5g}]"
    return f"{p.value:.5g}{ci}"


def session_summary_text(result: SessionResult) -> str:
    """The verdict, the session's friction and rig, the trends and every capture."""
    unit = "h" if result.covariate == "hours" else result.covariate
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
            lines.append(f"  {name:<9} {100 * s.per_unit:+.3g} %/{unit} "
                         f"[{100 * s.ci95[0]:+.3g}, {100 * s.ci95[1]:+.3g}], "
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
