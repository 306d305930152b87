"""What `simulate` checks alike for every rig kind: the capture's length against the
settings, and the realism knobs over the config's."""

from __future__ import annotations

import argparse
import math

from pydantic import ValidationError

from hilrig.identify.model import Realism

from ..acquisition import checked_covariates
from ..config import Settings
from ..storage import CaptureLimits
from ._usage import UsageError

__all__ = ["check_capture_length", "covariates_arg", "realism_arg", "session_hours_arg"]


def check_capture_length(args: argparse.Namespace, rate: float, settings: Settings) -> None:
    """What simulate writes, identify reads: no longer than the settings allow a capture."""
    limits = CaptureLimits.of(settings)
    samples = round(args.rest * rate) + round(args.duration * rate) + 1
    if samples > limits.max_samples or args.rest + args.duration > limits.max_duration_s:
        raise UsageError(f"--rest {args.rest:g} and --duration {args.duration:g} at {rate:g} Hz "
                         f"({samples} samples) make a capture longer than the settings allow "
                         f"({limits.max_duration_s:g} s, {limits.max_samples} samples); raise "
                         "trigger.max_duration_s to simulate it")


def realism_arg(args: argparse.Namespace, base: Realism) -> Realism:
    """The config's realism with the command's options over it; one line if out of range."""
    given = {"seed": args.seed, "rig_error": args.rig_error, "tilt_error_deg": args.tilt_error,
             "drag1": args.drag, "spring0": args.spring, "hand_tremor_rad": args.tremor,
             "push_rad_s": tuple(args.push) if args.push else None, "noise_rad": args.noise,
             "jitter_counts": args.jitter, "interpolation_counts": args.interpolation,
             "lost_frames": args.lost_frames,
             "drift_per_hour": _drift_arg(getattr(args, "drift", None)),
             "temperature_c": getattr(args, "temperature", None),
             "warming_c_per_hour": getattr(args, "warming", None)}
    try:
        return Realism(**{**base.model_dump(), **{k: v for k, v in given.items()
                                                  if v is not None}})
    except ValidationError as exc:
        err = exc.errors()[0]
        field = str(err["loc"][0]) if err["loc"] else ""
        option = _REALISM_OPTIONS.get(field) if given.get(field) is not None else None
        where = option or f"[sim.realism] {field}"
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise UsageError(f"simulate: {where}: {msg}") from None


def _drift_arg(given: list[str] | None) -> dict[str, float] | None:
    """--drift NAME=RATE, repeated, as a mapping; one line for a malformed one."""
    return _name_values("--drift", "RATE", "mu_v1=0.0125", given) if given else None


def covariates_arg(given: list[str] | None) -> dict[str, float]:
    """--covariate NAME=VALUE, repeated: conditions the capture records; one line for a
    malformed one."""
    named = _name_values("--covariate", "VALUE", "temperature_c=23.5", given or [])
    try:
        return checked_covariates(named)
    except ValueError as exc:
        raise UsageError(f"simulate: --covariate: {exc}") from None


def _name_values(option: str, what: str, example: str, given: list[str]) -> dict[str, float]:
    out = {}
    for item in given:
        name, sep, value = item.partition("=")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            raise UsageError(f"simulate: {option} {item!r}: expected NAME={what}, e.g. "
                             f"{example}")
    return out


#: the simulate option of each Realism field, for errors that name what the user typed
_REALISM_OPTIONS = {
    "seed": "--seed", "rig_error": "--rig-error", "tilt_error_deg": "--tilt-error",
    "drag1": "--drag", "spring0": "--spring", "hand_tremor_rad": "--tremor",
    "push_rad_s": "--push", "noise_rad": "--noise", "jitter_counts": "--jitter",
    "interpolation_counts": "--interpolation", "lost_frames": "--lost-frames",
    "drift_per_hour": "--drift", "temperature_c": "--temperature",
    "warming_c_per_hour": "--warming"}


def session_hours_arg(args: argparse.Namespace) -> float:
    """--session-hours: the capture's time in its session, what --drift moves by."""
    hours = args.session_hours
    if not (math.isfinite(hours) and 0 <= hours <= 1000):
        raise UsageError(f"--session-hours must be in [0, 1000], got {hours:g}")
    return float(hours)
