"""Reading a small file a user names (a config file, an option's @file): only a regular
file, and never more than a stated number of bytes, so a FIFO cannot hang the command nor
/dev/zero fill its memory."""

from __future__ import annotations

import os
import stat

__all__ = ["read_small_file"]


def read_small_file(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The bytes of the regular file at `path`, at most `max_bytes` of them.

    OSError as open raises it (not found, no permission); ValueError, one line without
    the path, for a directory, FIFO or device, or a file holding more than `max_bytes`.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO's open would block for a writer
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a regular file (a directory, FIFO or device)")
        data = f.read(max_bytes + 1)  # bounded whatever the size says (/proc says 0)
    if len(data) > max_bytes:
        raise ValueError(f"more than {max_bytes} bytes, the limit")
    return data
