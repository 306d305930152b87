"""What drives the acquisition engine and consumes its events.

- policies: `PlainRun` (`hilrig run`), `SessionRun` (unattended sessions from a plan),
  `RigDaemon` (`hilrig serve`: idle between sessions, driven by commands);
- what every run shares: `RunCore` (status, capture documents, hand-over), the
  `CaptureFinisher` (write, identify, keep, publish), `Publication` (the one task that
  feeds the courier);
- `identification`: identification work and where it runs (this machine's processes,
  the workers over MQTT, a Dask cluster), `Reidentifier`, `hilrig worker`;
- a session's parts: its plan, releasers, suspenders and the conditions they watch;
- `holding`: one process per archive, rig and port.
"""

from ._conditions import SessionConditions
from ._core import RunCore
from ._daemon import RigDaemon
from ._exclusive import Held, holding
from ._finisher import CaptureFinisher, CaptureOutcome, Ledger, RunReport
from ._plan import PlanError, SessionPlan, load_plan, parse_plan, stored_plan
from ._publication import Publication
from ._records import CaptureRecords, capture_record, prune_retained, result_summary
from ._releasers import (
    LatchReleaser,
    OperatorReleaser,
    Releaser,
    ReleaseUnavailable,
    SimReleaser,
    releaser_for,
)
from ._run import PlainRun
from ._session import ATTEMPTED, SessionRun, new_session_id
from ._session_progress import CAPTURE_STATES, session_progress
from ._statistics import capture_statistics, rss_mb
from ._suspenders import SuspenderWatch, Verdict
from .identification import (
    ArchiveError,
    CaptureArchive,
    CatalogArchive,
    DirectoryArchive,
    IdentificationExecutor,
    LocalExecutor,
    Reidentified,
    Reidentifier,
    WorkerExecutor,
    identify_capture,
    result_line,
    run_worker,
)

__all__ = [
    "ATTEMPTED", "CAPTURE_STATES", "ArchiveError", "CaptureArchive", "CaptureFinisher",
    "CaptureRecords", "capture_record", "prune_retained", "result_summary",
    "CaptureOutcome", "CatalogArchive", "DirectoryArchive", "Held",
    "IdentificationExecutor", "LocalExecutor", "WorkerExecutor", "holding",
    "LatchReleaser", "Ledger", "OperatorReleaser", "PlainRun", "PlanError", "Publication",
    "Reidentified", "Reidentifier", "ReleaseUnavailable", "Releaser", "RigDaemon", "RunCore",
    "RunReport", "SessionConditions", "SessionPlan", "SessionRun", "SimReleaser",
    "SuspenderWatch", "Verdict", "capture_statistics", "identify_capture", "load_plan",
    "new_session_id", "parse_plan", "releaser_for", "result_line", "rss_mb", "run_worker",
    "session_progress", "stored_plan",
]
