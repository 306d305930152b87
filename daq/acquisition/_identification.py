"""A capture identified as its rig kind says: the Furuta rig's methods, or the chain pipeline.

The capture knows which rig its channels came from (Capture.kind, recorded in its file),
so a session, a worker and `reidentify` all identify it the same way.
"""

from __future__ import annotations

from identify import (
    DEFAULT_METHOD,
    IdentificationResult,
    Progress,
    identify,
    identify_chain,
)

from ._capture import Capture, to_measurement, to_record

#: the methods a chain rig (single, nlink:N) is identified by
CHAIN_METHODS: tuple[str, ...] = (DEFAULT_METHOD,)


def identify_capture(capture: Capture, method: str,
                     progress: Progress | None = None) -> IdentificationResult:
    """Identify `capture` by `method`; a chain rig takes only CHAIN_METHODS."""
    if capture.kind is None or not capture.kind.is_chain:
        return identify(to_measurement(capture), method=method, progress=progress)
    if method not in CHAIN_METHODS:
        raise ValueError(f"method {method} is for the Furuta rig; a {capture.kind.kind} rig is "
                         f"identified by {', '.join(CHAIN_METHODS)}")
    record, rig = to_record(capture)
    result = identify_chain(record, rig, progress=progress)
    return result.model_copy(update={"capture_id": capture.capture_id})
