"""One piece of identification work, as it travels to whatever runs it, and what comes back.

A task names a capture and a method, and either the capture file's path (a worker that
sees the archive reads it) or the file's bytes (shipped with the task to one that does
not). `run_task` runs anywhere (an identification process, a Dask worker) and never
raises for the capture's sake: a file that cannot be read or a fit that fails comes back
as an outcome with its reason, so a campaign keeps it as a failed result, never a lost
one. Every outcome carries its provenance: software and library versions, host, process,
wall time.
"""

from __future__ import annotations

import os
import platform
import socket
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from hilrig.identify import SOFTWARE_VERSION, IdentificationResult, Progress, utc_now

from ...config import one_line
from ...storage import read_capture
from ._capture_identify import identify_capture

__all__ = ["IdentificationFailed", "IdentifyTask", "Provenance", "TaskOutcome", "run_task",
           "run_task_json", "warm_up"]


class IdentificationFailed(RuntimeError):
    """A task's identification failed; its message is the outcome's reason."""


class IdentifyTask(BaseModel):
    """Identify capture `capture_id` by `method`, from `path` or from the file's `data`."""

    model_config = ConfigDict(frozen=True)

    capture_id: str
    method: str
    path: str | None = None
    data: bytes | None = None

    @classmethod
    def of_file(cls, capture_id: str, path: Path | str, method: str, *,
                ship: bool = False) -> IdentifyTask:
        """The task for a capture file; `ship`: its bytes go with it (a worker that does not
        see the archive)."""
        if ship:
            return cls(capture_id=capture_id, method=method, data=Path(path).read_bytes())
        return cls(capture_id=capture_id, method=method, path=str(path))


class Provenance(BaseModel):
    """Where and with what a result was computed."""

    software_version: str
    python: str
    numpy: str
    scipy: str
    numba: str
    host: str
    pid: int
    started_utc: str
    seconds: float


class TaskOutcome(BaseModel):
    """A task's result, or the reason it has none."""

    capture_id: str
    method: str
    result: IdentificationResult | None = None
    error: str | None = None
    provenance: Provenance | None = None
    #: who computed it, when not this machine (a worker's name), and the key a result is
    #: kept under once however often it is delivered (None: the keeper makes one)
    worker: str | None = None
    key: str | None = None

    def result_or_raise(self) -> IdentificationResult:
        if self.result is None:
            raise IdentificationFailed(self.error or "no result")
        return self.result


def _versions() -> dict[str, str]:
    import numba
    import numpy
    import scipy

    return {"software_version": SOFTWARE_VERSION, "python": platform.python_version(),
            "numpy": numpy.__version__, "scipy": scipy.__version__, "numba": numba.__version__}


def _identified(task: IdentifyTask, progress: Progress | None) -> IdentificationResult:
    if task.data is None:
        if task.path is None:
            raise ValueError("the task names no capture file and carries none")
        return identify_capture(read_capture(task.path), task.method, progress)
    with tempfile.TemporaryDirectory(prefix="hilrig-task-") as tmp:
        path = Path(tmp) / "capture.h5"
        path.write_bytes(task.data)
        return identify_capture(read_capture(path), task.method, progress)


def run_task(task: IdentifyTask, progress: Progress | None = None) -> TaskOutcome:
    """Identify the task's capture; the outcome holds the result (with its provenance in
    its diagnostics) or the reason it failed, in one line."""
    started, t0 = utc_now(), time.perf_counter()
    result: IdentificationResult | None = None
    error: str | None = None
    try:
        result = _identified(task, progress)
    except Exception as exc:  # noqa: BLE001 - the reason travels back as the outcome
        error = one_line(str(exc) or type(exc).__name__)
    provenance = Provenance(**_versions(), host=socket.gethostname(), pid=os.getpid(),
                            started_utc=started, seconds=round(time.perf_counter() - t0, 3))
    if result is not None:
        result = result.model_copy(update={"diagnostics": {
            **result.diagnostics, "provenance": provenance.model_dump()}})
    return TaskOutcome(capture_id=task.capture_id, method=task.method, result=result,
                       error=error, provenance=provenance)


def warm_up() -> None:
    """Import what identification needs (the methods and their kernels' dispatchers), so
    that a process's first task costs what its fit costs."""
    import hilrig.identify.methods  # noqa: F401


def run_task_json(task: IdentifyTask) -> str:
    """run_task, its outcome as JSON: what crosses a process boundary is checked again on
    the side that keeps it (model_validate_json), as a worker's MQTT answer is."""
    return run_task(task).model_dump_json(by_alias=True)
