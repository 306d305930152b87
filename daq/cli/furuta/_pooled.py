"""`hilrig identify A.h5 B.h5 ... --pooled`: captures of one Furuta rig identified one by one,
then put together (identify.session.pool_results): the rig's friction and quantities with
their intervals, and whether the friction drifted between the captures."""

from __future__ import annotations

import argparse
import math
from datetime import datetime
from pathlib import Path

import numpy as np

from hilrig.identify import IdentificationResult, Measurement, identify, pool_results

from ...acquisition import Capture, covariate_value
from ...config import Settings
from ...storage import capture_csv_time
from .._capture_files import read_capture_file
from .._fit_guard import fit_guard
from .._progress import ProgressBar
from .._usage import UsageError, settings_of
from ._measurement import FURUTA_HINT, load_measurement

__all__ = ["identify_pooled_files"]


def identify_pooled_files(args: argparse.Namespace, first: Capture | None) -> int:
    settings = settings_of(args)
    paths = [args.file, *args.more]
    if len(paths) < 2:
        raise UsageError("--pooled: give two capture files or more (captures of one rig)")
    if args.method != "shooting":
        raise UsageError(f"--pooled pools the recommended estimator's results (shooting), "
                         f"not --method {args.method}")
    # every file read and checked before the first fit
    captures = [first if k == 0 and first is not None else _read(path, args, settings)
                for k, path in enumerate(paths)]
    ms = [load_measurement(argparse.Namespace(**{**vars(args), "file": path}), settings, c)
          for path, c in zip(paths, captures)]
    for path, m in zip(paths[1:], ms[1:]):
        if m.rig != ms[0].rig:
            raise UsageError(f"{path}: its rig differs from {paths[0]}'s; --pooled takes "
                             "captures of one rig (set --tilt, --measured alike)")
    x, covariate = _covariate(args, paths, captures)
    results = _identify_each(paths, ms)
    session = pool_results(results, x, covariate=covariate,
                           compute_seconds=sum(r.compute_seconds for r in results))
    print(session.to_json(indent=2) if args.json else str(session))
    return 0


def _read(path: str, args: argparse.Namespace, settings: Settings) -> Capture:
    return read_capture_file(path, settings, getattr(args, "unit", None),
                             getattr(args, "zero", None))


def _covariate(args: argparse.Namespace, paths: list[str], captures: list[Capture]
               ) -> tuple[np.ndarray, str]:
    """--covariate's value recorded in each file, or --hours as given, else each
    capture's recorded time in hours since the first."""
    name = getattr(args, "covariate", None)
    if name is not None:
        if args.hours is not None:
            raise UsageError("--covariate and --hours: give one; the trend is in one of them")
        values = []
        for path, c in zip(paths, captures):
            try:
                values.append(covariate_value(c.covariates, name))
            except ValueError as exc:
                raise UsageError(f"{path}: {exc}; simulate --covariate {name}=VALUE records "
                                 "one") from None
        return np.array(values), name
    if args.hours is not None:
        if len(args.hours) != len(paths):
            raise UsageError(f"--hours: {len(args.hours)} values for {len(paths)} files")
        if not all(math.isfinite(h) for h in args.hours):
            raise UsageError("--hours: every value must be a finite number")
        return np.asarray(args.hours, dtype=float), "hours"
    for path in paths:
        if Path(path).suffix.lower() == ".csv" and capture_csv_time(path) is None:
            raise UsageError(f"{path}: records no time of capture (a CSV from elsewhere); "
                             "give --hours, one value per file, or export it from hilrig")
    times = [datetime.fromisoformat(c.created_utc.replace("Z", "+00:00")) for c in captures]
    start = min(times)
    return np.array([(t - start).total_seconds() / 3600.0 for t in times]), "hours"


def _identify_each(paths: list[str], ms: list[Measurement]) -> list[IdentificationResult]:
    out = []
    for k, (path, m) in enumerate(zip(paths, ms)):
        bar = ProgressBar(f"identify {k + 1}/{len(paths)} {path}")
        try:
            with fit_guard(path, FURUTA_HINT):
                out.append(identify(m, method="shooting", progress=bar))
        finally:
            bar.close()
    return out
