"""Capture files in CSV, for exchange: a header `t,theta0,theta1` (seconds, radians).

Read with np.loadtxt, a block of lines at a time; when that fails a line-by-line parser
takes over to name the offending line. Bounded before parsing (_limits, _csv_lines):
a regular file, at most `CaptureLimits.max_csv_bytes` and CSV_MAX_BYTES, no line longer
than CSV_MAX_LINE_BYTES, no angle beyond MAX_ANGLE_RAD. Written atomically, numbers as
shortest round-trip decimals.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from hilrig.drivers import SourceInfo
from hilrig.identify import Progress, RigParams

from ..acquisition import MAX_ANGLE_RAD, Capture, checked_covariates
from ._atomic import atomic_target
from ._csv_lines import check_size, csv_error, data_blocks, lines_of, opened_csv
from ._errors import CaptureFileError, one_line_text
from ._hdf5 import CHUNK_ROWS, check_suffix
from ._limits import CSV_MAX_OTHER_LINES, CSV_NUMBER_BYTES, MIN_SAMPLES, CaptureLimits

__all__ = ["CSV_COLUMNS", "JointTable", "capture_csv_time", "read_capture_csv", "read_joint_csv",
           "write_capture_csv", "write_joint_csv"]

CSV_COLUMNS: tuple[str, str, str] = ("t", "theta0", "theta1")
CSV_MIN_ROWS = MIN_SAMPLES
#: no CSV is read whatever the settings allow beyond this (its numbers alone would take
#: about 1 GB of memory): a longer capture is kept as HDF5
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
    float64 angles. Comment lines above the header carry the capture's time and its
    covariates, which read_capture_csv reads back (pooling needs both).
    """
    final = Path(path)
    check_suffix(final, (".csv",))
    t = capture.times()
    angles = capture.angles_rad
    meta = (f"# hilrig capture export: capture_id={json.dumps(capture.capture_id)} "
            f"created_utc={capture.created_utc} "
            f"sample_rate_hz={capture.sample_rate_hz!r} "
            f"counts_per_rev={capture.counts_per_rev[0]},{capture.counts_per_rev[1]} "
            f"software_version={json.dumps(capture.software_version)}\n"
            "# unit=rad zero=hanging (the pendulum's angle is 0 hanging, as in seed 000)\n")
    if capture.covariates:  # what a session's friction can be pooled against
        meta += f"# covariates={json.dumps(capture.covariates, sort_keys=True)}\n"
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


#: radians per unit of a CSV's angles (identify.signal.ANGLE_UNITS)
ANGLE_UNITS = {"rad": 1.0, "deg": math.pi / 180.0}
_CONVENTION = re.compile(r"\b(unit|zero)\s*=\s*([a-z]+)", re.ASCII | re.IGNORECASE)
_RECORDED_TIME = re.compile(r"\bcreated_utc=(\S+)", re.ASCII)
_COVARIATES = re.compile(r"#\s*covariates=(.*)", re.ASCII)


@dataclass(frozen=True)
class _Head:
    """What the comment lines above the header state: the conventions (unit=, zero=,
    lower-cased) and, as written with their line numbers, an export's created_utc= and
    covariates=."""

    conventions: dict[str, str]
    created_utc: tuple[str, int] | None = None
    covariates: tuple[str, int] | None = None


def _head(fb: BinaryIO, p: Path) -> _Head:
    """The head's comment lines (_Head); `fb` is left at its start."""
    conventions: dict[str, str] = {}
    stated: dict[str, tuple[str, int]] = {}
    for lineno, raw in lines_of(fb, p, 1, head=True):
        text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
        if text.lstrip().startswith("#"):
            conventions.update({k.lower(): v.lower() for k, v in _CONVENTION.findall(text)})
            for key, match in (("created_utc", _RECORDED_TIME.search(text)),
                               ("covariates", _COVARIATES.fullmatch(text.strip()))):
                if match:
                    stated[key] = (match.group(1), lineno)
        elif text.strip(_ASCII_WS):
            break
    fb.seek(0)
    return _Head(conventions, stated.get("created_utc"), stated.get("covariates"))


def _recorded(p: Path, head: _Head) -> dict[str, Any]:
    """The capture's time and covariates an export's comments state, checked."""
    out: dict[str, Any] = {}
    if head.created_utc is not None:
        text, line = head.created_utc
        try:
            when = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise csv_error(p, line, f"created_utc={text[:40]!r} is not an ISO 8601 time "
                                     "(2026-11-28T16:50:54.123Z)") from None
        if when.tzinfo is None:
            raise csv_error(p, line, f"created_utc={text[:40]!r}: give the time in UTC "
                                     "(ending in Z)")
        out["created_utc"] = text
    if head.covariates is not None:
        text, line = head.covariates
        try:
            out["covariates"] = checked_covariates(json.loads(text))
        except ValueError as exc:  # json.JSONDecodeError is one
            raise csv_error(p, line, f"covariates: {one_line_text(exc)} (expected "
                                     '{"temperature_c": 21.5})') from None
    return out


