"""What is kept: capture files (HDF5, CSV; written atomically), the catalog of sessions,
captures, results, sessions' answers and errors (SQLite), the archive's layout, and the
outbox of messages not yet acknowledged by the broker (SQLite).
"""

from typing import TYPE_CHECKING

from hilrig.identify import lazy_exports

if TYPE_CHECKING:
    from ._archive import (
        CAPTURE_FILE,
        plain_capture_path,
        result_path,
        session_capture_path,
        session_folder,
        store_result,
    )
    from ._atomic import (
        write_text_atomic,
    )
    from ._catalog import (
        CATALOG_NAME,
        CaptureRow,
        Catalog,
        CatalogError,
        ErrorRow,
        ResultRow,
        SessionResultRow,
        SessionRow,
    )
    from ._csv import (
        CSV_COLUMNS,
        CSV_MAX_BYTES,
        JointTable,
        capture_csv_time,
        read_capture_csv,
        read_joint_csv,
        write_capture_csv,
        write_joint_csv,
    )
    from ._disk_full import (
        disk_full,
        free_mb,
    )
    from ._errors import (
        CaptureFileError,
    )
    from ._files import (
        read_capture,
    )
    from ._hdf5 import (
        FORMAT_NAME,
        FORMAT_VERSION,
        read_capture_h5,
        read_covariates,
        recorded_kind,
        write_capture_h5,
    )
    from ._limits import (
        CSV_HEAD_BYTES,
        CSV_MAX_LINE_BYTES,
        CSV_MAX_OTHER_LINES,
        CSV_NUMBER_BYTES,
        MIN_SAMPLES,
        CaptureLimits,
    )
    from ._outbox import (
        OUTBOX_NAME,
        Outbox,
        OutboxRow,
    )
    from ._records import (
        CAPTURE_FIELDS,
        capture_record,
        capture_records,
        readable_results,
        result_record,
        result_records,
    )
    from ._session_answer import (
        MIN_POOLED,
        session_answer,
    )

_EXPORTS = {
    "._archive": (
        "CAPTURE_FILE", "plain_capture_path", "result_path", "session_capture_path",
        "session_folder", "store_result",
    ),
    "._atomic": (
        "write_text_atomic",
    ),
    "._catalog": (
        "CATALOG_NAME", "CaptureRow", "Catalog", "CatalogError", "ErrorRow", "ResultRow",
        "SessionResultRow", "SessionRow",
    ),
    "._csv": (
        "CSV_COLUMNS", "CSV_MAX_BYTES", "JointTable", "capture_csv_time", "read_capture_csv",
        "read_joint_csv",
        "write_capture_csv", "write_joint_csv",
    ),
    "._disk_full": (
        "disk_full", "free_mb",
    ),
    "._errors": (
        "CaptureFileError",
    ),
    "._files": (
        "read_capture",
    ),
    "._hdf5": (
        "FORMAT_NAME", "FORMAT_VERSION", "read_capture_h5", "read_covariates", "recorded_kind",
        "write_capture_h5",
    ),
    "._limits": (
        "CSV_HEAD_BYTES", "CSV_MAX_LINE_BYTES", "CSV_MAX_OTHER_LINES", "CSV_NUMBER_BYTES",
        "MIN_SAMPLES", "CaptureLimits",
    ),
    "._outbox": (
        "OUTBOX_NAME", "Outbox", "OutboxRow",
    ),
    "._records": (
        "CAPTURE_FIELDS", "capture_record", "capture_records", "readable_results",
        "result_record", "result_records",
    ),
    "._session_answer": (
        "MIN_POOLED", "session_answer",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CAPTURE_FIELDS", "capture_record", "capture_records", "readable_results", "result_record",
    "result_records", "MIN_POOLED", "session_answer",
    "CAPTURE_FILE", "CATALOG_NAME", "CSV_COLUMNS", "CSV_HEAD_BYTES", "CSV_MAX_BYTES",
    "CSV_MAX_LINE_BYTES", "CSV_MAX_OTHER_LINES", "CSV_NUMBER_BYTES", "FORMAT_NAME",
    "FORMAT_VERSION",
    "MIN_SAMPLES", "OUTBOX_NAME", "CaptureFileError", "CaptureLimits", "CaptureRow", "Catalog",
    "CatalogError", "ErrorRow", "Outbox", "OutboxRow", "ResultRow", "SessionResultRow",
    "SessionRow",
    "disk_full",
    "free_mb",
    "JointTable", "capture_csv_time", "plain_capture_path", "read_capture", "read_capture_csv",
    "read_capture_h5",
    "read_covariates", "read_joint_csv", "recorded_kind", "result_path", "write_joint_csv",
    "session_capture_path", "session_folder", "store_result", "write_capture_csv",
    "write_capture_h5", "write_text_atomic",
]
