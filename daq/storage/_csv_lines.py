"""Reading a capture CSV within its bounds: only a regular file, its size checked before
a byte is parsed, and no line read further than CSV_MAX_LINE_BYTES (a file of one 2 GB
line is refused after 4 kB, not read whole)."""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from ._errors import CaptureFileError, one_line_text
from ._limits import CSV_HEAD_BYTES, CSV_MAX_LINE_BYTES

__all__ = ["BLOCK_BYTES", "csv_error", "data_blocks", "lines_of", "opened_csv"]

#: the fast parser reads this much at a time: memory bounded whatever the file holds
BLOCK_BYTES = 2 << 20


def csv_error(p: Path, lineno: int | None, msg: str) -> CaptureFileError:
    return CaptureFileError(f"{p}: line {lineno}: {msg}" if lineno else f"{p}: {msg}")


def _too_long(p: Path, lineno: int) -> CaptureFileError:
    return csv_error(p, lineno, f"longer than {CSV_MAX_LINE_BYTES} bytes, which no line of a "
                                "capture is (not a capture CSV?)")


@contextmanager
def opened_csv(p: Path, max_bytes: int, why: str = "") -> Iterator[tuple[BinaryIO, int]]:
    """(file, size) of a regular file of at most `max_bytes` (`why` says whence the limit).

    Opened without blocking and checked on the open file: a FIFO or device would block
    the open itself, or never end."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise CaptureFileError(f"{p}: file not found") from None
    except OSError as exc:
        raise CaptureFileError(f"{p}: cannot open ({exc.strerror or one_line_text(exc)})") from None
    with os.fdopen(fd, "rb") as fb:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CaptureFileError(f"{p}: not a regular file (a directory, FIFO or device)")
        check_size(p, st.st_size, max_bytes, why)
        yield fb, st.st_size


def check_size(p: Path, size: int, max_bytes: int, why: str = "") -> None:
    if size > max_bytes:
        raise csv_error(p, None, f"file is {size} bytes, more than the limit of {max_bytes}"
                                 + (f" ({why})" if why else ""))


def lines_of(fb: BinaryIO, p: Path, first_lineno: int, head: bool = False
             ) -> Iterator[tuple[int, bytes]]:
    """(line number, line) from where `fb` stands, each read at most CSV_MAX_LINE_BYTES
    far; `head`: the lines above the data, which end within CSV_HEAD_BYTES."""
    for lineno in itertools.count(first_lineno):
        raw = fb.readline(CSV_MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > CSV_MAX_LINE_BYTES:
            raise _too_long(p, lineno)
        if head and fb.tell() > CSV_HEAD_BYTES:
            raise csv_error(p, lineno, f"no header in the first {CSV_HEAD_BYTES} bytes")
        yield lineno, raw


def data_blocks(fb: BinaryIO, p: Path, first_lineno: int) -> Iterator[list[bytes]]:
    """The lines from where `fb` stands, about BLOCK_BYTES of whole lines at a time (each
    without its newline); a line longer than CSV_MAX_LINE_BYTES is refused by number."""
    lineno = first_lineno
    while True:
        block = fb.read(BLOCK_BYTES)
        if not block:
            return
        if not block.endswith(b"\n"):  # finish the last line, never further than a line
            block += fb.readline(CSV_MAX_LINE_BYTES + 1)
        ended = block.endswith(b"\n")
        lines = block.split(b"\n")
        if ended:
            lines.pop()  # the empty piece after the last newline
        if max(map(len, lines)) >= CSV_MAX_LINE_BYTES:  # the limit counts the newline too
            for k, line in enumerate(lines):
                if len(line) + (ended or k < len(lines) - 1) > CSV_MAX_LINE_BYTES:
                    raise _too_long(p, lineno + k)
        yield lines
        lineno += len(lines)
