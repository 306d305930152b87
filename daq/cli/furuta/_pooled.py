"""`hilrig identify A.h5 B.h5 ... --pooled`: captures of one Furuta rig identified side by
side (daq.cli._identify_files), then put together (identify.session.pool_results): the
rig's friction and quantities with their intervals, and whether the friction drifted
between the captures."""

from __future__ import annotations

import argparse
from functools import partial

from hilrig.identify import identify

from ...acquisition import Capture
from ...config import Settings
from ...storage import capture_csv_time
from .._capture_files import read_capture_file
from .._identify_files import FileFit, identify_files
from .._pooled_files import (
    PooledFile,
    check_pooled_paths,
    is_csv,
    print_pooled,
    session_covariate,
)
from .._usage import UsageError, settings_of
from ._measurement import FURUTA_HINT, load_measurement

__all__ = ["identify_pooled_files"]


def identify_pooled_files(args: argparse.Namespace, first: Capture | None) -> int:
    settings = settings_of(args)
    paths = check_pooled_paths(args)
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
    files = [PooledFile(path, capture_csv_time(path) if is_csv(path) else c.created_utc,
                        c.covariates) for path, c in zip(paths, captures)]
    x, covariate = session_covariate(args, files)
    fits = [FileFit.of(path, partial(identify, m, method="shooting"), FURUTA_HINT, m,
                       "furuta")
            for path, m in zip(paths, ms)]
    return print_pooled(args, identify_files(fits, args.workers), x, covariate)


def _read(path: str, args: argparse.Namespace, settings: Settings) -> Capture:
    return read_capture_file(path, settings, getattr(args, "unit", None),
                             getattr(args, "zero", None))

