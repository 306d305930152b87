"""Capture files: one free-decay capture as HDF5 (the native format) or CSV (exchange).

HDF5 layout, format "hilrig-capture" version 1 (all at the root of the file):

    counts        int32 (n, 2)   encoder counts, columns arm, pendulum
    angles_rad    float64 (n, 2) only for captures imported from angles (then no counts)
    sample_index  int64 (n,)     device sample counter; a step > 1 marks lost samples
    attributes    format, format_version, capture_id, sample_rate_hz, counts_per_rev,
                  software_version, created_utc, rig_json, source_json, trigger_json

Angles of a counts capture are counts * 2 pi / counts_per_rev and are never stored.
Datasets are chunked per column (64 Ki rows), byte-shuffled, gzip level 4 and
Fletcher-32 checksummed: smooth counts compress ~15x (35 s at 10 kHz: 2.8 MB -> 0.18 MB)
and gzip, unlike lzf, is readable by every HDF5 tool.

CSV has a header `t,theta0,theta1` (seconds, radians) and is read with np.loadtxt; when
that fails a line-by-line parser takes over to name the offending line.

Every file is written to a hidden temporary name in the target directory, fsynced and
then renamed (hard-linked when not overwriting, so an existing file is never replaced),
so a crash never leaves a partial file under the final name. A power loss can leave a
stale `.<name>.partial-*` behind; it is never mistaken for a capture.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import secrets
import warnings
from array import array
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, BinaryIO

import h5py
import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from drivers import SourceInfo
from identify import RigParams

from ._version import SOFTWARE_VERSION
from ._errors import first_error

FORMAT_NAME = "hilrig-capture"
FORMAT_VERSION = 1
CSV_COLUMNS: tuple[str, str, str] = ("t", "theta0", "theta1")
H5_SUFFIXES = (".h5", ".hdf5")
CSV_MIN_ROWS = 10
CSV_MAX_BYTES = 2_000_000_000
CSV_MAX_ROWS = 50_000_000
#: A CSV time step must lie within this fraction of the median step of a whole multiple of it.
GRID_TOLERANCE = 0.01

_CHUNK_ROWS = 65_536
_GZIP_LEVEL = 4  # level 6/9 save <10 % more for 30-60 % more write time
_ASCII_WS = " \t\r\n\f\v"
# Decimal numbers, inf and nan as np.loadtxt reads them; ASCII only (float() would take
# '1_0' and full-width digits, which loadtxt rejects).
_NUMBER = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                     re.ASCII | re.IGNORECASE)
__all__ = [
    "CSV_COLUMNS", "FORMAT_NAME", "FORMAT_VERSION", "Capture", "CaptureFileError", "TriggerInfo",
    "read_capture", "read_capture_csv", "read_capture_h5", "write_capture_csv",
    "write_capture_h5", "write_text_atomic",
]

_REQUIRED_ATTRS = ("capture_id", "sample_rate_hz", "counts_per_rev", "software_version",
                   "created_utc", "rig_json", "source_json", "trigger_json")


class CaptureFileError(ValueError):
    """A capture file problem, with a one-line message naming the file (and line)."""


class TriggerInfo(BaseModel):
    """How the trigger cut the capture out of the stream (device sample indices).

    All fields are optional: captures imported from CSV have none of them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    trigger_index: int | None = None  # sample at which motion crossed the threshold
    onset_index: int | None = None  # first sample off the rest band
    release_estimate: float | None = None  # fitted release moment (fractional sample index)
    start_index: int | None = None  # first sample kept (pre-trigger history included)
    end_index: int | None = None  # one past the last sample kept
    end_reason: str | None = None  # "settled", "max_duration", ...
    started_utc: str | None = None  # ISO 8601 wall-clock time of the trigger


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True, kw_only=True, eq=False)
class Capture:
    """One free-decay capture: either encoder counts or (CSV imports) angles, per sample.

    Construct with keywords. Exactly one of `counts` and `imported_angles_rad` is given;
    read angles through `angles_rad` whichever it is. Arrays are validated and
    normalised (sample_index to int64) but not copied when already right.
    """

    capture_id: str
    sample_index: np.ndarray  # int64 (n,), strictly increasing device sample counter
    counts: np.ndarray | None  # int32 (n, 2): arm, pendulum; None for angle imports
    sample_rate_hz: float
    counts_per_rev: tuple[int, int]
    rig: RigParams
    source: SourceInfo
    trigger: TriggerInfo = field(default_factory=TriggerInfo)
    software_version: str = SOFTWARE_VERSION
    created_utc: str = field(default_factory=_utc_now)
    imported_angles_rad: np.ndarray | None = None  # float64 (n, 2), only without counts

    def __post_init__(self) -> None:
        si = np.asarray(self.sample_index)
        # can_cast: any integer type that fits int64 losslessly (not uint64).
        if (si.ndim != 1 or si.dtype.kind not in "iu" or not np.can_cast(si.dtype, np.int64)
                or si.shape[0] < 1):
            raise ValueError(f"sample_index must be a non-empty 1-D integer array, got "
                             f"{si.dtype} {si.shape}")
        si = si.astype(np.int64, copy=False)
        if si.shape[0] > 1 and not bool(np.all(np.diff(si) > 0)):
            k = int(np.argmax(np.diff(si) <= 0)) + 1
            raise ValueError(f"sample_index must increase strictly (row {k}: "
                             f"{si[k]} after {si[k - 1]})")
        object.__setattr__(self, "sample_index", si)
        n = si.shape[0]
        if (self.counts is None) == (self.imported_angles_rad is None):
            raise ValueError("exactly one of counts and imported_angles_rad must be given")
        if self.counts is not None:
            c = self.counts
            if not isinstance(c, np.ndarray) or c.dtype != np.int32 or c.shape != (n, 2):
                raise ValueError(f"counts must be int32 ({n}, 2), got "
                                 f"{getattr(c, 'dtype', type(c))} {getattr(c, 'shape', '')}")
        else:
            a = self.imported_angles_rad
            if not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.shape != (n, 2):
                raise ValueError(f"imported_angles_rad must be float64 ({n}, 2), got "
                                 f"{getattr(a, 'dtype', type(a))} {getattr(a, 'shape', '')}")
            if not bool(np.all(np.isfinite(a))):
                raise ValueError("imported_angles_rad must be finite")
        rate = float(self.sample_rate_hz)
        if not (math.isfinite(rate) and rate > 0):
            raise ValueError(f"sample_rate_hz must be finite and > 0, got {self.sample_rate_hz}")
        object.__setattr__(self, "sample_rate_hz", rate)
        cpr = tuple(int(x) for x in self.counts_per_rev)
        if len(cpr) != 2 or min(cpr) < 1:
            raise ValueError(f"counts_per_rev must be two positive integers, got "
                             f"{self.counts_per_rev}")
        object.__setattr__(self, "counts_per_rev", cpr)

    def __len__(self) -> int:
        return int(self.sample_index.shape[0])

    @property
    def angles_rad(self) -> np.ndarray:
        """Joint angles float64 (n, 2), radians. Computed anew from counts on each call."""
        if self.counts is None:
            assert self.imported_angles_rad is not None  # guaranteed by __post_init__
            return self.imported_angles_rad
        scale = np.array([2.0 * math.pi / c for c in self.counts_per_rev])
        return self.counts * scale

    def times(self) -> np.ndarray:
        """Seconds since the first sample, from sample_index: lost samples show as jumps."""
        return (self.sample_index - self.sample_index[0]) / self.sample_rate_hz

    def gaps(self) -> list[tuple[int, int]]:
        """Lost samples as (first missing sample index, number missing), in order."""
        step = np.diff(self.sample_index)
        at = np.flatnonzero(step > 1)
        return [(int(self.sample_index[k]) + 1, int(step[k]) - 1) for k in at]

    @property
    def duration_s(self) -> float:
        """Time from the first to the last sample (350,001 samples at 10 kHz: 35.0 s)."""
        return float(self.sample_index[-1] - self.sample_index[0]) / self.sample_rate_hz


