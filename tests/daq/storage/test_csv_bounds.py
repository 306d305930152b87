"""What a capture CSV may be, checked before it costs time or memory: its size (from what
the settings allow a capture), its lines' length, the lines that hold no data, its
angles; and only a regular file is opened at all."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from hilrig.daq.config import load_settings
from hilrig.daq.storage import (
    CSV_HEAD_BYTES,
    CSV_MAX_BYTES,
    CSV_MAX_LINE_BYTES,
    CSV_MAX_OTHER_LINES,
    CSV_NUMBER_BYTES,
    CaptureFileError,
    CaptureLimits,
    read_capture,
    read_capture_csv,
    read_joint_csv,
)

GiB = 1 << 30


def _rows(n: int = 12, columns: int = 3) -> list[str]:
    return [",".join([f"{k * 0.001!r}"] + [f"{0.01 * k + j!r}" for j in range(columns - 1)])
            for k in range(n)]


def _sparse(path: Path, head: bytes, size: int) -> Path:
    """`head`, then zeros (NUL bytes, no newline) up to `size` bytes: no disk, no time."""
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


@pytest.fixture
def small() -> CaptureLimits:
    """0.6 s at 10 kHz: 6,001 samples."""
    return CaptureLimits.of(load_settings(None, trigger={"max_duration_s": 0.5,
                                                         "pre_trigger_s": 0.1}))


def test_the_size_limit_comes_from_the_longest_capture_the_settings_allow(small):
    assert small.max_csv_bytes(3) == CSV_HEAD_BYTES + 6_001 * 3 * (CSV_NUMBER_BYTES + 1)
    default = CaptureLimits.of(load_settings(None))  # 110.5 s at 10 kHz
    assert default.max_csv_bytes(3) == 135_980_659  # 136 MB; a real one is a third of it
    assert default.max_csv_bytes(4) == 181_285_700


@pytest.mark.fault(injected="bad input: a 2 GB CSV (sparse), with and without a valid header, "
                            "for every rig kind",
                   expected="refused by its size before a byte is parsed, naming the setting")
@pytest.mark.parametrize("head", [b"", b"t,theta0,theta1\n", b"t,theta1,theta2\n"])
def test_a_csv_larger_than_the_settings_allow_is_refused_before_it_is_read(tmp_path, head):
    path = _sparse(tmp_path / "big.csv", head, 2 * GiB)
    limits = CaptureLimits.of(load_settings(None))
    for read in (lambda: read_capture(path, limits=limits),
                 lambda: read_joint_csv(path, limits=limits)):
        with pytest.raises(CaptureFileError, match=r"big\.csv: file is 2147483648 bytes, more "
                                                   r"than the limit of \d+ \(.*raise trigger\."
                                                   r"max_duration_s"):
            read()


def _padding(n: int) -> str:
    """`n` bytes of comment lines, none longer than the limit."""
    full, rest = divmod(n, CSV_MAX_LINE_BYTES)
    line = "#" + "x" * (CSV_MAX_LINE_BYTES - 2) + "\n"
    return line * full + ("#" + "x" * (rest - 2) + "\n" if rest > 1 else "\n" * rest)


def test_a_csv_at_the_size_limit_is_read_and_one_byte_more_is_not(tmp_path, small):
    rows = "\n".join(["t,theta0,theta1", *_rows(20)]) + "\n"
    limit = small.max_csv_bytes(3)
    at = tmp_path / "at.csv"
    at.write_text(rows + _padding(limit - len(rows)))
    assert at.stat().st_size == limit
    assert len(read_capture(at, limits=small)) == 20
    over = tmp_path / "over.csv"
    over.write_text(rows + _padding(limit - len(rows) + 1))
    with pytest.raises(CaptureFileError, match=rf"file is {limit + 1} bytes, more than the "
                                               rf"limit of {limit}"):
        read_capture(over, limits=small)


def test_no_csv_beyond_2_gb_is_read_whatever_the_settings_allow(tmp_path):
    assert CaptureLimits().max_csv_bytes(3) > CSV_MAX_BYTES  # 3610 s at 100 kHz: 44 GB
    path = _sparse(tmp_path / "big.csv", b"t,theta0,theta1\n", CSV_MAX_BYTES + 1)
    with pytest.raises(CaptureFileError, match=rf"more than the limit of {CSV_MAX_BYTES} \(a "
                                               r"longer capture is kept as HDF5\)"):
        read_capture(path, limits=CaptureLimits())


@pytest.mark.fault(injected="bad input: a CSV line of 100 MB (NUL bytes, no newline) before, "
                            "in and after the header",
                   expected="refused naming the line, having read at most 4 kB of it")
@pytest.mark.parametrize("head, line", [
    (b"", 1),  # no header: the whole file one line
    (b"# unit=rad\nt,theta0,theta1\n" + "\n".join(_rows(12)).encode() + b"\n", 15),
])
def test_a_line_longer_than_the_limit_is_refused_without_reading_it_whole(tmp_path, head, line):
    path = _sparse(tmp_path / "line.csv", head, 100_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(CaptureFileError, match=rf"line\.csv: line {line}: longer than "
                                                   rf"{CSV_MAX_LINE_BYTES} bytes"):
            read_capture_csv(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20  # a few blocks of 2 MiB, never the line


def test_a_long_line_of_a_chain_record_is_refused_by_number(tmp_path):
    path = _sparse(tmp_path / "rec.csv", b"t,theta1,theta2\n", 100_000_000)
    with pytest.raises(CaptureFileError, match=r"rec\.csv: line 2: longer than 4096 bytes"):
        read_joint_csv(path)
    path = _sparse(tmp_path / "rec.csv", b"", 100_000_000)
    with pytest.raises(CaptureFileError, match=r"rec\.csv: line 1: longer than 4096 bytes"):
        read_joint_csv(path)


@pytest.mark.parametrize("slow", [False, True], ids=["loadtxt", "line parser"])
def test_a_line_of_exactly_the_limit_is_read_and_one_byte_more_is_not(tmp_path, slow):
    rows = _rows(20)
    if slow:
        rows.insert(3, " \t")  # a line np.loadtxt refuses: the line parser reads the file
    comment = "#" + "x" * (CSV_MAX_LINE_BYTES - 2)  # with its newline: the limit
    path = tmp_path / "c.csv"
    path.write_text("\n".join(["t,theta0,theta1", *rows[:10], comment, *rows[10:]]) + "\n")
    assert len(read_capture_csv(path)) == 20
    path.write_text("\n".join(["t,theta0,theta1", *rows[:10], comment + "x", *rows[10:]]) + "\n")
    with pytest.raises(CaptureFileError, match=r"line 12: longer than"):
        read_capture_csv(path)


def test_a_header_is_found_near_the_top_or_not_at_all(tmp_path):
    path = tmp_path / "c.csv"
    comments = ["# " + "c" * 1000] * (CSV_HEAD_BYTES // 1000 + 1)
    path.write_text("\n".join([*comments, "t,theta0,theta1", *_rows(12)]) + "\n")
    with pytest.raises(CaptureFileError, match=rf"no header in the first {CSV_HEAD_BYTES} bytes"):
        read_capture_csv(path)
    with pytest.raises(CaptureFileError, match=r"no header in the first"):
        read_joint_csv(path)


@pytest.mark.fault(injected="bad input: a CSV of 100 MB of blank or comment lines",
                   expected="refused after 65,536 such lines, not minutes later")
@pytest.mark.parametrize("filler, slow", [("", False), ("# note", False), ("", True)],
                         ids=["blank", "comments", "blank, line parser"])
def test_blank_or_comment_lines_among_the_rows_are_bounded(tmp_path, filler, slow):
    rows = _rows(12) + ([" \t"] if slow else [])
    path = tmp_path / "c.csv"
    path.write_text("\n".join(["t,theta0,theta1", *rows, *[filler] * (CSV_MAX_OTHER_LINES
                                                                      - slow)]) + "\n")
    assert len(read_capture_csv(path)) == 12
    path.write_text("\n".join(["t,theta0,theta1", *rows, *[filler] * (CSV_MAX_OTHER_LINES
                                                                      + 1)]) + "\n")
    with pytest.raises(CaptureFileError, match=rf"more than {CSV_MAX_OTHER_LINES} blank or "
                                               "comment lines"):
        read_capture_csv(path)


@pytest.mark.fault(injected="bad input: an angle of 1e308 in a CSV (rad, and deg for a chain)",
                   expected="refused naming the line, in the project's words")
def test_an_angle_no_joint_can_have_is_refused_naming_its_line(tmp_path):
    rows = _rows(12)
    rows[6] = "0.006,1e308,0.2"
    path = tmp_path / "c.csv"
    path.write_text("\n".join(["t,theta0,theta1", *rows]) + "\n")
    with pytest.raises(CaptureFileError, match=r"c\.csv: line 8: theta0 is 1e\+308 rad: more "
                                               r"than 1e\+06 rad is no joint angle"):
        read_capture_csv(path)
    rows = _rows(12, columns=2)
    rows[2] = "0.002,1e308"
    path.write_text("\n".join(["# unit=deg", "t,theta1", *rows]) + "\n")
    with pytest.raises(CaptureFileError, match=r"line 5: theta1 is 1e\+308 deg: more than"):
        read_joint_csv(path)
    rows[2] = "0.002,-5e7"  # 872,665 rad: the bound is in radians, whatever the file's unit
    path.write_text("\n".join(["# unit=deg", "t,theta1", *rows]) + "\n")
    # within the bound; refused as no joint's motion (half a turn between two samples)
    with pytest.raises(CaptureFileError, match=r"theta1 jumps from 0\.01 to -5e\+07 between "
                                               r"samples 1 and 2"):
        read_joint_csv(path)
    path.write_text("\n".join(["t,theta1", *rows]) + "\n")
    with pytest.raises(CaptureFileError, match=r"line 4: theta1 is -5e\+07 rad"):
        read_joint_csv(path)


@pytest.mark.timeout(10)  # a FIFO opened for reading blocks until a writer comes
def test_a_fifo_named_as_a_record_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "swing.csv"
    os.mkfifo(fifo)
    for read in (read_capture, read_capture_csv, read_joint_csv):
        with pytest.raises(CaptureFileError, match=r"swing\.csv: not a regular file"):
            read(fifo)
