"""Capture files in CSV, for exchange: a header `t,theta0,theta1` (seconds, radians).

Read with np.loadtxt; when that fails a line-by-line parser takes over to name the
offending line. Written atomically, numbers as shortest round-trip decimals.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
import warnings
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from drivers import SourceInfo
from identify import Progress, RigParams

from ..acquisition import Capture
from ._atomic import atomic_target
from ._errors import CaptureFileError, one_line_text
from ._hdf5 import CHUNK_ROWS, check_suffix
from ._limits import MIN_SAMPLES, CaptureLimits

__all__ = ["CSV_COLUMNS", "JointTable", "read_capture_csv", "read_joint_csv", "write_capture_csv",
           "write_joint_csv"]

CSV_COLUMNS: tuple[str, str, str] = ("t", "theta0", "theta1")
CSV_MIN_ROWS = MIN_SAMPLES
CSV_MAX_BYTES = 2_000_000_000
#: A CSV time step must lie within this fraction of the median step of a whole multiple of it.
GRID_TOLERANCE = 0.01
_ASCII_WS = " \t\r\n\f\v"
# Decimal numbers, inf and nan as np.loadtxt reads them; ASCII only (float() would take
# '1_0' and full-width digits, which loadtxt rejects).
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                     re.ASCII | re.IGNORECASE)


def write_capture_csv(path: str | os.PathLike[str], capture: Capture, *,
                      overwrite: bool = False) -> Path:
    """Export t,theta0,theta1 (t from the first sample, so gaps show) atomically.

    Numbers are written as shortest round-trip decimals: re-reading gives the very same
    float64 angles.
    """
    final = Path(path)
    check_suffix(final, (".csv",))
    t = capture.times()
    angles = capture.angles_rad
    meta = (f"# hilrig capture export: capture_id={json.dumps(capture.capture_id)} "
            f"sample_rate_hz={capture.sample_rate_hz!r} "
            f"counts_per_rev={capture.counts_per_rev[0]},{capture.counts_per_rev[1]} "
            f"software_version={json.dumps(capture.software_version)}\n")
    with atomic_target(final, overwrite) as tmp:
        with open(tmp, "x", encoding="utf-8", newline="\n") as f:
            f.write(meta)
            f.write(",".join(CSV_COLUMNS) + "\n")
            for lo in range(0, len(t), CHUNK_ROWS):  # bounded memory for long captures
                hi = lo + CHUNK_ROWS
                rows = zip(t[lo:hi].tolist(), angles[lo:hi, 0].tolist(),
                           angles[lo:hi, 1].tolist())
                f.write("".join(f"{a!r},{b!r},{c!r}\n" for a, b, c in rows))
    return final


def _csv_error(p: Path, lineno: int | None, msg: str) -> CaptureFileError:
    return CaptureFileError(f"{p}: line {lineno}: {msg}" if lineno else f"{p}: {msg}")


def _body(raw: bytes, p: Path, lineno: int) -> str:
    """The line without comment and surrounding ASCII whitespace ('' if nothing left)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _csv_error(p, lineno, "not UTF-8 text") from None
    if lineno == 1:
        line = line.removeprefix("\ufeff")  # byte-order mark written by spreadsheets
    return line.split("#", 1)[0].strip(_ASCII_WS)


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _read_header(fb: BinaryIO, p: Path, columns: tuple[str, ...] = CSV_COLUMNS) -> int:
    """Check the header (first non-comment line); return its line number."""
    for lineno, raw in enumerate(fb, 1):
        body = _body(raw, p, lineno)
        if not body:
            continue
        names = [c.strip(_ASCII_WS) for c in body.split(",")]
        if tuple(names) == columns:
            return lineno
        expected = ",".join(columns)
        if columns == CSV_COLUMNS and 0 < len(names) < 3 and tuple(names) == columns[:len(names)]:
            raise _csv_error(p, lineno, f"header has {len(names)} column(s) ({','.join(names)}); "
                                        f"both joints are required: {expected}")
        if _NUMBER.fullmatch(names[0]):
            raise _csv_error(p, lineno, f"missing header {expected} (found data {_short(body)})")
        raise _csv_error(p, lineno, f"header must be {expected}, got {_short(body)}")
    raise _csv_error(p, None, f"no header line (expected {','.join(columns)})")


