"""The offline commands for the Furuta rig: simulate a capture, identify it by any of
identify's methods, compare the methods (seed 000's Table V and figures)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from hilrig.identify import (
    METHODS,
    PARAM_NAMES,
    FrictionParams,
    IdentificationResult,
    identify,
)
from hilrig.identify.model import RIG_ERROR_FIELDS, RigParams
from hilrig.identify.reference import TABLE_III_TRUTH

from ...acquisition import Capture, TriggerInfo
from ...config import Settings, first_error
from ...storage import write_capture_csv, write_capture_h5
from .._capture_files import check_out_free
from .._fit_guard import fit_guard
from .._progress import ProgressBar
from .._ranges import Range
from .._rig_commands import RigCommands
from .._simulate_options import (
    check_capture_length,
    covariates_arg,
    realism_arg,
    session_hours_arg,
)
from .._usage import UsageError, json_arg, settings_of
from ._measurement import FURUTA_HINT, load_measurement

__all__ = ["FURUTA_COMMANDS", "format_result"]


def _friction_arg(text: str) -> FrictionParams:
    """A JSON object with any of the ten names (or an IdentificationResult's parameters)."""
    obj = json_arg(text, "--friction")  # a whole result nests 4 deep, within the limit
    if isinstance(obj, dict) and isinstance(obj.get("parameters"), dict):
        obj = obj["parameters"]  # a whole IdentificationResult
    if not isinstance(obj, dict):
        raise UsageError("--friction: expected a JSON object of friction parameters")
    unknown = sorted(set(obj) - set(PARAM_NAMES))
    if unknown:
        raise UsageError(f"--friction: unknown parameter {unknown[0]!r}; "
                         f"names are {', '.join(PARAM_NAMES)}")
    values = TABLE_III_TRUTH.model_dump()
    for name, v in obj.items():
        if isinstance(v, dict):  # {"value": x, ...} from a result; fall back to the assumed value
            v = v.get("value") if v.get("value") is not None else v.get("assumed")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise UsageError(f"--friction: {name} must be a finite number, got {v!r}")
        values[name] = float(v)
    try:
        friction = FrictionParams(**values)
    except ValidationError as exc:  # name the parameter and the rule it breaks
        err = exc.errors()[0]
        raise UsageError(f"--friction: {first_error(exc, '(parameters)')}, "
                         f"got {err.get('input')!r}") from None
    for name, v in values.items():  # the sign rules above, then the magnitude
        _friction_range(name).check(f"--friction: {name}", v)
    return friction


#: --friction values lie within this factor of seed 000's Table III either way (a
#: coefficient from 0): a bearing braked far harder makes the simulation diverge
FRICTION_FACTOR = 1e3


def _friction_range(name: str) -> Range:
    truth = float(getattr(TABLE_III_TRUTH, name))
    positive = name.startswith(("omega_t", "Fn_t"))  # a transition: never 0
    return Range(truth / FRICTION_FACTOR if positive else 0.0, truth * FRICTION_FACTOR,
                 f"(within a factor of {FRICTION_FACTOR:g} of seed 000's Table III)")


# -- simulate ----------------------------------------------------------------------------
def _simulate(args: argparse.Namespace, settings: Settings) -> int:
    from hilrig.drivers.sim import SimulatedRig

    out = Path(args.out)
    if out.suffix.lower() not in (".h5", ".hdf5", ".csv"):
        raise UsageError(f"--out {out}: the file must end in .h5 or .csv")
    check_out_free(out, args.force)
    rig = settings.rig.model_copy(update={"tilt_deg": args.tilt}) if args.tilt is not None \
        else settings.rig
    if not 0 <= rig.tilt_deg < 90:
        raise UsageError(f"--tilt must be in [0, 90) degrees, got {rig.tilt_deg}")
    friction = _friction_arg(args.friction) if args.friction else settings.sim.friction
    realism = realism_arg(args, settings.sim.realism)
    rate = settings.sample_rate_hz if args.rate is None else args.rate
    if not (math.isfinite(rate) and 100 <= rate <= 100_000):
        raise UsageError(f"--rate must be in [100, 100000] Hz, got {rate:g}")
    check_capture_length(args, rate, settings)
    covariates = {**realism.conditions(session_hours_arg(args)),
                  **covariates_arg(getattr(args, "covariate", None))}
    src = SimulatedRig(rig=rig, friction=friction, pose_deg=(args.theta0, args.theta1),
                       rate_hz=rate, counts_per_rev=settings.counts_per_rev, paced=False,
                       hold_s=args.rest, realism=realism,
                       session_hours=session_hours_arg(args))
    total = int(round(args.rest * rate)) + int(round(args.duration * rate)) + 1
    bar = ProgressBar("simulate")
    index, chunks = [], []
    done = 0
    while done < total:
        n = min(10_000, total - done)
        for block in src.read_link(n):
            index.append(block.first_index + np.arange(len(block), dtype=np.int64))
            chunks.append(block.counts)
        done += n
        bar(done / total, f"{done / rate:.1f} s")
    bar.close()
    counts = np.concatenate(chunks)
    capture = Capture(
        capture_id=out.stem, sample_index=np.concatenate(index), counts=counts,
        sample_rate_hz=rate, counts_per_rev=src.info.counts_per_rev, rig=rig, source=src.info,
        covariates=covariates,
        trigger=TriggerInfo(onset_index=src.release_index, start_index=0, end_index=total,
                            end_reason="duration"))
    writer = write_capture_csv if out.suffix.lower() == ".csv" else write_capture_h5
    writer(out, capture, overwrite=args.force)
    print(f"wrote {out}: {counts.shape[0]} samples, {args.duration:g} s after release from "
          f"({args.theta0:g}, {args.theta1:g}) deg, tilt {rig.tilt_deg:g} deg")
    if not realism.ideal:
        print(f"  as a real rig: {_departures(rig, src.rig)}"
              + (f"; {total - counts.shape[0]} samples lost" if counts.shape[0] < total else ""))
    return 0


def _departures(nominal: RigParams, true: RigParams) -> str:
    """How the true rig departs from the nominal one, briefly."""
    parts = [f"{name} {100 * (getattr(true, name) / getattr(nominal, name) - 1):+.1f} %"
             for name in RIG_ERROR_FIELDS if getattr(true, name) != getattr(nominal, name)]
    if true.tilt_deg != nominal.tilt_deg:
        parts.append(f"tilt {true.tilt_deg:.2f} deg")
    if true.drag1 != nominal.drag1:
        parts.append(f"drag {true.drag1:g}")
    if true.spring0 != nominal.spring0:
        parts.append(f"spring {true.spring0:g}")
    return ", ".join(parts) or "the nominal rig"


# -- identify ----------------------------------------------------------------------------
def _identify(args: argparse.Namespace, capture: Capture | None) -> int:
    settings = settings_of(args)
    for flag in ("validate", "params", "friction_law", "segment_s"):
        if getattr(args, flag, None):
            raise UsageError(f"--{flag.replace('_', '-')} is for --rig single or nlink:N")
    m = load_measurement(args, settings, capture)
    bar = ProgressBar(f"identify {args.method}")
    try:
        with fit_guard(args.file, FURUTA_HINT):
            result = identify(m, method=args.method, progress=bar)
    finally:
        bar.close()
    if args.json:
        print(result.to_json(indent=2))
    else:
        print(format_result(result))
    return 0


def format_result(result: IdentificationResult) -> str:
    return result.summary()


# -- compare -----------------------------------------------------------------------------
def _compare(args: argparse.Namespace) -> int:
    from hilrig.identify.report import compare_methods, parameter_table, table_v

    m = load_measurement(args, settings_of(args))
    methods = args.methods.split(",") if args.methods else None
    unknown = [x for x in methods or [] if x not in METHODS]
    if unknown:
        raise UsageError(f"--methods: unknown method {unknown[0]!r}; choose from "
                         f"{', '.join(sorted(METHODS))}")
    bar = ProgressBar("compare")
    try:
        with fit_guard(args.file, FURUTA_HINT):
            results = compare_methods(m, methods, progress=bar)
    finally:
        bar.close()
    print(table_v(results))
    print()
    print(parameter_table(results))
    if args.plot:
        from hilrig.identify import DEFAULT_METHOD
        from hilrig.identify.methods import run_uas
        from hilrig.identify.report import summary_figure, write_figures

        bar = ProgressBar("figures")
        try:
            with fit_guard(args.file, FURUTA_HINT):
                if not any("initial_state" in r.diagnostics for r in results):
                    results.append(identify(m, method="grey-box"))
                paths = write_figures(m, results, Path(args.plot), uas_run=run_uas(m),
                                      progress=bar)
                ref = next(r for r in results if "initial_state" in r.diagnostics)
                best = next((r for r in results if r.method == DEFAULT_METHOD), ref)
                paths.append(summary_figure(m, best, ref, Path(args.plot) /
                                            f"fig9_summary_{best.method}.png"))
        finally:
            bar.close()
        for path in paths:
            print(f"wrote {path}")
    return 0


#: the Furuta rig's part of the offline commands (daq.cli._rig_commands)
def _identify_pooled(args: argparse.Namespace, capture: Capture | None) -> int:
    # on use: pooling loads scipy.stats, which a single file's identification never needs
    from ._pooled import identify_pooled_files

    return identify_pooled_files(args, capture)


FURUTA_COMMANDS = RigCommands(simulate=_simulate, identify=_identify, compare=_compare,
                              identify_pooled=_identify_pooled)
