"""A result as pandas DataFrames, for notebooks: pandas is the `notebook` extra, imported
only here and only when a frame is asked for, so the rest of identify never needs it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._result import IdentificationResult

__all__ = ["ESTIMATE_COLUMNS", "estimate_rows", "parameters_frame", "require_pandas",
           "response_frame"]

#: the columns of parameters_frame, in order
ESTIMATE_COLUMNS = ("group", "value", "ci95_lo", "ci95_hi", "identifiable", "assumed", "note")


def require_pandas() -> Any:
    try:
        import pandas
    except ImportError:
        raise ImportError("a DataFrame needs pandas: pip install 'hilrig[notebook]'") from None
    return pandas


def estimate_rows(result: IdentificationResult) -> dict[str, dict[str, Any]]:
    """Every estimate by name: the friction parameters (group "friction") and the rig
    quantities and extra terms the fit reported (group "rig"), with their intervals."""
    rows: dict[str, dict[str, Any]] = {}
    for group, estimates in (("friction", result.parameters), ("rig", result.rig)):
        for name, p in estimates.items():
            lo, hi = p.ci95 if p.ci95 is not None else (math.nan, math.nan)
            rows[name] = {"group": group,
                          "value": math.nan if p.value is None else p.value,
                          "ci95_lo": lo, "ci95_hi": hi, "identifiable": p.identifiable,
                          "assumed": math.nan if p.assumed is None else p.assumed,
                          "note": p.note}
    return rows


def parameters_frame(result: IdentificationResult) -> Any:
    """One row per estimate (index: its name), columns ESTIMATE_COLUMNS; NaN where the
    data cannot tell."""
    pd = require_pandas()
    frame = pd.DataFrame.from_dict(estimate_rows(result), orient="index",
                                   columns=list(ESTIMATE_COLUMNS))
    frame.index.name = "name"
    return frame


def response_frame(result: IdentificationResult) -> Any:
    """The measured and simulated angles (rad) per joint at t_s (s): columns
    `measured.<joint>` and `simulated.<joint>`, NaN rows between separately simulated
    spans. Empty for a method that simulates nothing."""
    pd = require_pandas()
    r = result.response
    if r is None:
        return pd.DataFrame(index=pd.Index([], name="t_s", dtype=float))
    columns: dict[str, list[float | None]] = {}
    for j, joint in enumerate(r.joints):
        columns[f"measured.{joint}"] = r.measured[j]
        columns[f"simulated.{joint}"] = r.simulated[j]
    index = pd.Index([math.nan if t is None else t for t in r.t_s], name="t_s", dtype=float)
    return pd.DataFrame(columns, index=index, dtype=float)