def _parse_rows(fb: BinaryIO, first_lineno: int, p: Path, max_rows: int,
                columns: tuple[str, ...] = CSV_COLUMNS) -> np.ndarray:
    """Line-by-line parser: slow, but names the line of the first problem."""
    values = array("d")
    rows = 0
    width = len(columns)
    for lineno, raw in enumerate(fb, first_lineno):
        body = _body(raw, p, lineno)
        if not body:
            continue
        fields = body.split(",")
        if len(fields) != width:
            raise _csv_error(p, lineno, f"expected {width} columns ({','.join(columns)}), "
                                        f"got {len(fields)}")
        for name, text in zip(columns, fields):
            text = text.strip(_ASCII_WS)
            if not _NUMBER.fullmatch(text):
                raise _csv_error(p, lineno, f"{name} is not a number: {_short(text)}")
            values.append(float(text))
        rows += 1
        if rows > max_rows:
            raise _csv_error(p, None, f"more than {max_rows} data rows (the limit)")
    return np.frombuffer(values, dtype=np.float64).reshape(-1, width).copy()


def _line_of_row(fb: BinaryIO, first_lineno: int, row: int, p: Path) -> int | None:
    """Line number of data row `row` (0-based), counting as the parsers do."""
    for lineno, raw in enumerate(fb, first_lineno):
        if _body(raw, p, lineno):
            if row == 0:
                return lineno
            row -= 1
    return None  # only if np.loadtxt counted rows differently: report without a line


def _check_rows(data: np.ndarray, p: Path, line_of: Callable[[int], int | None],
                columns: tuple[str, ...] = CSV_COLUMNS) -> tuple[np.ndarray, float]:
    """Validate parsed rows; return (sample_index from 0, sample rate)."""
    n = data.shape[0]
    width = len(columns)
    if n and data.shape[1] != width:
        raise _csv_error(p, line_of(0), f"expected {width} columns ({','.join(columns)}), "
                                        f"got {data.shape[1]}")
    if n < CSV_MIN_ROWS:
        raise _csv_error(p, None, f"only {n} data rows (at least {CSV_MIN_ROWS} required)")
    bad = ~np.isfinite(data)
    if bad.any():
        k, j = divmod(int(np.argmax(bad)), width)
        raise _csv_error(p, line_of(k), f"{columns[j]} is {float(data[k, j])}")
    t = data[:, 0]
    with np.errstate(all="ignore"):  # huge times overflow: caught by the span check
        dt = np.diff(t)
        if not bool(np.all(dt > 0)):
            k = int(np.argmax(~(dt > 0))) + 1
            now, before = float(t[k]), float(t[k - 1])
            if now == before:
                raise _csv_error(p, line_of(k), f"duplicated time ({now!r})")
            raise _csv_error(p, line_of(k), f"time not increasing ({now!r} after {before!r})")
        step = float(np.median(dt))
        span = float(t[-1] - t[0])
        span_steps = span / step
        ratio = dt / step
    if not (math.isfinite(span_steps) and span_steps < 2.0**53):
        raise _csv_error(p, None, f"time span {span!r} s is too long for the median step "
                                  f"{step!r} s")
    whole = np.rint(ratio)
    off = (whole < 1) | (np.abs(ratio - whole) > GRID_TOLERANCE)
    if off.any():
        k = int(np.argmax(off))
        raise _csv_error(p, line_of(k + 1),
                         f"time step {dt[k]:.6g} s is not a whole multiple of the median step "
                         f"{step:.6g} s (tolerance {GRID_TOLERANCE:.0%})")
    index = np.zeros(n, dtype=np.int64)
    np.cumsum(whole.astype(np.int64), out=index[1:])
    # The whole span, not the median step alone, fixes the rate: far less rounding noise.
    rate = float(index[-1]) / span
    return index, rate