# ---------------------------------------------------------------------------- writing


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
def _atomic_target(final: Path, overwrite: bool) -> Iterator[Path]:
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


def _check_suffix(path: Path, allowed: tuple[str, ...]) -> None:
    if path.suffix.lower() not in allowed:
        raise CaptureFileError(f"{path}: file name must end in {' or '.join(allowed)} "
                               f"so that read_capture can read it back")


def _create_column_chunked(group: h5py.Group, name: str, data: np.ndarray) -> h5py.Dataset:
    # Per-column chunks keep each joint's smooth signal contiguous, which is what lets
    # shuffle + gzip compress it (15x here versus 5.5x for row-interleaved chunks).
    rows = min(data.shape[0], _CHUNK_ROWS)
    chunks = (rows, 1) if data.ndim == 2 else (rows,)
    return group.create_dataset(name, data=data, chunks=chunks, compression="gzip",
                                compression_opts=_GZIP_LEVEL, shuffle=True, fletcher32=True)


def write_capture_h5(path: str | os.PathLike[str], capture: Capture, *,
                     overwrite: bool = False) -> Path:
    """Write `capture` to an HDF5 file atomically; return the final path.

    Raises CaptureFileError if the file exists (unless overwrite) or the name does not
    end in .h5/.hdf5; I/O errors propagate. No partial file is ever left behind.
    """
    final = Path(path)
    _check_suffix(final, H5_SUFFIXES)
    with _atomic_target(final, overwrite) as tmp:
        with h5py.File(tmp, "x") as f:
            f.attrs["format"] = FORMAT_NAME
            f.attrs["format_version"] = FORMAT_VERSION
            f.attrs["capture_id"] = capture.capture_id
            f.attrs["sample_rate_hz"] = capture.sample_rate_hz
            f.attrs["counts_per_rev"] = np.array(capture.counts_per_rev, dtype=np.int64)
            f.attrs["software_version"] = capture.software_version
            f.attrs["created_utc"] = capture.created_utc
            f.attrs["rig_json"] = capture.rig.model_dump_json()
            f.attrs["source_json"] = capture.source.model_dump_json()
            f.attrs["trigger_json"] = capture.trigger.model_dump_json()
            if capture.counts is not None:
                ds = _create_column_chunked(f, "counts", capture.counts)
                ds.attrs["columns"] = "arm,pendulum"
                ds.attrs["note"] = "angle_rad = counts * 2 pi / counts_per_rev"
            else:
                assert capture.imported_angles_rad is not None
                ds = _create_column_chunked(f, "angles_rad", capture.imported_angles_rad)
                ds.attrs["columns"] = "arm,pendulum"
            ds = _create_column_chunked(f, "sample_index", capture.sample_index)
            ds.attrs["note"] = "device sample counter; a step > 1 marks lost samples"
    return final


