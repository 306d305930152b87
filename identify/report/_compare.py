"""Every applicable method on one capture, side by side: the seed's Table V for any capture."""

from __future__ import annotations

import math
import time

from .._progress import Progress
from ..methods import METHODS, identify
from ..model import PARAM_NAMES
from ..results import IdentificationResult, ParameterEstimate
from ..signal import Measurement

#: seed 000 Table V, 35 s simulation: compute seconds of its two methods
SEED_TABLE_V_SECONDS = {"UAS (seed)": 3.43, "grey-box optimisation (seed)": 4504.6}
SEED_TABLE_V_FIT = {"UAS (seed)": (98.97, 99.53), "grey-box optimisation (seed)": (12.77, 2.80)}


def compare_methods(m: Measurement, methods: list[str] | None = None,
                    progress: Progress | None = None
                    ) -> list[IdentificationResult]:
    """Run each method (default: all registered) on the capture, in a fixed order."""
    names = methods or list(METHODS)
    results = []
    for i, name in enumerate(names):
        sub = None
        if progress:
            progress(i / len(names), name)

            def sub(f: float, msg: str = "", i: int = i, name: str = name) -> None:
                # inside a long method, not only between them
                progress((i + min(max(f, 0.0), 1.0)) / len(names), f"{name}: {msg}")

        results.append(_run_or_explain(name, m, sub))
    if progress:
        progress(1.0, "done")
    return results


def _run_or_explain(name: str, m: Measurement, progress: Progress | None = None
                    ) -> IdentificationResult:
    """The method's result; if the method cannot take this capture (it says why with a
    ValueError), a row of its own saying so, so one method never takes the table down."""
    t0 = time.perf_counter()
    try:
        return identify(m, name, progress)
    except ValueError as exc:
        why = f"could not run on this capture: {exc}"
        return IdentificationResult.of_measurement(
            m, method=name, compute_seconds=max(time.perf_counter() - t0, 1e-9),
            parameters={n: ParameterEstimate(value=None, ci95=None, identifiable=False,
                                             note=why) for n in PARAM_NAMES},
            fit_percent={"arm": None, "pendulum": None}, diagnostics={"error": why})


def _fmt(x: float | None, spec: str) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return format(x, spec)


def table_v(results: list[IdentificationResult]) -> str:
    """Compute time, normalised time (eq. 54) and fit per joint (eq. 53), plus the seed's rows."""
    lines = [f"{'method':<30} {'compute s':>10} {'eq. 54':>10} {'fit arm %':>10} "
             f"{'fit pend %':>10} {'vs seed UAS':>12}"]
    uas_s = SEED_TABLE_V_SECONDS["UAS (seed)"]
    for r in results:
        lines.append(f"{r.method:<30} {r.compute_seconds:>10.3f} "
                     f"{r.normalized_compute_time:>10.3g} "
                     f"{_fmt(r.fit_percent.get('arm'), '10.4f'):>10} "
                     f"{_fmt(r.fit_percent.get('pendulum'), '10.4f'):>10} "
                     f"{uas_s / r.compute_seconds:>11.1f}x")
    for name, secs in SEED_TABLE_V_SECONDS.items():
        fa, fp = SEED_TABLE_V_FIT[name]
        lines.append(f"{name:<30} {secs:>10.2f} {secs / (35 * 1000):>10.3g} {fa:>10.2f} "
                     f"{fp:>10.2f} {uas_s / secs:>11.3f}x")
    lines.append("(seed rows: its 35 s simulation at 1 kHz with sigma = 0.1 rad white noise on "
                 "the angles, Table V; a capture made alike compares like with like: "
                 "`hilrig simulate --rate 1000 --noise 0.1`. Every method is timed without "
                 "its validation simulation; eq. 54 uses each capture's own duration and rate)")
    return "\n".join(lines)


def parameter_table(results: list[IdentificationResult]) -> str:
    """Estimates side by side; '-' where a method does not identify a parameter."""
    head = f"{'parameter':<10}" + "".join(f" {r.method:>14}" for r in results)
    lines = [head]
    for name in PARAM_NAMES:
        cells = []
        for r in results:
            p = r.parameters.get(name)
            if p is None or p.value is None:
                cells.append("-" if p is None or p.assumed is None else f"({p.assumed:.4g})")
            else:
                cells.append(f"{p.value:.4g}")
        lines.append(f"{name:<10}" + "".join(f" {c:>14}" for c in cells))
    lines.append("(value) in parentheses: not identifiable by that method; the value it assumed")
    return "\n".join(lines)
