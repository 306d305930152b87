"""The offline commands for the chain rig kinds (single, nlink:N): simulate, identify with
held-out validation, compare.

A record `t,theta1[,theta2[,theta3]]` (absolute link angles; unit and zero from the flags
or a `# unit=deg zero=hanging` comment above the header) is identified by
identify.identify_chain. `--validate T0:T1` holds [T0, T1] out of the fit and scores it in
segments of `--segment-s` seconds; `--params JSON` scores a given parameter set (a
published one) under the same rules, beside or instead of hilrig's. Every option is
checked before the record is read, the span against the record before any fit.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from hilrig.identify import (
    ChainParams,
    ChainRig,
    IdentificationResult,
    Record,
    format_fit,
    identify_chain,
    result_params,
    utc_now,
    validate_chain,
)
from hilrig.identify.model import (
    CHAIN_FRICTION_TERMS,
    drifted_chain_friction,
    inertial_names,
    inertial_normaliser,
)

from ...acquisition import Capture, ChainKind, kind_of, to_record
from ...config import RigKindConfig, Settings
from ...storage import CaptureLimits, read_joint_csv, write_joint_csv
from .._capture_files import check_out_free
from .._fit_guard import fit_guard
from .._progress import ProgressBar
from .._rig_commands import RigCommands
from .._simulate_options import check_capture_length, realism_arg, session_hours_arg
from .._usage import UsageError, settings_of
from ._options import check_span, params_arg, scale_arg, segment_arg, span_arg

__all__ = ["CHAIN_COMMANDS", "default_chain_params", "given_ratios"]

#: what to try when a chain fit fails numerically
_CHAIN_HINT = ("check the record's --unit and --zero, --tilt and --params, or try another "
               "--friction-law")


def _record(args: argparse.Namespace, links: int) -> Record:
    if Path(args.file).suffix.lower() in (".h5", ".hdf5"):
        raise UsageError(f"{args.file}: this capture records no single or n-link rig; a "
                         "chain rig's file comes from a session with [rig] kind set, or as "
                         "CSV t,theta1[,...]")
    settings = settings_of(args)
    bar = ProgressBar(f"read {Path(args.file).name}")
    try:
        table = read_joint_csv(args.file, unit=args.unit, zero=args.zero,
                               limits=CaptureLimits.of(settings), progress=bar)
    finally:
        bar.close()
    if table.angles.shape[1] != links:
        raise UsageError(f"{args.file}: holds {table.angles.shape[1]} joint(s), rig kind "
                         f"{args.rig} has {links}")
    return Record(angles=table.angles, sample_index=table.sample_index, rate_hz=table.rate_hz,
                  t0_s=float(table.t[0]), capture_id=table.path.stem)


def _rig(args: argparse.Namespace) -> ChainRig:
    try:
        return ChainRig(kind=args.rig, tilt_deg=args.tilt or 0.0,
                        friction=args.friction_law or "auto")
    except ValueError as exc:
        raise UsageError(f"--rig/--tilt: {str(exc).splitlines()[-1].strip()}") from None


def _told_rig(args: argparse.Namespace, capture: Capture | None) -> ChainRig:
    """The rig a capture recorded (with --tilt and --friction-law over it), else the one
    the options name."""
    if capture is None:
        return _rig(args)
    kind = kind_of(capture.kind)
    if not isinstance(kind, ChainKind):
        raise UsageError(f"{args.file}: a Furuta rig's capture, not a chain rig's")
    # the kind's rig alone: the record (every sample's link angles) is built once, later
    rig = kind.rig
    return rig.model_copy(update={k: v for k, v in (("tilt_deg", args.tilt),
                                                    ("friction", args.friction_law))
                                  if v is not None})


def _identify(args: argparse.Namespace, capture: Capture | None = None) -> int:
    """Identify (and validate) a chain rig's record: a CSV, or a capture recorded with
    its kind."""
    rig = _told_rig(args, capture)
    span = span_arg(args.validate) if args.validate else None
    seg_s = segment_arg(args)
    given = params_arg(args.params, rig.links) if args.params else None
    scale = scale_arg(args.measured, rig.links)
    record = to_record(capture)[0] if capture is not None else _record(args, rig.links)
    if span:
        check_span(args.validate, span, record)
    out: dict[str, Any] = {}
    result: IdentificationResult | None = None
    if not args.params_only:
        bar = ProgressBar(f"identify {rig.kind}")
        try:
            with fit_guard(args.file, _CHAIN_HINT):
                result = identify_chain(record, rig, exclude=[span] if span else [],
                                        scale=scale, progress=bar)
        finally:
            bar.close()
        out = json.loads(result.to_json())
    if span:
        seg = seg_s or (span[1] - span[0])
        with fit_guard(args.file, _CHAIN_HINT):
            if result is not None:
                out["validation"] = validate_chain(record, rig, result_params(result), span,
                                                   seg)
            if given is not None:
                out["validation_given"] = validate_chain(record, rig, given, span, seg)
    if given is not None:  # its ratios, named as the result's, to read side by side
        out["given_parameters"] = given_ratios(given, rig.links)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(format_chain(out))
    return 0


def _identify_pooled(args: argparse.Namespace, capture: Capture | None = None) -> int:
    from ._pooled import identify_pooled_records

    rig = _told_rig(args, capture)
    return identify_pooled_records(args, capture, rig, _record,
                                   scale_arg(args.measured, rig.links), _CHAIN_HINT)


def given_ratios(params: ChainParams, links: int) -> dict[str, float]:
    """A parameter set's standard parameters and friction, named as a result names them."""
    p = params.normalised()
    names = inertial_names(links)
    norm = names[inertial_normaliser(links)]
    out = {f"{n}/{norm}": float(p.inertial[i]) for i, n in enumerate(names) if n != norm}
    for j in range(links):
        for col, term in enumerate(CHAIN_FRICTION_TERMS):
            if term == "vt":
                continue
            out[f"{term}{j + 1}/{norm}"] = float(p.friction[j, col])
        if p.friction[j, 0] or p.friction[j, 1]:
            out[f"vt{j + 1}"] = float(p.friction[j, 2])
    return out