def capture_csv_time(path: str | os.PathLike[str]) -> str | None:
    """The time a capture CSV records (an export's created_utc=), or None: a CSV from
    elsewhere, whose time is unknown."""
    p = Path(path)
    with opened_csv(p, CSV_MAX_BYTES) as (fb, _):
        return _recorded(p, _head(fb, p)).get("created_utc")


def _convention(p: Path, unit: str, zero: str) -> tuple[str, str]:
    if unit not in ANGLE_UNITS:
        raise csv_error(p, None, f"angle unit {unit!r}: expected rad or deg")
    if zero not in ("upright", "hanging"):
        raise csv_error(p, None, f"angle zero {zero!r}: expected upright or hanging")
    return unit, zero


def _check_convention(p: Path, values: np.ndarray, names: tuple[str, ...], rate: float,
                      unit: str, zero: str, pendulums: list[bool] | None = None) -> None:
    """Refuse, with the likely fix, angles that cannot be `unit` from `zero`
    (identify.signal.angle_convention_problem): before anything is fitted to them."""
    from hilrig.identify.signal import angle_convention_problem

    problem = angle_convention_problem(values, names, rate, unit, zero, pendulums)
    if problem is None:
        return
    fix = [(k, v) for k, v in (("unit", problem.unit), ("zero", problem.zero)) if v]
    hint = ""
    if fix:
        hint = (": read it with " + " ".join(f"--{k} {v}" for k, v in fix) + " (or `# "
                + " ".join(f"{k}={v}" for k, v in fix) + "` above the header)")
    raise csv_error(p, None, problem.message + hint)


