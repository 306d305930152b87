"""`hilrig results compare --method A --method B [--session S] [--plot PNG]`: what a new
estimator changes in a lab's conclusions, parameter by parameter, over the captures both
methods identified (identify.report.compare_across_captures); the latest result of each
method per capture."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hilrig.identify import IdentificationResult
from hilrig.identify.report import compare_across_captures, plot_shifts, shift_table

from ..storage import readable_results
from ._catalog import open_catalog
from ._usage import UsageError, settings_of

__all__ = ["cmd_results_compare"]


def _latest(rows: list[tuple[Any, IdentificationResult]]) -> dict[str, IdentificationResult]:
    latest: dict[str, IdentificationResult] = {}
    for row, result in rows:  # in the order they were added: the last one stays
        latest[row.capture_id] = result
    return latest


def cmd_results_compare(args: argparse.Namespace) -> int:
    methods = list(dict.fromkeys(args.method))
    if len(methods) != 2:
        raise UsageError("results compare: name two different methods: --method A --method B")
    a, b = methods
    settings = settings_of(args)

    def unreadable(exc: Exception) -> None:
        print(f"left out: {exc}", file=sys.stderr)

    with open_catalog(settings) as cat:
        if args.session is not None:
            cat.session(args.session)  # CatalogError (one line) if there is none
        by = {m: _latest(readable_results(cat.results(session_id=args.session, method=m),
                                          unreadable)) for m in methods}
    both = sorted(by[a].keys() & by[b].keys())
    if not both:
        raise UsageError(f"results compare: no capture has results of both {a} and {b}"
                         + (f" in session {args.session}" if args.session else ""))
    shifts = compare_across_captures([(by[a][c], by[b][c]) for c in both])
    if args.format == "json":
        print(json.dumps({"a": a, "b": b, "captures": both, "parameters": {
            s.name: {"n": s.n, "mean_percent": s.mean if s.n else None,
                     "mean_ci95_percent": list(s.mean_ci) if s.n >= 2 else None,
                     "spread_percent": s.spread if s.n >= 2 else None,
                     "beyond": s.beyond, "only_a": s.only_a, "only_b": s.only_b,
                     "per_capture": [{"capture_id": c, "percent": p, "ci95_half_percent": h}
                                     for c, p, h in zip(s.captures, s.percent,
                                                        s.half_width)]}
            for s in shifts.values()}}, indent=2))
    else:
        print(f"{len(both)} capture(s) with results of both methods")
        print(shift_table(shifts, a, b))
    if args.plot:
        plot_shifts(shifts, a, b, args.plot)
        print(f"figure: {args.plot}", file=sys.stderr)
    return 0
