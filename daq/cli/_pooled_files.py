"""What `hilrig identify A B ... --pooled` does alike for every rig kind: the files' place
in the session (their recorded times, --hours, or a recorded --covariate), and the
session's answer printed. Each kind reads and identifies its own files
(daq.cli.furuta, daq.cli.chain)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np

from hilrig.identify import IdentificationResult, pool_results

from ..acquisition import covariate_value
from ._usage import UsageError

__all__ = ["PooledFile", "check_pooled_paths", "is_csv", "print_pooled", "session_covariate"]


@dataclass(frozen=True)
class PooledFile:
    """One file of a pooled identification: what it records of its place in the session."""

    path: str
    created_utc: str | None  # None: a file from elsewhere, its time unknown
    covariates: Mapping[str, float] | None  # None: the file's format records none


def check_pooled_paths(args: argparse.Namespace) -> list[str]:
    """The files to pool, two or more; one line otherwise."""
    paths = [args.file, *args.more]
    if len(paths) < 2:
        raise UsageError("--pooled: give two capture files or more (captures of one rig)")
    return paths


def session_covariate(args: argparse.Namespace, files: Sequence[PooledFile]
                      ) -> tuple[np.ndarray, str]:
    """--covariate's value recorded in each file, or --hours as given, else each file's
    recorded time in hours since the first."""
    name = getattr(args, "covariate", None)
    if name is not None:
        if args.hours is not None:
            raise UsageError("--covariate and --hours: give one; the trend is in one of them")
        values = []
        for f in files:
            if f.covariates is None:
                raise UsageError(f"{f.path}: this file's format records no covariates; give "
                                 "--hours, one value per file")
            try:
                values.append(covariate_value(dict(f.covariates), name))
            except ValueError as exc:
                raise UsageError(f"{f.path}: {exc}; simulate --covariate {name}=VALUE records "
                                 "one") from None
        return np.array(values), name
    if args.hours is not None:
        if len(args.hours) != len(files):
            raise UsageError(f"--hours: {len(args.hours)} values for {len(files)} files")
        if not all(math.isfinite(h) for h in args.hours):
            raise UsageError("--hours: every value must be a finite number")
        return np.asarray(args.hours, dtype=float), "hours"
    for f in files:
        if f.created_utc is None:
            raise UsageError(f"{f.path}: records no time of capture (a CSV from elsewhere); "
                             "give --hours, one value per file, or export it from hilrig")
    times = [datetime.fromisoformat(str(f.created_utc).replace("Z", "+00:00")) for f in files]
    start = min(times)
    return np.array([(t - start).total_seconds() / 3600.0 for t in times]), "hours"


def print_pooled(args: argparse.Namespace, results: Sequence[IdentificationResult],
                 x: np.ndarray, covariate: str) -> int:
    """The session's answer from the files' results, as JSON or as text."""
    session = pool_results(results, x, covariate=covariate,
                           compute_seconds=sum(r.compute_seconds for r in results))
    print(session.to_json(indent=2) if args.json else str(session))
    return 0


def is_csv(path: str) -> bool:
    return Path(path).suffix.lower() == ".csv"