def _body(raw: bytes, p: Path, lineno: int) -> str:
    """The line without comment and surrounding ASCII whitespace ('' if nothing left)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise csv_error(p, lineno, "not UTF-8 text") from None
    if lineno == 1:
        line = line.removeprefix("\ufeff")  # byte-order mark written by spreadsheets
    return line.split("#", 1)[0].strip(_ASCII_WS)


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _read_header(fb: BinaryIO, p: Path, columns: tuple[str, ...] = CSV_COLUMNS) -> int:
    """Check the header (first non-comment line); return its line number."""
    for lineno, raw in lines_of(fb, p, 1, head=True):
        body = _body(raw, p, lineno)
        if not body:
            continue
        names = [c.strip(_ASCII_WS) for c in body.split(",")]
        if tuple(names) == columns:
            return lineno
        expected = ",".join(columns)
        if columns == CSV_COLUMNS and 0 < len(names) < 3 and tuple(names) == columns[:len(names)]:
            raise csv_error(p, lineno, f"header has {len(names)} column(s) ({','.join(names)}); "
                                       f"both joints are required: {expected}")
        if _NUMBER.fullmatch(names[0]):
            raise csv_error(p, lineno, f"missing header {expected} (found data {_short(body)})")
        links = len(names) - 1
        if (columns == CSV_COLUMNS and 1 <= links <= 3
                and names == ["t", *(f"theta{i + 1}" for i in range(links))]):
            kind = "single" if links == 1 else f"nlink:{links}"
            raise csv_error(p, lineno, f"header {_short(body)} is a single or n-link "
                                       f"pendulum's record, not the Furuta rig's {expected}: "
                                       f"identify it with --rig {kind}")
        raise csv_error(p, lineno, f"header must be {expected}, got {_short(body)}")
    raise csv_error(p, None, f"no header line (expected {','.join(columns)})")


def _too_many_others(p: Path) -> CaptureFileError:
    return csv_error(p, None, f"more than {CSV_MAX_OTHER_LINES} blank or comment lines among "
                              "the rows (not a capture CSV?)")


def _parse_rows(fb: BinaryIO, first_lineno: int, p: Path, max_rows: int,
                columns: tuple[str, ...] = CSV_COLUMNS) -> np.ndarray:
    """Line-by-line parser: slow, but names the line of the first problem."""
    values = array("d")
    rows = other = 0
    width = len(columns)
    for lineno, raw in lines_of(fb, p, first_lineno):
        body = _body(raw, p, lineno)
        if not body:
            other += 1
            if other > CSV_MAX_OTHER_LINES:
                raise _too_many_others(p)
            continue
        fields = body.split(",")
        if len(fields) != width:
            raise csv_error(p, lineno, f"expected {width} columns ({','.join(columns)}), "
                                       f"got {len(fields)}")
        for name, text in zip(columns, fields):
            text = text.strip(_ASCII_WS)
            if not _NUMBER.fullmatch(text):
                raise csv_error(p, lineno, f"{name} is not a number: {_short(text)}")
            values.append(float(text))
        rows += 1
        if rows > max_rows:
            raise csv_error(p, None, f"more than {max_rows} data rows (the limit)")
    return np.frombuffer(values, dtype=np.float64).reshape(-1, width).copy()


def _line_of_row(fb: BinaryIO, first_lineno: int, row: int, p: Path) -> int | None:
    """Line number of data row `row` (0-based), counting as the parsers do."""
    for lineno, raw in lines_of(fb, p, first_lineno):
        if _body(raw, p, lineno):
            if row == 0:
                return lineno
            row -= 1
    return None  # only if np.loadtxt counted rows differently: report without a line


def _check_rows(data: np.ndarray, p: Path, line_of: Callable[[int], int | None],
                columns: tuple[str, ...] = CSV_COLUMNS, unit: str = "rad"
                ) -> tuple[np.ndarray, float]:
    """Validate parsed rows (angles in `unit`); return (sample_index from 0, sample rate)."""
    n = data.shape[0]
    width = len(columns)
    if n and data.shape[1] != width:
        raise csv_error(p, line_of(0), f"expected {width} columns ({','.join(columns)}), "
                                       f"got {data.shape[1]}")
    if n < CSV_MIN_ROWS:
        raise csv_error(p, None, f"only {n} data rows (at least {CSV_MIN_ROWS} required)")
    bad = ~np.isfinite(data)
    if bad.any():
        k, j = divmod(int(np.argmax(bad)), width)
        raise csv_error(p, line_of(k), f"{columns[j]} is {float(data[k, j])}")
    # before any arithmetic on them: 1e308 would overflow into numpy's warnings
    big = np.abs(data[:, 1:]) * ANGLE_UNITS[unit] > MAX_ANGLE_RAD
    if big.any():
        k, j = divmod(int(np.argmax(big)), width - 1)
        raise csv_error(p, line_of(k), f"{columns[j + 1]} is {float(data[k, j + 1]):g} {unit}: "
                                       f"more than {MAX_ANGLE_RAD:g} rad is no joint angle")
    t = data[:, 0]
    with np.errstate(all="ignore"):  # huge times overflow: caught by the span check
        dt = np.diff(t)
        if not bool(np.all(dt > 0)):
            k = int(np.argmax(~(dt > 0))) + 1
            now, before = float(t[k]), float(t[k - 1])
            if now == before:
                raise csv_error(p, line_of(k), f"duplicated time ({now!r})")
            raise csv_error(p, line_of(k), f"time not increasing ({now!r} after {before!r})")
        step = float(np.median(dt))
        span = float(t[-1] - t[0])
        span_steps = span / step
        ratio = dt / step
    if not (math.isfinite(span_steps) and span_steps < 2.0**53):
        raise csv_error(p, None, f"time span {span!r} s is too long for the median step "
                                 f"{step!r} s")
    whole = np.rint(ratio)
    off = (whole < 1) | (np.abs(ratio - whole) > GRID_TOLERANCE)
    if off.any():
        k = int(np.argmax(off))
        raise csv_error(p, line_of(k + 1),
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
    unit: str | None = None,
    zero: str | None = None,
) -> Capture:
    """Import t,theta0,theta1 (seconds; the arm's and the pendulum's angles) as a Capture
    with angles and no counts.

    The angles' unit (rad, deg) and the pendulum's zero (hanging, as seed 000 and hilrig's
    captures have it, or upright) come from the arguments, else from a comment above the
    header (`# unit=deg zero=upright`), else rad and hanging; angles that cannot be in
    that convention (identify.signal.angle_convention_problem) are refused with the fix.

    The rate comes from the time grid (median step, refined over the whole span);
    sample_index counts grid steps from 0, so gaps in time become index jumps. Lines
    starting with # are comments. Any problem is a CaptureFileError naming the line.
    A file larger than `limits` allow (`CaptureLimits.max_csv_bytes`) or `max_bytes` is
    refused before it is read, one holding more rows than `limits` allow (or `max_rows`)
    as soon as that many rows are read, a line longer than CSV_MAX_LINE_BYTES as soon as
    it is; `progress(fraction, message)` follows a long read.
    """
    if len(counts_per_rev) != 2 or min(counts_per_rev) < 1:
        raise ValueError(f"counts_per_rev must be two positive integers, got {counts_per_rev}")
    p = Path(path)
    limits = limits or CaptureLimits()
    with opened_csv(p, *_csv_limit(limits, len(CSV_COLUMNS), max_bytes)) as (fb, size):
        head = _head(fb, p)
        recorded = _recorded(p, head)
        unit, zero = _convention(p, unit or head.conventions.get("unit", "rad"),
                                 zero or head.conventions.get("zero", "hanging"))
        data, index, rate = _read_table(fb, size, p, CSV_COLUMNS, limits, max_bytes, max_rows,
                                        progress, unit)
    _check_convention(p, data[:, 1:3], CSV_COLUMNS[1:], rate, unit, zero, [False, True])
    from hilrig.identify.signal import furuta_angles

    angles = furuta_angles(data[:, 1:3], unit, zero)
    rig = rig if rig is not None else RigParams()
    try:
        source = SourceInfo(kind="replay", identity=f"csv:{p.name}", sample_rate_hz=rate,
                            counts_per_rev=counts_per_rev)
        return Capture(capture_id=p.stem, sample_index=index, counts=None,
                       imported_angles_rad=np.ascontiguousarray(angles),
                       sample_rate_hz=rate, counts_per_rev=counts_per_rev, rig=rig,
                       source=source, **recorded)
    except ValueError as exc:  # e.g. a rate that overflowed to inf
        raise CaptureFileError(f"{p}: {one_line_text(exc)}") from None


def write_joint_csv(path: str | os.PathLike[str], t: np.ndarray, angles: np.ndarray, *,
                    note: str = "", overwrite: bool = False,
                    created_utc: str | None = None) -> Path:
    """Write t,theta1[,...] (s, rad from upright, absolute link angles) atomically, with
    `note` and the conventions read_joint_csv takes in a comment line above the header,
    and the record's time where given (capture_csv_time reads it back); numbers as
    shortest round-trip decimals."""
    final = Path(path)
    check_suffix(final, (".csv",))
    a = np.asarray(angles, dtype=np.float64).reshape(len(t), -1)
    header = ",".join(["t"] + [f"theta{i + 1}" for i in range(a.shape[1])])
    with atomic_target(final, overwrite) as tmp:
        with open(tmp, "x", encoding="utf-8", newline="\n") as f:
            when = f" created_utc={created_utc}" if created_utc else ""
            f.write(f"# {note + ': ' if note else ''}unit=rad zero=upright{when}\n{header}\n")
            for lo in range(0, len(t), CHUNK_ROWS):  # bounded memory for long records
                rows = zip(np.asarray(t[lo:lo + CHUNK_ROWS]).tolist(),
                           a[lo:lo + CHUNK_ROWS].tolist(), strict=True)
                f.write("".join(",".join(map(repr, [tt, *row])) + "\n" for tt, row in rows))
    return final


def _read_table(fb: BinaryIO, size: int, p: Path, columns: tuple[str, ...],
                limits: CaptureLimits, max_bytes: int, max_rows: int | None,
                progress: Progress | None, unit: str = "rad"
                ) -> tuple[np.ndarray, np.ndarray, float]:
    """(rows, sample_index, rate) of an open CSV whose header is `columns`, within the
    limits; angles in `unit`."""
    header_line = _read_header(fb, p, columns)
    _check_csv_size(p, size, limits, len(columns), max_bytes)
    data_offset = fb.tell()
    rows_allowed = max_rows if max_rows is not None else limits.max_samples
    data = _load_blocks(fb, p, header_line + 1, size, rows_allowed, progress)
    if data is None:  # not plain numbers: the line parser names the first bad line
        fb.seek(data_offset)
        data = _parse_rows(fb, header_line + 1, p, rows_allowed, columns)
    if data.shape[0] > rows_allowed:
        if max_rows is not None:
            raise csv_error(p, None, f"more than {max_rows} data rows (the limit)")
        limits.check_samples(p, data.shape[0])

    def line_of(row: int) -> int | None:
        fb.seek(data_offset)
        return _line_of_row(fb, header_line + 1, row, p)

    index, rate = _check_rows(data, p, line_of, columns, unit)
    limits.check_rate(p, rate)
    limits.check_duration(p, float(data[-1, 0] - data[0, 0]))
    return data, index, rate


def _csv_limit(limits: CaptureLimits, columns: int, max_bytes: int) -> tuple[int, str]:
    """The size limit of a CSV of `columns` columns, and whence it comes."""
    derived = limits.max_csv_bytes(columns)
    if derived >= max_bytes:
        return max_bytes, "a longer capture is kept as HDF5"
    return derived, (f"{limits.max_samples} rows of {columns} numbers of at most "
                     f"{CSV_NUMBER_BYTES} bytes, the longest capture the settings allow; raise "
                     "trigger.max_duration_s or sample_rate_hz to read it")


def _check_csv_size(p: Path, size: int, limits: CaptureLimits, columns: int,
                    max_bytes: int) -> None:
    check_size(p, size, *_csv_limit(limits, columns, max_bytes))


def _load_blocks(fb: BinaryIO, p: Path, first_lineno: int, size: int, rows_allowed: int,
                 progress: Progress | None) -> np.ndarray | None:
    """The data rows by np.loadtxt, a block of lines at a time; None if a block is not
    plain numbers. Stops once more than `rows_allowed` rows are read."""
    chunks: list[np.ndarray] = []
    rows = other = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # loadtxt warns on a block of comments only
        for lines in data_blocks(fb, p, first_lineno):
            try:
                text = [line.decode("utf-8") for line in lines]
                chunk = np.loadtxt(text, delimiter=",", comments="#", dtype=np.float64,
                                   ndmin=2)
            except ValueError:  # includes UnicodeDecodeError
                return None
            if chunk.size:
                if chunks and chunk.shape[1] != chunks[0].shape[1]:
                    return None
                chunks.append(chunk)
                rows += chunk.shape[0]
            other += len(lines) - (chunk.shape[0] if chunk.size else 0)
            if other > CSV_MAX_OTHER_LINES:
                raise _too_many_others(p)
            if progress is not None:
                progress(fb.tell() / max(size, 1), f"{rows} rows")
            if rows > rows_allowed:
                break
    if not chunks:
        return np.zeros((0, 1))
    return np.concatenate(chunks) if len(chunks) > 1 else chunks[0]


# -- records of the chain rig kinds: t,theta1[,theta2[,theta3]] -----------------------------
@dataclass(frozen=True)
class JointTable:
    """A record of 1-3 joints: times (s), angles (rad from the upward vertical, as seed
    002's delta_i: absolute, 0 upright, pi hanging), grid index and rate."""

    path: Path
    t: np.ndarray
    angles: np.ndarray
    sample_index: np.ndarray
    rate_hz: float


#: the widest record: t and three joints
_JOINT_MAX_COLUMNS = 4


def _joint_header(fb: BinaryIO, p: Path) -> tuple[str, ...]:
    """The header's columns (the first line that is neither blank nor a comment)."""
    for lineno, raw in lines_of(fb, p, 1, head=True):
        body = _body(raw, p, lineno)
        if body:
            return tuple(c.strip(_ASCII_WS) for c in body.split(","))
    raise csv_error(p, None, "no header line (expected t,theta1[,theta2[,theta3]])")


def read_joint_csv(path: str | os.PathLike[str], *, unit: str | None = None,
                   zero: str | None = None, limits: CaptureLimits | None = None,
                   progress: Progress | None = None) -> JointTable:
    """Import t,theta1[,theta2[,theta3]]: absolute link angles, one column per joint.

    The angle unit (rad, deg) and zero (upright, hanging) come from the arguments, else
    from a comment above the header (`# unit=deg zero=hanging`), else rad and upright.
    Bounded as read_capture_csv is, before the header is read.
    """
    p = Path(path)
    limits = limits or CaptureLimits()
    with opened_csv(p, *_csv_limit(limits, _JOINT_MAX_COLUMNS, CSV_MAX_BYTES)) as (fb, size):
        head = _head(fb, p)
        names = _joint_header(fb, p)
        joints = len(names) - 1
        expected = ("t",) + tuple(f"theta{i + 1}" for i in range(max(joints, 1)))
        if not 1 <= joints <= 3 or names != expected:
            raise csv_error(p, None, f"header must be t,theta1[,theta2[,theta3]], got "
                                     f"{_short(','.join(names))}")
        unit, zero = _convention(p, unit or head.conventions.get("unit", "rad"),
                                 zero or head.conventions.get("zero", "upright"))
        fb.seek(0)
        data, index, rate = _read_table(fb, size, p, names, limits, CSV_MAX_BYTES, None,
                                        progress, unit)
    _check_convention(p, data[:, 1:], names[1:], rate, unit, zero)
    from hilrig.identify.signal import chain_angles

    angles = chain_angles(data[:, 1:], unit, zero)
    return JointTable(path=p, t=data[:, 0].copy(), angles=np.ascontiguousarray(angles),
                      sample_index=index, rate_hz=rate)
