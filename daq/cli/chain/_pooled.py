"""`hilrig identify --rig single A.csv B.csv ... --pooled`: records of one chain rig
(single, nlink:N) identified side by side (daq.cli._identify_files), then put together
(identify.session.pool_results): the joints' friction and the rig's ratios with their
intervals, and whether the friction drifted between the records."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial

from hilrig.identify import ChainRig, Record, identify_chain
from hilrig.identify.methods import Scale

from ...acquisition import Capture, to_record
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

__all__ = ["identify_pooled_records"]

#: what a pooled identification of a chain rig leaves to a single record's
_ONE_RECORD = (("--validate", "validate"), ("--params", "params"),
               ("--params-only", "params_only"), ("--segment-s", "segment_s"))


def identify_pooled_records(args: argparse.Namespace, first: Capture | None, rig: ChainRig,
                            record_of: Callable[[argparse.Namespace, int], Record],
                            scale: Scale | None, hint: str) -> int:
    """Every file read and checked before the first fit (the first already read where
    it recorded its kind: `first`), then each identified as `rig` (identify_chain) and
    the answer printed. record_of reads a CSV record as the kind's commands do."""
    paths = check_pooled_paths(args)
    for option, name in _ONE_RECORD:
        if getattr(args, name, None):
            raise UsageError(f"{option} scores one record; --pooled puts records together "
                             "(identify them one at a time to validate)")
    records, files = [], []
    tilted: tuple[str, float] | None = None  # the first capture that recorded its tilt
    for k, path in enumerate(paths):
        capture = first if k == 0 and first is not None else None
        if capture is None and not is_csv(path):
            capture = read_capture_file(path, settings_of(args))
            theirs = capture.kind.kind if capture.kind is not None else "furuta"
            if theirs != rig.kind:
                raise UsageError(f"{path}: records rig kind {theirs}, not {rig.kind}; "
                                 "--pooled takes records of one rig")
        if capture is not None and capture.kind is not None and args.tilt is None:
            tilted = _same_tilt(path, capture.kind.plane_tilt_deg, tilted)
        if capture is not None:
            records.append(to_record(capture)[0])
            files.append(PooledFile(path, capture.created_utc, capture.covariates))
        else:
            records.append(record_of(argparse.Namespace(**{**vars(args), "file": path}),
                                     rig.links))
            files.append(PooledFile(path, capture_csv_time(path), None))
    x, covariate = session_covariate(args, files)
    fits = [FileFit.of(path, partial(identify_chain, record, rig, scale=scale), hint, record,
                       "chain")
            for path, record in zip(paths, records)]
    return print_pooled(args, identify_files(fits, args.workers), x, covariate)


def _same_tilt(path: str, tilt: float, tilted: tuple[str, float] | None
               ) -> tuple[str, float]:
    """The first recorded tilt, checked against this capture's: a plane tilted otherwise
    is another rig (gravity along the swing is g cos(tilt)), not a drift of friction."""
    if tilted is not None and tilt != tilted[1]:
        raise UsageError(f"{path}: records a plane tilted {tilt:g} deg, {tilted[0]} "
                         f"{tilted[1]:g} deg; --pooled takes records of one rig (--tilt "
                         "tells them all one tilt)")
    return tilted or (path, tilt)
