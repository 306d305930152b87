"""A session's one answer: its captures' results put together (identify.session), kept in
the catalog. The session runner calls it as a session ends, `hilrig session identify` and
the notebook's catalog on any session."""

from __future__ import annotations

from datetime import datetime

from hilrig.identify import DEFAULT_METHOD, IdentificationResult, SessionResult

from ..acquisition import covariate_value
from ._catalog import Catalog, CatalogError
from ._hdf5 import read_covariates

__all__ = ["MIN_POOLED", "session_answer"]

#: a session pools its captures at its end from this many identified captures on (the
#: drift test needs 3)
MIN_POOLED = 3


def _hours(stamps: list[str]) -> list[float]:
    times = [datetime.fromisoformat(s.replace("Z", "+00:00")) for s in stamps]
    return [(t - times[0]).total_seconds() / 3600.0 for t in times]


def _recorded(capture_id: str, path: str | None, name: str) -> float:
    """The covariate `name` capture `capture_id`'s file records; CatalogError if none."""
    try:
        return covariate_value(read_covariates(path or ""), name)
    except ValueError as exc:  # a file that does not read (CaptureFileError) is one too
        raise CatalogError(f"capture {capture_id}: {exc}") from None


def session_answer(catalog: Catalog, session_id: str, method: str = DEFAULT_METHOD, *,
                   keep: bool = True, covariate: str | None = None) -> SessionResult:
    """The session's captures (done, in order) with their latest result by `method`, put
    together, the trend in session hours or in `covariate`, a condition each capture's
    file records (its covariates); kept as a new catalog row when `keep`. CatalogError
    (one line) when the session has no such result or a capture records no covariate."""
    catalog.session(session_id)  # one line if unknown
    results: list[IdentificationResult] = []
    stamps: list[str] = []
    recorded: list[float] = []
    unreadable: list[str] = []
    for capture in catalog.captures(session_id, status="done"):
        rows = catalog.results(capture_id=capture.capture_id, method=method)
        if not rows:
            continue
        try:
            results.append(rows[-1].result())
        except CatalogError:
            unreadable.append(capture.capture_id)
            continue
        stamps.append(capture.started_utc)
        if covariate is not None:
            recorded.append(_recorded(capture.capture_id, capture.path, covariate))
    # on use: pooling loads scipy.stats, which a run that never pools does not need
    from hilrig.identify.session import pool_results

    if not results:
        raise CatalogError(f"session {session_id} has no capture identified by {method}"
                           + (f" (unreadable: {', '.join(unreadable)})" if unreadable else ""))
    try:
        answer = pool_results(results, _hours(stamps) if covariate is None else recorded,
                              covariate=covariate or "hours", session_id=session_id,
                              compute_seconds=0.0)
    except ValueError as exc:
        raise CatalogError(f"session {session_id}: {exc}") from None
    if keep:
        catalog.add_session_result(answer)
    return answer
