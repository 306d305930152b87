"""The options of `identify --rig single|nlink:N`, checked before the record is read:
`--validate T0:T1` (finite, T1 after T0, and overlapping the record by a segment once it
is read), `--segment-s` (MIN_SEGMENT_S to the longest capture, with --validate only),
`--measured` (one inertial quantity, SCALE), `--params` (finite, nothing negative, PHYSICAL
when given in SI, ratios within PARAMS_RATIO).
"""

from __future__ import annotations

import argparse
import math
import re

import numpy as np

from hilrig.identify import ChainParams, Record, Scale
from hilrig.identify.model import inertial_names, inertial_normaliser, unpack_inertial

from .._measured import measured_value, relative_sd
from .._ranges import MOST_S, Range
from .._usage import UsageError, json_arg

__all__ = ["PARAMS_RATIO", "PHYSICAL", "SCALE", "check_span", "params_arg", "scale_arg",
           "segment_arg", "span_arg"]

_SPAN = re.compile(r"^\s*([0-9.eE+-]+)\s*:\s*([0-9.eE+-]+)\s*$")

#: a chain's inertial quantity as measured (kg m, kg m^2): a benchtop pendulum's lie far
#: inside, from a gram at a millimetre to a hundred kilograms at a metre
SCALE = Range(1e-9, 1e3, "(SI: kg m, kg m^2)")
#: --params given physically: masses (kg), lengths (m), inertias (kg m^2), viscous
#: friction (N m s) of a benchtop pendulum, in magnitude
PHYSICAL = Range(-1e3, 1e3, "(SI)")
#: --params after normalising (each value divided by the normaliser, unit-free): a ratio
#: beyond is no pendulum, and its simulation would overflow
PARAMS_RATIO = 1e6


def span_arg(text: str) -> tuple[float, float]:
    """(T0, T1) of --validate T0:T1: finite seconds, T1 after T0."""
    m = _SPAN.match(text)
    if m is None:
        raise UsageError(f"--validate {text!r}: expected T0:T1 in seconds, for example 36.668:55")
    try:
        t0, t1 = float(m.group(1)), float(m.group(2))
    except ValueError:
        raise UsageError(f"--validate {text!r}: T0 and T1 must be numbers of seconds") from None
    if not (math.isfinite(t0) and math.isfinite(t1)):
        raise UsageError(f"--validate {text!r}: T0 and T1 must be finite seconds")
    if not t1 > t0:
        raise UsageError(f"--validate {text!r}: T1 must be after T0")
    return t0, t1


def check_span(text: str, span: tuple[float, float], record: Record) -> None:
    """The held-out span overlaps the record by a segment at least: before any fit."""
    from hilrig.identify.methods import MIN_SEGMENT_S

    first = record.t0_s
    last = first + float(record.t[-1])
    if min(span[1], last) - max(span[0], first) < MIN_SEGMENT_S:
        raise UsageError(f"--validate {text}: the record spans {first:.6g}-{last:.6g} s; the "
                         f"held-out span must overlap it by at least {MIN_SEGMENT_S:g} s")


def segment_arg(args: argparse.Namespace) -> float | None:
    """--segment-s, at least the shortest segment scored; only with --validate."""
    from hilrig.identify.methods import MIN_SEGMENT_S

    if args.segment_s is None:
        return None
    if not args.validate:
        raise UsageError("--segment-s is for --validate: it cuts the held-out span")
    Range(MIN_SEGMENT_S, MOST_S, "s").check("--segment-s", args.segment_s)
    return float(args.segment_s)


def scale_arg(specs: list[str] | None, links: int) -> Scale | None:
    """The one inertial quantity --measured may fix a chain's scale by, within SCALE."""
    if not specs:
        return None
    if len(specs) > 1:
        raise UsageError("--measured: a free swing takes one quantity to fix its scale, got "
                         f"{len(specs)}")
    name, value, sd, percent = measured_value(specs[0], inertial_names(links),
                                              "nu1=0.0218+-1% (kg m, kg m^2)")
    SCALE.check(f"--measured {name}", value)
    rel = 0.0 if sd is None else relative_sd(name, value, sd, percent)
    return Scale(name, value, rel)


def params_arg(text: str, links: int) -> ChainParams:
    """--params JSON (or @file): a parameter set a pendulum can have."""
    data = json_arg(text, "--params")
    if not isinstance(data, dict):
        raise UsageError("--params: expected a JSON object")
    try:
        params = ChainParams.from_mapping(data, links)
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"--params: {exc}") from None
    if "m" in data:  # SI: a benchtop pendulum's
        for key in ("m", "com", "l", "J", "b"):
            for x in data.get(key) or []:
                PHYSICAL.check(f"--params: {key}", float(x))
    _check_params(params)
    return params


def _check_params(params: ChainParams) -> None:
    """Finite; inertias positive and friction not negative; unit-free ratios a pendulum can
    have (a static moment nu or mu may be negative: a counterweighted link)."""
    values = np.concatenate([params.inertial, params.friction.ravel()])
    if not np.all(np.isfinite(values)):
        raise UsageError("--params: every value must be a finite number")
    kappa, _, _ = unpack_inertial(params.inertial, params.links)
    if np.any(kappa <= 0) or np.any(params.friction < 0):
        raise UsageError("--params: every inertia kappa must be positive and no friction "
                         "value negative")
    if not params.inertial[inertial_normaliser(params.links)] > 0:
        raise UsageError("--params: the normaliser (nu1, or mu of the last two links) must "
                         "be positive")
    with np.errstate(all="ignore"):  # a ratio that overflows is refused just below
        p = params.normalised()
    ratios = np.abs(np.concatenate([p.inertial, p.friction.ravel()]))
    if not np.all(ratios <= PARAMS_RATIO) or np.any(kappa / kappa.max() < 1 / PARAMS_RATIO):
        raise UsageError(f"--params: each value must lie within a factor of {PARAMS_RATIO:g} "
                         "of the normaliser (nu1, or mu of the last two links)")