def format_chain(out: dict[str, Any]) -> str:
    lines = []
    given = out.get("given_parameters", {})
    if "parameters" in out:
        lines.append(f"rig {out['rig_kind']}, method {out['method']}, capture "
                     f"{out.get('capture_id') or '-'}, {out['capture_seconds']:.2f} s at "
                     f"{out['sample_rate_hz']:g} Hz; friction law "
                     f"{out['diagnostics']['friction_law']}")
        head = f"{'given':>11}  " if given else ""
        lines.append(f"{'parameter':<12} {'value':>12} {'95 % interval':>27}  {head}meaning")
        for name, p in out["parameters"].items():
            val = "n/i" if p["value"] is None else f"{p['value']:.5g}"
            ci = "" if p["ci95"] is None else f"[{p['ci95'][0]:.5g}, {p['ci95'][1]:.5g}]"
            other = (f"{given[name]:>11.5g}  " if name in given else f"{'-':>11}  ") if given \
                else ""
            lines.append(f"{name:<12} {val:>12} {ci:>27}  {other}{p['note']}")
        for name, p in out.get("rig", {}).items():
            ci = "" if p["ci95"] is None else f"[{p['ci95'][0]:.5g}, {p['ci95'][1]:.5g}]"
            lines.append(f"{name:<12} {p['value']:>12.5g} {ci:>27}  {p['note']}")
        lines.append(f"fit on the fitted segments (seed 000 eq. 53): "
                     f"{format_fit(out['fit_percent'])}")
        lines.extend(f"warning: {w}" for w in out["diagnostics"]["warnings"])
        lines.append(f"compute {out['compute_seconds']:.2f} s")
    for key, label in (("validation", "held out, identified"),
                       ("validation_given", "held out, given --params")):
        for v in out.get(key, []):
            lines.append(f"{label}: {v['span'][0]:.3f}-{v['span'][1]:.3f} s "
                         f"{format_fit(v['fit_percent'])}")
    return "\n".join(lines)


