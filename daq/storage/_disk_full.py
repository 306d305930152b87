"""Telling a full disk from other write failures, and how much room is left.

A full disk is a condition that passes (a lab frees space, a quota is raised): what
failed to be written then waits and is written again, where any other failure (a
read-only archive, a bug) fails that capture. It shows as ENOSPC or EDQUOT from the OS,
as SQLITE_FULL from SQLite ("database or disk is full"), and from HDF5 as an OSError
whose text says "No space left on device".
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from pathlib import Path

__all__ = ["disk_full", "free_mb"]

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_SQLITE_FULL = 13
_FULL_TEXTS = ("no space left on device", "disk quota exceeded", "database or disk is full")


def disk_full(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) says the disk is full."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError) and cause.errno in _FULL_ERRNOS:
            return True
        if isinstance(cause, sqlite3.OperationalError) \
                and getattr(cause, "sqlite_errorcode", None) == _SQLITE_FULL:
            return True
        if isinstance(cause, OSError | sqlite3.Error) \
                and any(t in str(cause).lower() for t in _FULL_TEXTS):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def free_mb(path: Path) -> float:
    """Free space, MB, of the file system `path` (or its nearest existing parent) is on."""
    path = Path(path)
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free / 1e6
