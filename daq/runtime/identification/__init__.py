"""Identification work and where it runs.

- `identify_capture`: a capture identified as its rig kind says;
- `IdentifyTask`, `TaskOutcome`, `run_task`: one piece of work as it travels, what comes
  back (a result with its provenance, or the reason it failed);
- `IdentificationExecutor` (submit, `completed`, cancel through the future) and its
  backends: `LocalExecutor` (this machine's processes), `WorkerExecutor` (the
  `hilrig worker` processes over MQTT), `DaskExecutor` (a Dask cluster: local, a
  scheduler's address, SLURM or PBS);
- `Campaign`: a selection of archived captures identified again, idempotent, resumable,
  its tasks handed out longest expected first (`longest_first`);
- `Reidentifier`: an archived capture identified again; `run_worker`: `hilrig worker`.

Nothing here knows a session or a run: they hand it the small parts it needs.
"""

from ._campaign import Campaign, CampaignProgress, CampaignTask, Selection, select_tasks
from ._capture_identify import identify_capture
from ._dask import ClusterError, ClusterSpec, DaskExecutor, jobqueue_cluster, parse_cluster
from ._executor import IdentificationExecutor, completed, identified
from ._local import LocalExecutor
from ._offload import NOTICE_S, WorkerExecutor
from ._order import longest_first
from ._reidentify import (
    ArchiveError,
    CaptureArchive,
    CatalogArchive,
    DirectoryArchive,
    Reidentified,
    Reidentifier,
)
from ._result_line import result_line
from ._task import (
    IdentificationFailed,
    IdentifyTask,
    Provenance,
    TaskOutcome,
    run_task,
    run_task_json,
)
from ._worker import run_worker

__all__ = [
    "Campaign", "CampaignProgress", "CampaignTask", "ClusterError", "ClusterSpec",
    "DaskExecutor", "Selection", "jobqueue_cluster", "parse_cluster", "select_tasks",
    "NOTICE_S", "ArchiveError", "CaptureArchive", "CatalogArchive", "DirectoryArchive",
    "IdentificationExecutor", "IdentificationFailed", "IdentifyTask", "LocalExecutor",
    "Provenance", "Reidentified", "Reidentifier", "TaskOutcome", "WorkerExecutor",
    "completed", "identified", "identify_capture", "longest_first",
    "result_line", "run_task", "run_task_json", "run_worker",
]
