"""Offline commands on capture files: simulate, identify, compare, export.

They need no broker and no rig; bad arguments or files are one line and exit 2, every
number checked against its range (_ranges) before any work; a fit that fails numerically
is one line and exit 1 (_fit_guard). What differs per rig kind is the kind's part
(daq.cli.furuta, daq.cli.chain: _rig_commands.RigCommands), chosen by --rig, the kind a
capture file recorded, or the config's [rig] kind.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..acquisition import kind_of
from ..storage import write_capture_csv, write_capture_h5
from ._capture_files import check_out_free, read_capture_file
from ._kinds import rig_commands, rig_family_of
from ._ranges import check_numbers
from ._usage import UsageError, settings_of

__all__ = ["cmd_compare", "cmd_export", "cmd_identify", "cmd_simulate"]


def cmd_simulate(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    check_numbers(args)
    family, args = rig_family_of(args, settings)
    return rig_commands(family).simulate(args, settings)


def cmd_identify(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    check_numbers(args)
    # the rig kind: --rig, else what an HDF5 capture recorded, else the [rig] config
    capture = None
    if args.rig is None and Path(args.file).suffix.lower() in (".h5", ".hdf5"):
        capture = read_capture_file(args.file, settings)
        family = kind_of(capture.kind).family
    else:
        family, args = rig_family_of(args, settings)
    commands = rig_commands(family)
    if args.pooled or args.more:
        if not args.pooled:
            raise UsageError(f"identify: {len(args.more) + 1} files; add --pooled to identify "
                             "them together, or give one")
        if commands.identify_pooled is None:
            raise UsageError(f"--pooled: rig kind {family} has no pooled identification yet "
                             "(the furuta rig has)")
        return commands.identify_pooled(args, capture)
    for option, value in (("--hours", args.hours), ("--covariate", args.covariate),
                          ("--workers", args.workers)):
        if value is not None:
            raise UsageError(f"{option} is for --pooled")
    return commands.identify(args, capture)


def cmd_compare(args: argparse.Namespace) -> int:
    check_numbers(args)
    family, args = rig_family_of(args, settings_of(args))
    return rig_commands(family).compare(args)


def cmd_export(args: argparse.Namespace) -> int:
    capture = read_capture_file(args.file, settings_of(args))
    out = Path(args.out)
    check_out_free(out, args.force)
    if out.suffix.lower() == ".csv":
        write_capture_csv(out, capture, overwrite=args.force)
    elif out.suffix.lower() in (".h5", ".hdf5"):
        write_capture_h5(out, capture, overwrite=args.force)
    else:
        raise UsageError(f"--out {out}: the file must end in .csv or .h5")
    print(f"wrote {out}: {len(capture)} samples")
    return 0
