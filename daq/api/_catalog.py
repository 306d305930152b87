"""The archive's catalog as pandas DataFrames (the `notebook` extra): every result with
every parameter, rig quantity and extra term and their intervals, and every capture,
each row with its session and capture ids, as `results list` and `captures list` show."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hilrig.identify import IdentificationResult, SessionResult
from hilrig.identify.results import require_pandas

from ..config import load_settings
from ..storage import (
    CATALOG_NAME,
    Catalog,
    CatalogError,
    capture_records,
    result_records,
    session_answer,
)

__all__ = ["CatalogFrames", "catalog"]


@dataclass(frozen=True)
class CatalogFrames:
    """The catalog of the archive in `directory`; each call reads it afresh (a session may
    be adding to it), read-only."""

    directory: Path

    def _open(self) -> Catalog:
        if not (self.directory / CATALOG_NAME).is_file():
            raise CatalogError(f"{self.directory}: no hilrig catalog here ({CATALOG_NAME}); "
                               "the archive is [storage] directory of the config")
        return Catalog.open(self.directory, create=False)

    def results(self, *, session: str | None = None, capture: str | None = None,
                method: str | None = None) -> Any:
        """One row per result (index result_id): ids, method, rig kind, fit per joint,
        compute time, every parameter `NAME` with `NAME_ci95_lo` and `NAME_ci95_hi`, and
        every rig quantity and extra term as `rig.NAME` likewise. A result that no longer
        reads is left out, with a warning."""
        import warnings

        with self._open() as cat:
            listed = result_records(cat, lambda exc: warnings.warn(f"{exc}; left out",
                                                                   stacklevel=3),
                                    session_id=session, capture_id=capture, method=method)
        records = [rec for _, rec in listed]
        frame = require_pandas().DataFrame.from_records(records)
        return frame.set_index("result_id") if records else frame

    def result(self, result_id: int) -> IdentificationResult:
        """One result in full (its table, to_dataframe, response)."""
        with self._open() as cat:
            return cat.result(result_id).result()

    def session_answer(self, session: str, covariate: str | None = None) -> SessionResult:
        """The session's captures put together now (identify.session.pool_results: the
        session's friction and rig with intervals, the drift tested, in session hours or
        in a `covariate` the captures record), not kept: what `hilrig session identify
        --dry-run` prints."""
        with self._open() as cat:
            return session_answer(cat, session, keep=False, covariate=covariate)

    def captures(self, *, session: str | None = None, status: str | None = None) -> Any:
        """One row per capture (index capture_id): session, sequence, status, samples,
        lost samples, duration, how it ended, its file, its number of results and its
        timing figures."""
        with self._open() as cat:
            records = capture_records(cat, session, status=status)
        frame = require_pandas().DataFrame.from_records(records)
        return frame.set_index("capture_id") if records else frame


def catalog(directory: str | os.PathLike[str] | None = None) -> CatalogFrames:
    """The catalog of the archive in `directory`, else the config's [storage] directory."""
    if directory is None:
        directory = load_settings(None).storage.directory
    return CatalogFrames(Path(directory).expanduser())
