"""Two methods' results on the same captures: does the new one change the conclusions?

For every parameter both methods report on a capture, the difference B - A relative to
A, with its 95 % interval from the two results' own intervals, combined as if their
errors were independent (sd = half width / 1.96, added in quadrature). Both results are
made from the same data, so their errors are positively correlated, and this interval is
wider than the true one: a difference it excludes zero from is a real one. Across the
captures: the mean relative difference with its 95 % interval (Student's t over the
captures), its spread, and how many captures' own intervals exclude zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..results import IdentificationResult

__all__ = ["ParameterShift", "compare_across_captures", "plot_shifts", "shift_table"]

_Z95 = 1.959963984540054


@dataclass
class ParameterShift:
    """One parameter's relative differences B/A - 1 over the captures (in %)."""

    name: str
    captures: list[str] = field(default_factory=list)
    percent: list[float] = field(default_factory=list)
    half_width: list[float] = field(default_factory=list)  # each difference's 95 %, in %
    only_a: int = 0  # captures where only A reports it identified
    only_b: int = 0

    @property
    def n(self) -> int:
        return len(self.percent)

    @property
    def mean(self) -> float:
        return float(np.mean(self.percent)) if self.percent else math.nan

    @property
    def mean_ci(self) -> tuple[float, float]:
        """95 % interval of the mean relative difference (Student's t over the captures)."""
        if self.n < 2:
            return (math.nan, math.nan)
        half = stats.t.ppf(0.975, self.n - 1) * float(np.std(self.percent, ddof=1)) \
            / math.sqrt(self.n)
        return (self.mean - half, self.mean + half)

    @property
    def spread(self) -> float:
        return float(np.std(self.percent, ddof=1)) if self.n >= 2 else math.nan

    @property
    def beyond(self) -> int:
        """Captures whose own interval of the difference excludes zero."""
        return sum(abs(p) > h for p, h in zip(self.percent, self.half_width))


def _sd(estimate_ci: tuple[float, float] | None) -> float:
    if estimate_ci is None:
        return math.inf
    lo, hi = estimate_ci
    return (hi - lo) / (2 * _Z95)


def compare_across_captures(pairs: list[tuple[IdentificationResult, IdentificationResult]]
                            ) -> dict[str, ParameterShift]:
    """Every parameter (friction, then the rig's) both results of a pair report identified."""
    shifts: dict[str, ParameterShift] = {}
    for a, b in pairs:
        for group_a, group_b in ((a.parameters, b.parameters), (a.rig, b.rig)):
            for name in group_a.keys() | group_b.keys():
                shift = shifts.setdefault(name, ParameterShift(name))
                pa, pb = group_a.get(name), group_b.get(name)
                ok_a = pa is not None and pa.identifiable and pa.value not in (None, 0.0)
                ok_b = pb is not None and pb.identifiable and pb.value is not None
                if ok_a and ok_b:
                    assert pa is not None and pb is not None
                    va, vb = float(pa.value or 0.0), float(pb.value or 0.0)
                    sd = math.hypot(_sd(pa.ci95), _sd(pb.ci95))
                    shift.captures.append(a.capture_id or "?")
                    shift.percent.append(100.0 * (vb / va - 1.0))
                    shift.half_width.append(100.0 * _Z95 * sd / abs(va))
                elif ok_a:
                    shift.only_a += 1
                elif ok_b:
                    shift.only_b += 1
    return {n: s for n, s in sorted(shifts.items()) if s.n or s.only_a or s.only_b}


def shift_table(shifts: dict[str, ParameterShift], a: str, b: str) -> str:
    """One line per parameter: how B differs from A across the captures."""
    lines = [f"{b} against {a}: relative difference {b}/{a} - 1 over the captures both "
             "identify it in",
             f"{'parameter':<16} {'n':>4} {'mean %':>8} {'95 % of the mean':>20} "
             f"{'spread %':>9} {'beyond':>7} {'only ' + a:>12} {'only ' + b:>12}"]
    for s in shifts.values():
        lo, hi = s.mean_ci
        ci = f"[{lo:+.2f}, {hi:+.2f}]" if s.n >= 2 else "-"
        mean = f"{s.mean:+8.2f}" if s.n else f"{'-':>8}"
        spread = f"{s.spread:9.2f}" if s.n >= 2 else f"{'-':>9}"
        lines.append(f"{s.name:<16} {s.n:>4} {mean} {ci:>20} {spread} "
                     f"{s.beyond:>3}/{s.n:<3} {s.only_a:>12} {s.only_b:>12}")
    lines.append("beyond: captures whose own 95 % interval of the difference excludes zero "
                 "(the two results' intervals combined as if independent: wider than the "
                 "truth)")
    return "\n".join(lines)


def plot_shifts(shifts: dict[str, ParameterShift], a: str, b: str, path: str) -> None:
    """One panel per parameter: each capture's relative difference with its interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [s for s in shifts.values() if s.n]
    cols = min(4, max(1, len(shown)))
    rows = max(1, math.ceil(len(shown) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax, s in zip(axes.flat, shown):
        x = np.arange(s.n)
        ax.errorbar(x, s.percent, yerr=s.half_width, fmt="o", ms=3, capsize=2, lw=0.8)
        ax.axhline(0.0, color="k", lw=0.6)
        lo, hi = s.mean_ci
        if s.n >= 2:
            ax.axhspan(lo, hi, color="C1", alpha=0.25, lw=0)
        ax.set_title(s.name, fontsize=9)
        ax.set_xlabel("capture", fontsize=8)
        ax.set_ylabel(f"{b}/{a} - 1 (%)", fontsize=8)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(shown):]:
        ax.axis("off")
    fig.suptitle(f"{b} against {a}: each capture's relative difference (95 %), the mean's "
                 "95 % interval shaded", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
