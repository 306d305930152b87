"""A chain rig's methods side by side, scored under one rule: seed 002's regression and
the recommended output error over segments.

Both parameter sets are scored by identify.methods.validate_chain over the record's free
motion, in segments of the kind's default length, each simulated from a state fitted to
its own first 20 ms; so the table compares the parameters, not the ways the methods start
their simulations. Compute time is each method's own, without that scoring.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._progress import Progress, no_progress
from ..methods import (
    DEFAULT_SEGMENT_S,
    identify_chain,
    record_runs,
    result_params,
    validate_chain,
)
from ..model import ChainParams, ChainRig, inertial_names, inertial_normaliser
from ..seeds import identify_nlink
from ..signal import Record


@dataclass(frozen=True)
class ChainRow:
    method: str
    seconds: float
    fit_percent: dict[str, float | None]  # the mean over the scored segments, per joint
    params: ChainParams | None  # normalised
    note: str = ""


def _regression(record: Record, rig: ChainRig) -> ChainParams:
    """Seed 002's filtered regression (viscous joints) on every free run of the record."""
    swings = [q for t, q in record_runs(record, (), 1000.0) if t.size > 300]
    if not swings:
        raise ValueError("no free run of 0.3 s or more for the regression")
    h = 1.0 / min(record.rate_hz, 1000.0)
    fit = identify_nlink(swings, h=h, g=rig.g_plane, filtered=True).wls
    n = rig.links
    c = inertial_normaliser(n)
    k = len(inertial_names(n)) - 1
    inertial = np.insert(np.asarray(fit.theta[:k]), c, 1.0)
    fr = np.zeros((n, 5))
    fr[:, 3] = fit.theta[k:]
    return ChainParams(inertial, fr)


def _mean_fit(rows: list[dict[str, Any]], names: tuple[str, ...]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for name in names:
        vals = [r["fit_percent"][name] for r in rows]
        good = [float(v) for v in vals if v is not None]
        out[name] = float(np.mean(good)) if good else None
    return out


def _scored_span(record: Record, rig: ChainRig) -> tuple[tuple[float, float], float]:
    """The span every method is scored over (the whole record) and its segments' length."""
    span = (record.t0_s + float(record.t[0]), record.t0_s + float(record.t[-1]))
    return span, DEFAULT_SEGMENT_S[rig.kind.split(":")[0]]


def plot_chain_compare(record: Record, rig: ChainRig, rows: list[ChainRow], path: Path
                       ) -> Path:
    """compare_chain's rows as a figure: the record against each method's simulation,
    segment by segment as the table scores them, and their errors."""
    from ._held_out import plot_held_out

    span, seg = _scored_span(record, rig)
    sets = {r.method: r.params for r in rows if r.params is not None}
    return plot_held_out(record, rig, sets, span, seg, path,
                         title=f"{rig.kind}: each method's simulation in segments of "
                               f"{seg:g} s from their own first 20 ms")


def compare_chain(record: Record, rig: ChainRig, progress: Progress | None = None
                  ) -> list[ChainRow]:
    """Rows for seed 002's regression and the recommended method on `record`."""
    say = progress or no_progress
    span, seg = _scored_span(record, rig)
    rows = []
    fitters = {
        "regression (seed 002)": lambda k: _regression(record, rig),
        "shooting": lambda k: result_params(identify_chain(
            record, rig, progress=lambda f, m: say((k + f) / 2, m))),
    }
    for k, (name, fitter) in enumerate(fitters.items()):
        say(k / 2, name)
        t0 = time.perf_counter()
        try:
            params = fitter(k)
        except ValueError as exc:
            rows.append(ChainRow(name, time.perf_counter() - t0, {}, None, str(exc)))
            continue
        seconds = time.perf_counter() - t0
        scored = validate_chain(record, rig, params, span, seg)
        rows.append(ChainRow(name, seconds, _mean_fit(scored, rig.joint_names), params))
    say(1.0, "done")
    return rows


def chain_table(rows: list[ChainRow], rig: ChainRig) -> str:
    """The rows as text: time, mean fit per joint, and the standard parameters."""
    lines = [f"{'method':<24} {'time s':>7}  " + "  ".join(f"{j:>9}" for j in rig.joint_names)]
    for r in rows:
        fits = "  ".join("      n/a" if r.fit_percent.get(j) is None
                         else f"{r.fit_percent[j]:8.3f}%" for j in rig.joint_names)
        lines.append(f"{r.method:<24} {r.seconds:7.2f}  {fits}  {r.note}")
    names = inertial_names(rig.links)
    norm = names[inertial_normaliser(rig.links)]
    lines.append("")
    lines.append(f"{'parameter':<14}" + "".join(f"{r.method.split()[0]:>14}" for r in rows))
    for i, name in enumerate(names):
        if name == norm:
            continue
        lines.append(f"{name + '/' + norm:<14}" + "".join(
            f"{r.params.inertial[i]:14.6g}" if r.params else f"{'-':>14}" for r in rows))
    for j in range(rig.links):
        for term, col in (("Fc", 0), ("b", 3)):
            lines.append(f"{f'{term}{j + 1}/{norm}':<14}" + "".join(
                f"{r.params.friction[j, col]:14.6g}" if r.params else f"{'-':>14}"
                for r in rows))
    return "\n".join(lines)
