"""A capture identified as its rig kind says: the one place daq identifies a capture.

Acquisition turns a capture into what identification takes (`to_measurement` for the
Furuta rig, `to_record` for a chain); here each rig family's identification is one
entry of `_BY_FAMILY`, so a session, a worker, a campaign and `reidentify` all identify
a capture the same way, and a new rig kind is a new entry, not a branch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from hilrig.identify import (
    METHOD_NAMES,
    IdentificationResult,
    Progress,
    identify,
    identify_chain,
)

from ...acquisition import Capture, kind_of, to_measurement, to_record

__all__ = ["identify_capture"]

Identify = Callable[[Capture, str, Progress | None], IdentificationResult]


def _furuta(capture: Capture, method: str, progress: Progress | None) -> IdentificationResult:
    return identify(to_measurement(capture), method=method, progress=progress)


def _chain(capture: Capture, method: str, progress: Progress | None) -> IdentificationResult:
    record, rig = to_record(capture)
    result = identify_chain(record, rig, progress=progress)
    return result.model_copy(update={"capture_id": capture.capture_id})


_BY_FAMILY: Mapping[str, Identify] = {"furuta": _furuta, "chain": _chain}


def identify_capture(capture: Capture, method: str,
                     progress: Progress | None = None) -> IdentificationResult:
    """Identify `capture` by `method`, one of the methods its rig kind takes."""
    kind = kind_of(capture.kind)
    if method not in kind.methods:
        if method in METHOD_NAMES:
            raise ValueError(f"method {method} is for the Furuta rig; a {kind.name} rig is "
                             f"identified by {', '.join(kind.methods)}")
        raise ValueError(f"unknown identification method {method!r}; a {kind.name} rig is "
                         f"identified by {', '.join(kind.methods)}")
    return _BY_FAMILY[kind.family](capture, method, progress)
