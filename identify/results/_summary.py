"""A result read by a person: the terminal's table and a notebook's short repr and HTML.

The JSON (IdentificationResult.to_json) carries everything, including the response
arrays; these show what a reader checks first: each parameter with its 95 % interval,
the rig quantities the fit identified, the goodness of fit, the time and the warnings.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from ._metrics import format_fit

if TYPE_CHECKING:
    from ._result import IdentificationResult, ParameterEstimate

__all__ = ["summary_html", "summary_line", "summary_text"]


def _value(p: ParameterEstimate) -> str:
    return "n/i" if p.value is None else f"{p.value:.5g}"


def _interval(p: ParameterEstimate) -> str:
    return "" if p.ci95 is None else f"[{p.ci95[0]:.5g}, {p.ci95[1]:.5g}]"


def _heading(result: IdentificationResult) -> str:
    return (f"method {result.method}, rig {result.rig_kind}, capture "
            f"{result.capture_id or '-'}, {result.capture_seconds:.2f} s at "
            f"{result.sample_rate_hz:g} Hz, {result.lost_samples} samples lost")


def _warnings(result: IdentificationResult) -> list[str]:
    return [str(w) for w in result.diagnostics.get("warnings", [])]


def summary_line(result: IdentificationResult) -> str:
    """One line: the method, the key parameters with their intervals, the fit."""
    keys = result.key_parameters()
    shown = ", ".join(f"{n} {_value(result.parameters[n])}"
                      + (f" {_interval(result.parameters[n])}"
                         if result.parameters[n].ci95 else "") for n in keys)
    return (f"{result.method} on {result.capture_id or '-'}: {shown}; "
            f"fit {format_fit(result.fit_percent)}")


def summary_text(result: IdentificationResult) -> str:
    """The table `hilrig identify` prints: parameters, identified rig quantities (those a
    free decay cannot separate named on one line), fit, time, warnings."""
    lines = [_heading(result),
             f"{'parameter':<10} {'value':>12} {'95 % interval':>27}  note"]
    for name, p in result.parameters.items():
        lines.append(f"{name:<10} {_value(p):>12} {_interval(p):>27}  {p.note}")
    if result.rig:
        lines.append(f"{'rig':<26} {'value':>12} {'95 % interval':>27}  unit; note")
        for name, p in result.rig.items():
            if p.value is not None:
                lines.append(f"{name:<26} {p.value:>12.5g} {_interval(p):>27}  {p.note}")
        hidden = [n for n, p in result.rig.items() if p.value is None]
        if hidden:
            lines.append(f"not identifiable from a free decay: {', '.join(hidden)} "
                         "(its note in --json, or result.rig, says what would separate it)")
    lines.append(f"goodness of fit (seed 000 eq. 53): {format_fit(result.fit_percent)}")
    compiled = float(result.diagnostics.get("compile_seconds") or 0.0)
    lines.append(f"compute {result.compute_seconds:.2f} s, normalised (eq. 54) "
                 f"{result.normalized_compute_time:.3g}"
                 + (f"; and {compiled:.1f} s compiling the estimator once after the install "
                    "(not in the compute time)" if compiled >= 0.05 else ""))
    lines.extend(f"warning: {w}" for w in _warnings(result))
    return "\n".join(lines)


def _html_rows(title: str, estimates: dict[str, ParameterEstimate]) -> str:
    rows = "".join(
        f"<tr><td>{escape(n)}</td><td>{escape(_value(p))}</td><td>{escape(_interval(p))}</td>"
        f"<td>{escape(p.note)}</td></tr>" for n, p in estimates.items())
    return (f"<tr><th>{escape(title)}</th><th>value</th><th>95 % interval</th>"
            f"<th>note</th></tr>{rows}")


def summary_html(result: IdentificationResult) -> str:
    """The same as summary_text, as one HTML table (Jupyter shows it for the result)."""
    warnings = "".join(f"<li>{escape(w)}</li>" for w in _warnings(result))
    return (f"<div class=\"hilrig-result\"><p><b>{escape(_heading(result))}</b></p>"
            f"<table>{_html_rows('parameter', result.parameters)}"
            + (_html_rows("rig", {n: p for n, p in result.rig.items() if p.value is not None})
               if any(p.value is not None for p in result.rig.values()) else "")
            + f"</table><p>goodness of fit (seed 000 eq. 53): "
            f"{escape(format_fit(result.fit_percent))}; compute "
            f"{result.compute_seconds:.2f} s</p>"
            + (f"<ul>{warnings}</ul>" if warnings else "") + "</div>")