def read_capture_csv(
    path: str | os.PathLike[str],
    rig: RigParams | None = None,
    counts_per_rev: tuple[int, int] = (40_000, 40_000),
    *,
    max_bytes: int = CSV_MAX_BYTES,
    max_rows: int | None = None,
    limits: CaptureLimits | None = None,
    progress: Progress | None = None,
) -> Capture:
    """Import t,theta0,theta1 (seconds, radians) as a Capture with angles and no counts.

    The rate comes from the time grid (median step, refined over the whole span);
    sample_index counts grid steps from 0, so gaps in time become index jumps. Lines
    starting with # are comments. Any problem is a CaptureFileError naming the line.
    A file holding more than `limits` allow (or `max_rows` rows) is refused as soon as
    that many rows are read; `progress(fraction, message)` follows a long read.
    """
    if len(counts_per_rev) != 2 or min(counts_per_rev) < 1:
        raise ValueError(f"counts_per_rev must be two positive integers, got {counts_per_rev}")
    p = Path(path)
    data, index, rate = _read_table(p, CSV_COLUMNS, limits or CaptureLimits(), max_bytes,
                                    max_rows, progress)
    rig = rig if rig is not None else RigParams()
    try:
        source = SourceInfo(kind="replay", identity=f"csv:{p.name}", sample_rate_hz=rate,
                            counts_per_rev=counts_per_rev)
        return Capture(capture_id=p.stem, sample_index=index, counts=None,
                       imported_angles_rad=np.ascontiguousarray(data[:, 1:3]),
                       sample_rate_hz=rate, counts_per_rev=counts_per_rev, rig=rig,
                       source=source)
    except ValueError as exc:  # e.g. a rate that overflowed to inf
        raise CaptureFileError(f"{p}: {one_line_text(exc)}") from None


def write_joint_csv(path: str | os.PathLike[str], t: np.ndarray, angles: np.ndarray, *,
                    note: str = "", overwrite: bool = False) -> Path:
    """Write t,theta1[,...] (s, rad from upright, absolute link angles) atomically, with
    `note` and the conventions read_joint_csv takes in a comment line above the header;
    numbers as shortest round-trip decimals."""
    final = Path(path)
    check_suffix(final, (".csv",))
    a = np.asarray(angles, dtype=np.float64).reshape(len(t), -1)
    header = ",".join(["t"] + [f"theta{i + 1}" for i in range(a.shape[1])])
    with atomic_target(final, overwrite) as tmp:
        with open(tmp, "x", encoding="utf-8", newline="\n") as f:
            f.write(f"# {note + ': ' if note else ''}unit=rad zero=upright\n{header}\n")
            for lo in range(0, len(t), CHUNK_ROWS):  # bounded memory for long records
                rows = zip(np.asarray(t[lo:lo + CHUNK_ROWS]).tolist(),
                           a[lo:lo + CHUNK_ROWS].tolist(), strict=True)
                f.write("".join(",".join(map(repr, [tt, *row])) + "\n" for tt, row in rows))
    return final


def _read_table(p: Path, columns: tuple[str, ...], limits: CaptureLimits, max_bytes: int,
                max_rows: int | None, progress: Progress | None
                ) -> tuple[np.ndarray, np.ndarray, float]:
    """(rows, sample_index, rate) of a CSV whose header is `columns`, within the limits."""
    try:
        size = p.stat().st_size
        fb = open(p, "rb")
    except FileNotFoundError:
        raise CaptureFileError(f"{p}: file not found") from None
    except OSError as exc:
        raise CaptureFileError(f"{p}: cannot open ({exc.strerror or one_line_text(exc)})") from None
    with fb:
        if size > max_bytes:
            raise _csv_error(p, None, f"file is {size} bytes, more than the limit of "
                                      f"{max_bytes}")
        header_line = _read_header(fb, p, columns)
        data_offset = fb.tell()
        rows_allowed = max_rows if max_rows is not None else limits.max_samples
        data = _load_chunks(fb, size, rows_allowed, progress)
        if data is None:  # not plain numbers: the line parser names the first bad line
            fb.seek(data_offset)
            data = _parse_rows(fb, header_line + 1, p, rows_allowed, columns)
        if data.shape[0] > rows_allowed:
            if max_rows is not None:
                raise _csv_error(p, None, f"more than {max_rows} data rows (the limit)")
            limits.check_samples(p, data.shape[0])

        def line_of(row: int) -> int | None:
            fb.seek(data_offset)
            return _line_of_row(fb, header_line + 1, row, p)

        index, rate = _check_rows(data, p, line_of, columns)
    limits.check_rate(p, rate)
    limits.check_duration(p, float(data[-1, 0] - data[0, 0]))
    return data, index, rate


_CHUNK_LINES = 200_000