def write_text_atomic(path: str | os.PathLike[str], text: str, *,
                      overwrite: bool = False) -> Path:
    """Write a small text file (a result's JSON) with the same never-partial guarantee."""
    final = Path(path)
    with _atomic_target(final, overwrite) as tmp:
        with open(tmp, "x", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return final


def write_capture_csv(path: str | os.PathLike[str], capture: Capture, *,
                      overwrite: bool = False) -> Path:
    """Export t,theta0,theta1 (t from the first sample, so gaps show) atomically.

    Numbers are written as shortest round-trip decimals: re-reading gives the very same
    float64 angles.
    """
    final = Path(path)
    _check_suffix(final, (".csv",))
    t = capture.times()
    angles = capture.angles_rad
    meta = (f"# hilrig capture export: capture_id={json.dumps(capture.capture_id)} "
            f"sample_rate_hz={capture.sample_rate_hz!r} "
            f"counts_per_rev={capture.counts_per_rev[0]},{capture.counts_per_rev[1]} "
            f"software_version={json.dumps(capture.software_version)}\n")
    with _atomic_target(final, overwrite) as tmp:
        with open(tmp, "x", encoding="utf-8", newline="\n") as f:
            f.write(meta)
            f.write(",".join(CSV_COLUMNS) + "\n")
            for lo in range(0, len(t), _CHUNK_ROWS):  # bounded memory for long captures
                hi = lo + _CHUNK_ROWS
                rows = zip(t[lo:hi].tolist(), angles[lo:hi, 0].tolist(),
                           angles[lo:hi, 1].tolist())
                f.write("".join(f"{a!r},{b!r},{c!r}\n" for a, b, c in rows))
    return final


# ---------------------------------------------------------------------------- reading


def read_capture(path: str | os.PathLike[str]) -> Capture:
    """Read a capture file, HDF5 (.h5, .hdf5) or CSV (.csv, with default rig)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in H5_SUFFIXES:
        return read_capture_h5(p)
    if suffix == ".csv":
        return read_capture_csv(p)
    raise CaptureFileError(f"{p}: unknown capture file type {suffix or '(no suffix)'!r} "
                           f"(expected .h5, .hdf5 or .csv)")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _pydantic_msg(exc: ValidationError) -> str:
    return first_error(exc, "(top level)")


def read_capture_h5(path: str | os.PathLike[str]) -> Capture:
    """Read and validate an HDF5 capture; any problem is a CaptureFileError."""
    p = Path(path)
    try:
        with h5py.File(p, "r") as f:
            return _capture_from_h5(f, p)
    except CaptureFileError:
        raise
    except FileNotFoundError:
        raise CaptureFileError(f"{p}: file not found") from None
    except (OSError, KeyError, RuntimeError, TypeError, ValueError) as exc:
        # h5py reports truncated or corrupt files with these; keep it to one line.
        raise CaptureFileError(f"{p}: unreadable HDF5 capture ({_one_line(exc)})") from None


def _attr_str(f: h5py.File, name: str, p: Path) -> str:
    value = f.attrs[name]
    if isinstance(value, bytes | np.bytes_):
        value = value.decode("utf-8")
    if not isinstance(value, str):
        raise CaptureFileError(f"{p}: attribute {name} must be a string, "
                               f"got {type(value).__name__}")
    return value


def _dataset(f: h5py.File, name: str, kind: str, itemsize: int, shape: tuple[int | None, ...],
             p: Path) -> np.ndarray:
    obj = f.get(name)
    if not isinstance(obj, h5py.Dataset):
        raise CaptureFileError(f"{p}: missing dataset {name}")
    want = f"{'int' if kind == 'i' else 'float'}{itemsize * 8}"
    if obj.dtype.kind != kind or obj.dtype.itemsize != itemsize:
        raise CaptureFileError(f"{p}: dataset {name} must be {want}, got {obj.dtype}")
    if len(obj.shape) != len(shape) or any(w is not None and w != s
                                           for w, s in zip(shape, obj.shape)):
        want_shape = ", ".join("n" if w is None else str(w) for w in shape)
        raise CaptureFileError(f"{p}: dataset {name} has shape {obj.shape}, expected "
                               f"({want_shape}{',' if len(shape) == 1 else ''})")
    return np.asarray(obj[()]).astype(obj.dtype.newbyteorder("="), copy=False)


def _capture_from_h5(f: h5py.File, p: Path) -> Capture:
    if "format" not in f.attrs:
        raise CaptureFileError(f"{p}: not a hilrig capture (missing attribute format)")
    fmt = f.attrs["format"]
    fmt = fmt.decode("utf-8", "replace") if isinstance(fmt, bytes | np.bytes_) else fmt
    if not isinstance(fmt, str) or fmt != FORMAT_NAME:
        raise CaptureFileError(f"{p}: not a hilrig capture (format is {fmt!r})")
    if "format_version" not in f.attrs:
        raise CaptureFileError(f"{p}: missing attribute format_version")
    version = f.attrs["format_version"]
    version = version.item() if isinstance(version, np.generic) else version
    if not isinstance(version, int) or version != FORMAT_VERSION:
        raise CaptureFileError(f"{p}: unsupported format_version {version!r} "
                               f"(this software reads {FORMAT_VERSION})")
    for name in _REQUIRED_ATTRS:
        if name not in f.attrs:
            raise CaptureFileError(f"{p}: missing attribute {name}")
    has_counts, has_angles = "counts" in f, "angles_rad" in f
    if has_counts and has_angles:
        raise CaptureFileError(f"{p}: holds both counts and angles_rad (expected one)")
    counts = angles = None
    if has_angles:
        angles = _dataset(f, "angles_rad", "f", 8, (None, 2), p)
    else:
        counts = _dataset(f, "counts", "i", 4, (None, 2), p)
    si = _dataset(f, "sample_index", "i", 8, (None,), p)
    n = (counts if counts is not None else angles).shape[0]  # type: ignore[union-attr]
    if si.shape[0] != n:
        raise CaptureFileError(f"{p}: sample_index has {si.shape[0]} rows, data has {n}")
    cpr = np.asarray(f.attrs["counts_per_rev"])
    if cpr.shape != (2,) or cpr.dtype.kind not in "iu":
        raise CaptureFileError(f"{p}: attribute counts_per_rev must be two integers, got {cpr!r}")
    models: dict[str, Any] = {}
    for name, model in (("rig_json", RigParams), ("source_json", SourceInfo),
                        ("trigger_json", TriggerInfo)):
        try:
            models[name] = model.model_validate_json(_attr_str(f, name, p))
        except ValidationError as exc:
            raise CaptureFileError(f"{p}: attribute {name}: {_pydantic_msg(exc)}") from None
    try:
        return Capture(
            capture_id=_attr_str(f, "capture_id", p),
            sample_index=si,
            counts=counts,
            imported_angles_rad=angles,
            sample_rate_hz=float(f.attrs["sample_rate_hz"]),
            counts_per_rev=(int(cpr[0]), int(cpr[1])),
            rig=models["rig_json"],
            source=models["source_json"],
            trigger=models["trigger_json"],
            software_version=_attr_str(f, "software_version", p),
            created_utc=_attr_str(f, "created_utc", p),
        )
    except ValueError as exc:
        raise CaptureFileError(f"{p}: {_one_line(exc)}") from None


# -------------------------------------------------------------------------------- CSV


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


def _read_header(fb: BinaryIO, p: Path) -> int:
    """Check the header (first non-comment line); return its line number."""
    for lineno, raw in enumerate(fb, 1):
        body = _body(raw, p, lineno)
        if not body:
            continue
        names = [c.strip(_ASCII_WS) for c in body.split(",")]
        if tuple(names) == CSV_COLUMNS:
            return lineno
        expected = ",".join(CSV_COLUMNS)
        if 0 < len(names) < 3 and tuple(names) == CSV_COLUMNS[:len(names)]:
            raise _csv_error(p, lineno, f"header has {len(names)} column(s) ({','.join(names)}); "
                                        f"both joints are required: {expected}")
        if _NUMBER.fullmatch(names[0]):
            raise _csv_error(p, lineno, f"missing header {expected} (found data {_short(body)})")
        raise _csv_error(p, lineno, f"header must be {expected}, got {_short(body)}")
    raise _csv_error(p, None, f"no header line (expected {','.join(CSV_COLUMNS)})")


def _parse_rows(fb: BinaryIO, first_lineno: int, p: Path, max_rows: int) -> np.ndarray:
    """Line-by-line parser: slow, but names the line of the first problem."""
    values = array("d")
    rows = 0
    for lineno, raw in enumerate(fb, first_lineno):
        body = _body(raw, p, lineno)
        if not body:
            continue
        fields = body.split(",")
        if len(fields) != 3:
            raise _csv_error(p, lineno, f"expected 3 columns ({','.join(CSV_COLUMNS)}), "
                                        f"got {len(fields)}")
        for name, text in zip(CSV_COLUMNS, fields):
            text = text.strip(_ASCII_WS)
            if not _NUMBER.fullmatch(text):
                raise _csv_error(p, lineno, f"{name} is not a number: {_short(text)}")
            values.append(float(text))
        rows += 1
        if rows > max_rows:
            raise _csv_error(p, None, f"more than {max_rows} data rows (the limit)")
    return np.frombuffer(values, dtype=np.float64).reshape(-1, 3).copy()


def _line_of_row(fb: BinaryIO, first_lineno: int, row: int, p: Path) -> int | None:
    """Line number of data row `row` (0-based), counting as the parsers do."""
    for lineno, raw in enumerate(fb, first_lineno):
        if _body(raw, p, lineno):
            if row == 0:
                return lineno
            row -= 1
    return None  # only if np.loadtxt counted rows differently: report without a line


def _check_rows(data: np.ndarray, p: Path, line_of: Callable[[int], int | None]
                ) -> tuple[np.ndarray, float]:
    """Validate parsed rows; return (sample_index from 0, sample rate)."""
    n = data.shape[0]
    if n and data.shape[1] != 3:
        raise _csv_error(p, line_of(0), f"expected 3 columns ({','.join(CSV_COLUMNS)}), "
                                        f"got {data.shape[1]}")
    if n < CSV_MIN_ROWS:
        raise _csv_error(p, None, f"only {n} data rows (at least {CSV_MIN_ROWS} required)")
    bad = ~np.isfinite(data)
    if bad.any():
        k, j = divmod(int(np.argmax(bad)), 3)
        raise _csv_error(p, line_of(k), f"{CSV_COLUMNS[j]} is {float(data[k, j])}")
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
    max_rows: int = CSV_MAX_ROWS,
) -> Capture:
    """Import t,theta0,theta1 (seconds, radians) as a Capture with angles and no counts.

    The rate comes from the time grid (median step, refined over the whole span);
    sample_index counts grid steps from 0, so gaps in time become index jumps. Lines
    starting with # are comments. Any problem is a CaptureFileError naming the line.
    """
    p = Path(path)
    if len(counts_per_rev) != 2 or min(counts_per_rev) < 1:
        raise ValueError(f"counts_per_rev must be two positive integers, got {counts_per_rev}")
    try:
        size = p.stat().st_size
        fb = open(p, "rb")
    except FileNotFoundError:
        raise CaptureFileError(f"{p}: file not found") from None
    except OSError as exc:
        raise CaptureFileError(f"{p}: cannot open ({exc.strerror or _one_line(exc)})") from None
    with fb:
        if size > max_bytes:
            raise _csv_error(p, None, f"file is {size} bytes, more than the limit of "
                                      f"{max_bytes}")
        header_line = _read_header(fb, p)
        data_offset = fb.tell()
        data: np.ndarray | None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # loadtxt warns on an empty body
                text = io.TextIOWrapper(fb, encoding="utf-8", newline="\n")
                try:
                    data = np.loadtxt(text, delimiter=",", comments="#", dtype=np.float64,
                                      ndmin=2, max_rows=max_rows + 1)
                finally:
                    text.detach()  # leave fb open for the slow paths
        except ValueError:  # includes UnicodeDecodeError
            data = None
        if data is None:
            fb.seek(data_offset)
            data = _parse_rows(fb, header_line + 1, p, max_rows)
        elif data.shape[0] > max_rows:
            raise _csv_error(p, None, f"more than {max_rows} data rows (the limit)")

        def line_of(row: int) -> int | None:
            fb.seek(data_offset)
            return _line_of_row(fb, header_line + 1, row, p)

        index, rate = _check_rows(data, p, line_of)
    rig = rig if rig is not None else RigParams()
    try:
        source = SourceInfo(kind="replay", identity=f"csv:{p.name}", sample_rate_hz=rate,
                            counts_per_rev=counts_per_rev)
        return Capture(capture_id=p.stem, sample_index=index, counts=None,
                       imported_angles_rad=np.ascontiguousarray(data[:, 1:3]),
                       sample_rate_hz=rate, counts_per_rev=counts_per_rev, rig=rig,
                       source=source)
    except ValueError as exc:  # e.g. a rate that overflowed to inf
        raise CaptureFileError(f"{p}: {_one_line(exc)}") from None
