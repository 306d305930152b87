"""What a lab measured of its rig, given on the command line: `--measured NAME=VALUE+-SD`.

The same knowledge the [rig] config states (a value and its standard uncertainty), for
one run: `--measured m2_l2=0.00794+-0.5%` (a weighed static moment, relative
uncertainty), `--measured l2=0.0615+-0.0005` (absolute, in the value's unit),
`--measured tilt_deg=12+-0.5` (degrees). `--cad-uncertainty 10` sets the relative
uncertainty, in percent, of every value nobody measured.

A measured value lies within a factor of MEASURED_FACTOR of the rig's nominal one (tilt_deg
in [0, 90) deg); an uncertainty is RELATIVE_SD of the value (tilt_deg: TILT_SD). Further
off is a unit slip, and would only defeat the fit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pydantic import ValidationError

from hilrig.identify.model import RIG_ERROR_FIELDS, RigParams

from ..config import first_error
from ._ranges import TILT, Range
from ._usage import UsageError

__all__ = ["MEASURABLE", "MEASURED_FACTOR", "RELATIVE_SD", "TILT_SD", "measured_value",
           "relative_sd", "with_measured"]

#: the names --measured takes
MEASURABLE: tuple[str, ...] = (*RIG_ERROR_FIELDS, "tilt_deg", "m2_l2")
#: a measured value within this factor of the nominal one ([rig] config or the file's):
#: grams for kilograms, or another rig whose nominal values belong in [rig], lie beyond
MEASURED_FACTOR = 10.0
#: a relative standard uncertainty: from 1 ppm (finer than any lab balance or rule) to 100 %
RELATIVE_SD = Range(1e-6, 1.0, "of the value")
#: tilt_deg's standard uncertainty, absolute: 0.0001 deg to RigParams' 45 deg
TILT_SD = Range(1e-4, 45.0, "deg")
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


def relative_sd(name: str, value: float, sd: float, percent: bool) -> float:
    """The relative uncertainty SD states of VALUE, within RELATIVE_SD (one line if not)."""
    rel = sd / 100 if percent else sd / value
    RELATIVE_SD.check(f"--measured {name}: its uncertainty", rel)
    return rel


def _nominal(rig: RigParams, name: str) -> float:
    if name == "m2_l2":
        return rig.m2_l2 if rig.m2_l2 is not None else rig.m2 * rig.l2
    return float(getattr(rig, name))


def _check_near_nominal(rig: RigParams, name: str, value: float) -> None:
    nominal = _nominal(rig, name)
    if not 1 / MEASURED_FACTOR <= value / nominal <= MEASURED_FACTOR:
        raise UsageError(f"--measured {name}={value:g} is not within a factor of "
                         f"{MEASURED_FACTOR:g} of the rig's nominal {nominal:g} (a unit slip? "
                         "another rig: state its nominal values in [rig])")


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
            TILT.check(f"--measured {name}", value)
            known[name] = value * sd / 100 if percent else sd
            TILT_SD.check(f"--measured {name}: its uncertainty", known[name])
        else:
            _check_near_nominal(rig, name, value)
            known[name] = relative_sd(name, value, sd, percent)
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
