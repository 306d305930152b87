"""Files that never exist half-written: written to a hidden temporary name, fsynced, renamed.

The temporary name is made a hard link under the final name when not overwriting, so an
existing file is never replaced. A crash never leaves a partial file under the final
name; a power loss can leave a stale `.<name>.partial-*` behind, never taken for a
capture.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ._errors import CaptureFileError

__all__ = ["atomic_target", "write_text_atomic"]


def _fsync_path(path: Path) -> None:
    # h5py keeps its descriptor to itself; on Linux fsync on a fresh read-only
    # descriptor flushes the file's dirty pages all the same.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; directories cannot be opened on Windows.
    if os.name == "nt":
        return
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_target(final: Path, overwrite: bool) -> Iterator[Path]:
    """Yield a temporary path next to `final`; on success make it `final`, else delete it."""
    if not overwrite and final.exists():
        raise CaptureFileError(f"{final}: already exists (pass overwrite=True to replace it)")
    # Hidden, and unique per process and call so concurrent writers never share one.
    tmp = final.with_name(f".{final.name}.partial-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        yield tmp
        _fsync_path(tmp)
        if overwrite:
            os.replace(tmp, final)
        else:
            # link() fails if the name appeared meanwhile, where replace() would
            # silently destroy another writer's capture.
            try:
                os.link(tmp, final)
            except FileExistsError:
                raise CaptureFileError(
                    f"{final}: already exists (pass overwrite=True to replace it)") from None
            os.unlink(tmp)
    except BaseException:
        with suppress(OSError):  # never mask the original error
            tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(final.parent)


def write_text_atomic(path: str | os.PathLike[str], text: str, *,
                      overwrite: bool = False) -> Path:
    """Write a small text file (a result's JSON) with the same never-partial guarantee."""
    final = Path(path)
    with atomic_target(final, overwrite) as tmp:
        with open(tmp, "x", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return final