# -- simulate --rig single|nlink:N ---------------------------------------------------------
def default_chain_params(links: int) -> ChainParams:
    """The true rig of `simulate --rig` and of `run --sim` with a chain kind: seed 002's
    laboratory pendulum with Brown-McPhee joints (identify.seeds.lab_chain)."""
    from hilrig.identify.seeds import lab_chain

    return lab_chain(links)


def _simulate(args: argparse.Namespace, settings: Settings) -> int:
    from hilrig.identify.signal import chain_record

    out = Path(args.out)
    check_out_free(out, args.force)
    check_capture_length(args, 1000.0 if args.rate is None else args.rate, settings)
    realism = realism_arg(args, settings.sim.realism)
    rig = _rig(args)
    hours = session_hours_arg(args)
    if out.suffix.lower() != ".csv":
        raise UsageError(f"--out {out}: a {rig.kind} record is written as CSV (t,theta1...)")
    if getattr(args, "covariate", None) or realism.temperature_c is not None:
        raise UsageError(f"--covariate, --temperature: a {rig.kind} record is written as "
                         "CSV, which records no covariates")
    params = params_arg(args.params, rig.links) if args.params else default_chain_params(rig.links)
    try:
        params = ChainParams(params.inertial,
                             drifted_chain_friction(params.friction, realism, hours))
    except ValueError as exc:
        raise UsageError(f"--drift: {exc}") from None
    angles = args.angles or [120.0] * rig.links
    if len(angles) != rig.links:
        raise UsageError(f"--angles: rig kind {rig.kind} needs {rig.links} angle(s), got "
                         f"{len(angles)}")
    push = realism.push_rad_s
    x0 = [math.radians(a) for a in angles] + [push[0]] * (rig.links - 1) + [push[1]]
    rate = 1000.0 if args.rate is None else args.rate  # _ranges checked a given one
    try:
        rec = chain_record(rig, params, x0, args.duration, realism, rest_s=args.rest,
                           rate_hz=rate)
    except ValueError as exc:
        raise UsageError(f"simulate: {exc}") from None
    write_joint_csv(out, rec.sample_index / rec.rate_hz, rec.angles, overwrite=args.force,
                    note=f"hilrig simulate --rig {rig.kind}, plane tilt {rig.tilt_deg:g} deg",
                    created_utc=utc_now())
    print(f"wrote {out}: {rec.angles.shape[0]} samples of {rig.kind}, {args.duration:g} s "
          f"after release from {', '.join(f'{a:g}' for a in angles)} deg")
    return 0


# -- compare --rig single|nlink:N -----------------------------------------------------------
def _compare(args: argparse.Namespace) -> int:
    from hilrig.identify.report import chain_table, compare_chain, plot_chain_compare

    if args.methods:
        raise UsageError("--methods is for the Furuta rig; a chain rig compares seed 002's "
                         "regression with shooting")
    rig = _rig(args)
    record = _record(args, rig.links)
    bar = ProgressBar(f"compare {rig.kind}")
    try:
        with fit_guard(args.file, _CHAIN_HINT):
            rows = compare_chain(record, rig, progress=bar)
    finally:
        bar.close()
    print("fit per joint: the mean over the record's segments, each simulated from a state "
          "fitted to its first 20 ms, the same rule for every method")
    print(chain_table(rows, rig))
    if args.plot:
        kind = rig.kind.replace(":", "")
        path = plot_chain_compare(record, rig, rows, Path(args.plot) / f"compare_{kind}.png")
        print(f"wrote {path}")
    return 0


def _from_config(args: argparse.Namespace, config: RigKindConfig) -> argparse.Namespace:
    """The config's chain kind, with its friction law and plane tilt where the command line
    left them out."""
    args.rig = config.kind
    if hasattr(args, "friction_law"):
        args.friction_law = args.friction_law or config.friction
    if hasattr(args, "tilt"):
        args.tilt = config.plane_tilt_deg if args.tilt is None else args.tilt
    return args


#: the chain kinds' part of the offline commands (daq.cli._rig_commands)
CHAIN_COMMANDS = RigCommands(simulate=_simulate, identify=_identify, compare=_compare,
                             from_config=_from_config, identify_pooled=_identify_pooled)
