"""Where captures and results are kept on disk, and how a result is kept.

Archive layout: ``<storage.directory>/<YYYY-MM-DD>/<session_id>/<capture_id>/capture.h5``
for a session's captures, ``<storage.directory>/<capture_id>.h5`` for a plain run's;
one ``<method>-<result_id>.json`` beside a capture file per result.
"""

from __future__ import annotations

from pathlib import Path

from hilrig.identify import IdentificationResult

from ._atomic import write_text_atomic
from ._catalog import Catalog, ResultRow
from ._disk_full import disk_full

__all__ = ["CAPTURE_FILE", "plain_capture_path", "result_path", "session_capture_path",
           "session_folder", "store_result"]

CAPTURE_FILE = "capture.h5"


def session_folder(root: Path, session_id: str, created_utc: str) -> Path:
    """<root>/<YYYY-MM-DD of the session's start>/<session_id>/."""
    return Path(root) / created_utc[:10] / session_id


def session_capture_path(folder: Path, capture_id: str) -> Path:
    return folder / capture_id / CAPTURE_FILE


def plain_capture_path(root: Path, capture_id: str) -> Path:
    return Path(root) / f"{capture_id}.h5"


def result_path(capture_path: Path, method: str, result_id: int) -> Path:
    """The result's JSON file, beside its capture file."""
    return capture_path.with_name(f"{method}-{result_id}.json")


def store_result(catalog: Catalog, capture_id: str, capture_path: Path,
                 result: IdentificationResult, result_key: str | None = None) -> ResultRow:
    """Keep a result: added to the catalog (never replacing one), and as JSON beside the file.

    A result whose `result_key` the catalog already holds with its file is returned as it
    is (a redelivery). The catalog is the record: a JSON file that cannot be written is
    an error in the catalog, not a lost result; on a full disk the error is raised, for
    the caller to keep the result again (by its key) once there is room.
    """
    row = catalog.add_result(result, capture_id=capture_id, result_key=result_key)
    if row.path is not None:
        return row
    out = result_path(Path(capture_path), result.method, row.result_id)
    try:
        # its name holds the row's id: one there already is this row's, from an attempt
        # a full disk stopped before the catalog learnt of it
        write_text_atomic(out, result.to_json(indent=2), overwrite=True)
    except OSError as exc:
        if disk_full(exc):
            raise  # the caller keeps it again once there is room (the row is found by key)
        session_id = catalog.capture(capture_id).session_id
        catalog.add_error(f"{out}: result file not written: {exc}", session_id=session_id,
                          capture_id=capture_id)
        return row
    catalog.set_result_path(row.result_id, str(out))
    return catalog.result(row.result_id)