def _load_chunks(fb: BinaryIO, size: int, rows_allowed: int,
                 progress: Progress | None) -> np.ndarray | None:
    """The data rows by np.loadtxt, a chunk of lines at a time; None if a chunk is not
    plain numbers. Stops once more than `rows_allowed` rows are read."""
    chunks: list[np.ndarray] = []
    rows = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loadtxt warns on a chunk of comments only
        while rows <= rows_allowed:
            lines = list(itertools.islice(fb, _CHUNK_LINES))
            if not lines:
                break
            try:
                chunk = np.loadtxt([line.decode("utf-8") for line in lines], delimiter=",",
                                   comments="#", dtype=np.float64, ndmin=2)
            except ValueError:  # includes UnicodeDecodeError
                return None
            if chunk.size:
                if chunks and chunk.shape[1] != chunks[0].shape[1]:
                    return None
                chunks.append(chunk)
                rows += chunk.shape[0]
            if progress is not None:
                progress(fb.tell() / max(size, 1), f"{rows} rows")
    if not chunks:
        return np.zeros((0, 1))
    return np.concatenate(chunks) if len(chunks) > 1 else chunks[0]


# -- records of the chain rig kinds: t,theta1[,theta2[,theta3]] -----------------------------
ANGLE_UNITS = {"rad": 1.0, "deg": math.pi / 180.0}
ANGLE_ZEROS = {"upright": 0.0, "hanging": math.pi}
_CONVENTION = re.compile(r"\b(unit|zero)\s*=\s*([a-z]+)", re.ASCII | re.IGNORECASE)


@dataclass(frozen=True)
class JointTable:
    """A record of 1-3 joints: times (s), angles (rad from the upward vertical, as seed
    002's delta_i: absolute, 0 upright, pi hanging), grid index and rate."""

    path: Path
    t: np.ndarray
    angles: np.ndarray
    sample_index: np.ndarray
    rate_hz: float


def _joint_header(p: Path) -> tuple[tuple[str, ...], dict[str, str]]:
    """The header's columns and the conventions (unit=, zero=) comments above it state."""
    said: dict[str, str] = {}
    try:
        with open(p, "rb") as fb:
            for lineno, raw in enumerate(fb, 1):
                text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
                if text.lstrip().startswith("#"):
                    said.update({k.lower(): v.lower() for k, v in _CONVENTION.findall(text)})
                    continue
                body = _body(raw, p, lineno)
                if body:
                    return tuple(c.strip(_ASCII_WS) for c in body.split(",")), said
    except FileNotFoundError:
        raise CaptureFileError(f"{p}: file not found") from None
    except OSError as exc:
        raise CaptureFileError(f"{p}: cannot open ({exc.strerror or one_line_text(exc)})") from None
    raise _csv_error(p, None, "no header line (expected t,theta1[,theta2[,theta3]])")


def read_joint_csv(path: str | os.PathLike[str], *, unit: str | None = None,
                   zero: str | None = None, limits: CaptureLimits | None = None,
                   progress: Progress | None = None) -> JointTable:
    """Import t,theta1[,theta2[,theta3]]: absolute link angles, one column per joint.

    The angle unit (rad, deg) and zero (upright, hanging) come from the arguments, else
    from a comment above the header (`# unit=deg zero=hanging`), else rad and upright.
    """
    p = Path(path)
    names, said = _joint_header(p)
    joints = len(names) - 1
    expected = ("t",) + tuple(f"theta{i + 1}" for i in range(max(joints, 1)))
    if not 1 <= joints <= 3 or names != expected:
        raise _csv_error(p, None, f"header must be t,theta1[,theta2[,theta3]], got "
                                  f"{_short(','.join(names))}")
    unit = unit or said.get("unit", "rad")
    zero = zero or said.get("zero", "upright")
    if unit not in ANGLE_UNITS:
        raise _csv_error(p, None, f"angle unit {unit!r}: expected rad or deg")
    if zero not in ANGLE_ZEROS:
        raise _csv_error(p, None, f"angle zero {zero!r}: expected upright or hanging")
    data, index, rate = _read_table(p, names, limits or CaptureLimits(), CSV_MAX_BYTES, None,
                                    progress)
    angles = data[:, 1:] * ANGLE_UNITS[unit] + ANGLE_ZEROS[zero]
    return JointTable(path=p, t=data[:, 0].copy(), angles=np.ascontiguousarray(angles),
                      sample_index=index, rate_hz=rate)
