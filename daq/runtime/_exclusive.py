"""One process drives a rig and writes its archive.

Two `session start` on one rig took turns kicking each other off the broker (one client
id, 7 times) and dropped publishes. A process that runs, serves or holds a session first
takes up to three locks: its archive (storage.directory), its rig (mqtt.rig_id, on this
machine) and the bridge's port; a second process is refused with one line naming the one
that holds them, before it creates anything. The locks are advisory file locks (flock),
released by the kernel when the holder ends however it ends: a kill -9 leaves nothing
behind that would refuse the next start (the file stays, with who held it last).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path

__all__ = ["LOCK_NAME", "Held", "holding"]

#: the archive's lock file, in storage.directory
LOCK_NAME = ".hilrig.lock"


class Held(RuntimeError):
    """The archive, the rig or the port is held by another process (one line)."""


@contextmanager
def holding(storage_dir: Path, rig_id: str, port: str | None, doing: str) -> Iterator[None]:
    """Hold the archive, the rig and the port (if any) while the block runs; Held, naming
    the holder, if another process has any of them. `doing` says what this process is
    (shown to the next one refused)."""
    locks = [(Path(storage_dir) / LOCK_NAME, f"the archive {storage_dir}"),
             (_runtime_dir() / f"rig-{_slug(rig_id)}.lock", f"rig {rig_id!r}")]
    if port:
        locks.append((_runtime_dir() / f"port-{_slug(os.path.realpath(port))}.lock",
                      f"the port {port}"))
    with ExitStack() as stack:
        for path, what in locks:
            stack.enter_context(_locked(path, what, doing))
        yield


def _runtime_dir() -> Path:
    """Where this user's rig and port locks live (one machine's processes see them)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    path = Path(base) / f"hilrig-{os.getuid()}"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def _slug(text: str) -> str:
    """A file name for any rig id or path: readable, and unique by its digest."""
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"{re.sub(r'[^A-Za-z0-9._-]+', '_', text)[-60:]}-{digest}"


@contextmanager
def _locked(path: Path, what: str, doing: str) -> Iterator[None]:
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", encoding="utf-8") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            raise Held(f"{what} is held by {_holder(f.read(4096))}; stop that one first "
                       "(`hilrig session stop`, or Ctrl-C where it runs)") from None
        f.seek(0)
        f.truncate()
        f.write(json.dumps({"pid": os.getpid(), "doing": doing,
                            "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}))
        f.flush()
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _holder(text: str) -> str:
    """'process 1234 (session start, since ...)' from a lock file's words, as far as
    they read."""
    try:
        said = json.loads(text)
        return f"process {int(said['pid'])} ({said['doing']}, since {said['since']})"
    except (ValueError, KeyError, TypeError):
        return "another process"
