"""What a lab measured of its rig, given on the command line: `--measured NAME=VALUE+-SD`.

The same knowledge the [rig] config states (a value and its standard uncertainty), for
one run: `--measured m2_l2=0.00794+-0.5%` (a weighed static moment, relative
uncertainty), `--measured l2=0.0615+-0.0005` (absolute, in the value's unit),
`--measured tilt_deg=12+-0.5` (degrees). `--cad-uncertainty 10` sets the relative
uncertainty, in percent, of every value nobody measured.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pydantic import ValidationError

from identify.model import RIG_ERROR_FIELDS, RigParams

from ..config import first_error
from ._usage import UsageError

__all__ = ["MEASURABLE", "measured_value", "with_measured"]

#: the names --measured takes
MEASURABLE: tuple[str, ...] = (*RIG_ERROR_FIELDS, "tilt_deg", "m2_l2")
_SPEC = re.compile(r"^\s*(\w+)\s*=\s*([^+\s]+)\s*(?:\+-\s*([^%\s]+)\s*(%?))?\s*$")


def _number(text: str, what: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise UsageError(f"--measured {what}: {text!r} is not a number") from None
    if not math.isfinite(x) or x <= 0:
        raise UsageError(f"--measured {what}: must be a positive finite number, got {text}")
    return x


def measured_value(spec: str, names: Sequence[str], example: str
                   ) -> tuple[str, float, float | None, bool]:
    """(NAME, VALUE, SD or None, whether SD is in percent) of `--measured NAME=VALUE+-SD`,
    NAME one of `names`; a one-line error naming what is wrong otherwise."""
    m = _SPEC.match(spec)
    if m is None:
        raise UsageError(f"--measured {spec!r}: expected NAME=VALUE+-SD, SD absolute or "
                         f"with %, for example {example}")
    name, value_text, sd_text, percent = m.groups()
    if name not in names:
        raise UsageError(f"--measured {name}: no such rig quantity; measurable are "
                         f"{', '.join(names)}")
    value = _number(value_text, name)
    sd = None if sd_text is None else _number(sd_text, f"{name} uncertainty")
    return name, value, sd, bool(percent)


def with_measured(rig: RigParams, specs: list[str] | None,
                  cad_percent: float | None = None) -> RigParams:
    """The rig with each NAME=VALUE+-SD of `specs` set, its uncertainty stated, and, if
    given, the uncertainty of unmeasured values (percent)."""
    values: dict[str, float] = {}
    known = dict(rig.uncertainty)
    for spec in specs or []:
        name, value, sd, percent = measured_value(spec, MEASURABLE, "m2_l2=0.00794+-0.5%")
        if sd is None:  # the Furuta prior weighs every value by its uncertainty
            raise UsageError(f"--measured {spec!r}: expected NAME=VALUE+-SD, SD absolute or "
                             "with %, for example m2_l2=0.00794+-0.5%")
        if name == "tilt_deg":
            known[name] = value * sd / 100 if percent else sd
        else:
            known[name] = sd / 100 if percent else sd / value
        values[name] = value
    update: dict[str, object] = {**values, "uncertainty": known}
    if cad_percent is not None:
        if not (math.isfinite(cad_percent) and 0 < cad_percent <= 100):
            raise UsageError(f"--cad-uncertainty must be in (0, 100] percent, got {cad_percent}")
        update["cad_uncertainty"] = cad_percent / 100
    try:
        return RigParams.model_validate({**rig.model_dump(), **update})
    except ValidationError as exc:
        raise UsageError(f"--measured: {first_error(exc, 'rig')}") from None
