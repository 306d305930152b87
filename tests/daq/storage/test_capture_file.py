"""Capture files: what users rely on when they save, re-read, export and import captures."""

from __future__ import annotations

import math
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import h5py
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hilrig.daq.acquisition import Capture, TriggerInfo
from hilrig.daq.cli import main
from hilrig.daq.storage import (
    FORMAT_NAME,
    FORMAT_VERSION,
    CaptureFileError,
    CaptureLimits,
    capture_csv_time,
    read_capture,
    read_capture_csv,
    read_capture_h5,
    write_capture_csv,
    write_capture_h5,
)
from hilrig.drivers import SourceInfo
from hilrig.identify import RigParams

RATE = 10_000.0
CPR = (40_000, 40_000)


def make_capture(n: int = 3000, first: int = 1_000_000, gap: tuple[int, int] | None = (700, 3),
                 cpr: tuple[int, int] = CPR, rate: float = RATE) -> Capture:
    """A decaying swing of both joints; `gap` = (row before which samples are lost, count)."""
    index = first + np.arange(n, dtype=np.int64)
    if gap is not None:
        index[gap[0]:] += gap[1]
    t = (index - first) / rate
    decay = np.exp(-t / 2.0)
    counts = np.stack([np.rint(600 * decay * np.sin(2 * np.pi * 0.7 * t)),
                       np.rint(13_333 * decay * np.cos(2 * np.pi * 1.3 * t))],
                      axis=1).astype(np.int32)
    return Capture(
        capture_id="rig1-20250101T000000Z",
        sample_index=index,
        counts=counts,
        sample_rate_hz=rate,
        counts_per_rev=cpr,
        rig=RigParams(tilt_deg=12.5, m2=0.130),
        source=SourceInfo(kind="simulated", identity="sim:tilt=12.5deg", sample_rate_hz=rate,
                          counts_per_rev=cpr, firmware="fw-1.2", boot_id="b0"),
        trigger=TriggerInfo(trigger_index=first + 40, onset_index=first + 35,
                            start_index=first, end_index=int(index[-1]) + 1,
                            end_reason="settled", started_utc="2025-01-01T00:00:00.004+00:00"),
        software_version="9.9.9",
        created_utc="2025-01-01T00:00:01.000+00:00",
    )


def assert_same_capture(a: Capture, b: Capture) -> None:
    assert a.capture_id == b.capture_id
    assert np.array_equal(a.sample_index, b.sample_index)
    assert a.sample_index.dtype == b.sample_index.dtype == np.int64
    if a.counts is None:
        assert b.counts is None
    else:
        assert b.counts is not None and b.counts.dtype == np.int32
        assert np.array_equal(a.counts, b.counts)
    assert np.array_equal(a.angles_rad, b.angles_rad)
    assert a.sample_rate_hz == b.sample_rate_hz
    assert a.counts_per_rev == b.counts_per_rev
    assert a.rig == b.rig
    assert a.source == b.source
    assert a.trigger == b.trigger
    assert a.software_version == b.software_version
    assert a.created_utc == b.created_utc
    assert a.covariates == b.covariates


# --------------------------------------------------------------------------- Capture


def test_times_and_gaps_keep_lost_samples_visible() -> None:
    cap = Capture(capture_id="c", sample_index=np.array([10, 11, 12, 15, 16, 20]),
                  counts=np.zeros((6, 2), np.int32), sample_rate_hz=1000.0, counts_per_rev=CPR,
                  rig=RigParams(), source=make_capture().source)
    assert cap.sample_index.dtype == np.int64
    assert np.allclose(cap.times(), [0, 0.001, 0.002, 0.005, 0.006, 0.010], rtol=0, atol=1e-15)
    assert cap.gaps() == [(13, 2), (17, 3)]
    assert cap.duration_s == pytest.approx(0.010)
    assert len(cap) == 6


def test_no_gaps_and_35_s_duration() -> None:
    cap = make_capture(n=350_001, first=0, gap=None)
    assert cap.gaps() == []
    assert cap.duration_s == 35.0


def test_angles_are_counts_scaled_per_joint() -> None:
    cap = make_capture(n=10, gap=None, cpr=(40_000, 4_000))
    counts = np.array([[10_000, 1_000], [-20_000, 4_000]] + [[0, 0]] * 8, np.int32)
    cap = replace(cap, counts=counts)
    assert cap.angles_rad.dtype == np.float64
    assert np.allclose(cap.angles_rad[:2], [[math.pi / 2, math.pi / 2], [-math.pi, 2 * math.pi]],
                       rtol=1e-15)


@pytest.mark.parametrize("change, fragment", [
    ({"imported_angles_rad": np.zeros((3000, 2))}, "exactly one"),
    ({"counts": None}, "exactly one"),
    ({"counts": np.zeros((3000, 2), np.int64)}, "counts must be int32"),
    ({"counts": np.zeros((2999, 2), np.int32)}, "counts must be int32"),
    ({"sample_index": np.r_[np.arange(1500), np.arange(1499, 2999)]}, "increase strictly"),
    ({"sample_index": np.arange(3000, dtype=np.float64)}, "integer"),
    ({"sample_index": np.arange(3000, dtype=np.uint64)}, "integer"),
    ({"sample_rate_hz": 0.0}, "sample_rate_hz"),
    ({"sample_rate_hz": math.nan}, "sample_rate_hz"),
    ({"counts_per_rev": (40_000, 0)}, "counts_per_rev"),
    ({"covariates": {"Temperature": 20.0}}, "covariate name 'Temperature'"),
    ({"covariates": {"temperature_c": math.inf}}, "covariate temperature_c: inf is not"),
])
def test_capture_rejects_inconsistent_data(change: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        replace(make_capture(), **change)


# ----------------------------------------------------------------------- HDF5 round trip


def test_h5_round_trip_keeps_every_field(tmp_path: Path) -> None:
    cap = make_capture()
    out = write_capture_h5(tmp_path / "c.h5", cap)
    assert out == tmp_path / "c.h5"
    back = read_capture(out)
    assert_same_capture(cap, back)
    assert back.gaps() == [(1_000_700, 3)]
    assert sorted(os.listdir(tmp_path)) == ["c.h5"]  # no temporary left behind


def test_h5_round_trip_keeps_the_recorded_covariates(tmp_path: Path) -> None:
    cap = replace(make_capture(), covariates={"temperature_c": 23.5, "humidity_pct": 41})
    back = read_capture_h5(write_capture_h5(tmp_path / "c.h5", cap))
    assert back.covariates == {"temperature_c": 23.5, "humidity_pct": 41.0}
    plain = read_capture_h5(write_capture_h5(tmp_path / "p.h5", make_capture()))
    assert plain.covariates == {}  # none recorded: none read, as in files from before them


def test_h5_round_trip_of_an_imported_angle_capture(tmp_path: Path) -> None:
    src = make_capture()
    cap = replace(src, counts=None, imported_angles_rad=src.angles_rad + 1e-7)
    back = read_capture_h5(write_capture_h5(tmp_path / "a.hdf5", cap))
    assert_same_capture(cap, back)
    with h5py.File(tmp_path / "a.hdf5") as f:
        assert "counts" not in f and f["angles_rad"].dtype == np.float64


def test_h5_layout_is_self_describing_and_compact(tmp_path: Path) -> None:
    cap = make_capture()
    write_capture_h5(tmp_path / "c.h5", cap)
    with h5py.File(tmp_path / "c.h5") as f:
        assert f.attrs["format"] == FORMAT_NAME == "hilrig-capture"
        assert f.attrs["format_version"] == FORMAT_VERSION == 1
        assert RigParams.model_validate_json(f.attrs["rig_json"]) == cap.rig
        assert SourceInfo.model_validate_json(f.attrs["source_json"]) == cap.source
        assert list(f.attrs["counts_per_rev"]) == list(CPR)
        # the counts as read; time, joint and angle for other tools (CF conventions)
        assert set(f) == {"counts", "sample_index", "time", "joint", "angle"}
        counts = f["counts"]
        assert counts.dtype == np.int32 and counts.shape == (3000, 2)
        assert counts.compression == "gzip" and counts.shuffle and counts.fletcher32
        assert counts.chunks == (3000, 1)  # one joint per chunk
        assert f["sample_index"].dtype == np.int64


def _open_as_netcdf(path: Path):
    import warnings

    import xarray as xr
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # h5netcdf warns of dimensions it has to invent
        return xr.open_dataset(path, engine="h5netcdf")


@pytest.mark.parametrize("cpr", [CPR, (40_000, 4_096)], ids=["one resolution", "two"])
def test_xarray_opens_a_capture_with_named_dimensions_time_in_s_and_angles_in_rad(
        tmp_path: Path, cpr: tuple[int, int]) -> None:
    cap = make_capture(cpr=cpr)
    write_capture_h5(tmp_path / "c.h5", cap)
    with _open_as_netcdf(tmp_path / "c.h5") as ds:
        assert ds["angle"].dims == ("time", "joint") and ds["counts"].dims == ("time", "joint")
        assert list(ds["joint"].values) == ["arm", "pendulum"]
        assert ds["time"].attrs["units"] == "s" and ds["angle"].attrs["units"] == "rad"
        assert ds.attrs["Conventions"].startswith("CF-")
        np.testing.assert_allclose(ds["time"].values, cap.times(), rtol=0, atol=1e-12)
        np.testing.assert_allclose(ds["angle"].values, cap.angles_rad, rtol=1e-15, atol=0)
        assert np.array_equal(ds["counts"].values, cap.counts)  # the raw counts, kept
        assert ds["time"].values[-1] > ds["time"].values[-2]  # the lost samples: a jump
    assert np.array_equal(read_capture_h5(tmp_path / "c.h5").counts, cap.counts)


def test_a_capture_written_before_the_cf_dimensions_still_reads(tmp_path: Path) -> None:
    cap = make_capture()
    write_capture_h5(tmp_path / "new.h5", cap)
    with h5py.File(tmp_path / "new.h5") as new, h5py.File(tmp_path / "old.h5", "w") as old:
        for name, value in new.attrs.items():  # the first layout: two datasets, no dims
            if name not in ("Conventions", "title"):
                old.attrs[name] = value
        old["counts"] = new["counts"][()]
        old["sample_index"] = new["sample_index"][()]
    back = read_capture_h5(tmp_path / "old.h5")
    assert np.array_equal(back.counts, cap.counts) and back.gaps() == cap.gaps()


def test_realistic_size_35_s_at_10_khz(tmp_path: Path) -> None:
    cap = make_capture(n=350_001, first=5_000_000, gap=(123_456, 17))
    t0 = time.perf_counter()
    path = write_capture_h5(tmp_path / "big.h5", cap)
    write_s = time.perf_counter() - t0
    size = path.stat().st_size
    raw = cap.counts.nbytes + cap.sample_index.nbytes
    print(f"\n35 s capture: {size / 1e3:.0f} kB on disk ({raw / size:.1f}x smaller than "
          f"{raw / 1e6:.1f} MB raw), written in {write_s * 1e3:.0f} ms")
    assert size < raw / 2  # compression is on
    back = read_capture(path)
    assert np.array_equal(back.counts, cap.counts)
    assert back.gaps() == [(5_123_456, 17)]


# ----------------------------------------------------------------------- atomic writes


def test_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "c.h5"
    write_capture_h5(path, make_capture())
    other = replace(make_capture(), capture_id="second")
    with pytest.raises(CaptureFileError, match="already exists"):
        write_capture_h5(path, other)
    assert read_capture(path).capture_id == "rig1-20250101T000000Z"
    write_capture_h5(path, other, overwrite=True)
    assert read_capture(path).capture_id == "second"
    assert sorted(os.listdir(tmp_path)) == ["c.h5"]


@pytest.mark.fault(injected="storage: a crash while the capture file is built, and one "
                            "halfway through writing its bytes",
                   expected="no file under the final name, no partial left")
@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt])
def test_crash_mid_write_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        exc_type: type[BaseException]) -> None:
    real = h5py.Group.create_dataset
    seen: list[list[str]] = []

    def second_dataset_fails(self, name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if seen:
            raise exc_type("disk on fire")
        seen.append(os.listdir(tmp_path))
        return real(self, name, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(h5py.Group, "create_dataset", second_dataset_fails)
        with pytest.raises(exc_type, match="disk on fire"):
            write_capture_h5(tmp_path / "c.h5", make_capture())
    assert seen == [[]]  # the file is built in memory: nothing on disk yet
    assert os.listdir(tmp_path) == []

    import builtins

    import hilrig.daq.storage._hdf5 as hdf5

    class HalfWritten:
        def __init__(self, path: Path) -> None:
            self.file = builtins.open(path, "xb")

        def __enter__(self) -> HalfWritten:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()

        def write(self, data: bytes) -> int:
            self.file.write(data[: len(data) // 2])
            self.file.flush()
            seen.append(os.listdir(tmp_path))
            raise exc_type("disk on fire")

    monkeypatch.setattr(hdf5, "open", lambda path, mode: HalfWritten(path), raising=False)
    with pytest.raises(exc_type, match="disk on fire"):
        write_capture_h5(tmp_path / "c.h5", make_capture())
    assert len(seen[1]) == 1 and seen[1][0].startswith(".c.h5.partial-")  # it was there
    assert os.listdir(tmp_path) == []


def test_failed_rename_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.h5"
    write_capture_h5(path, make_capture())
    before = path.read_bytes()

    def no_replace(src: object, dst: object) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(OSError, match="rename failed"):
        write_capture_h5(path, replace(make_capture(), capture_id="x"),
                         overwrite=True)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["c.h5"]


def test_failed_link_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_link(src: object, dst: object) -> None:
        raise OSError("link failed")

    monkeypatch.setattr(os, "link", no_link)
    with pytest.raises(OSError, match="link failed"):
        write_capture_h5(tmp_path / "c.h5", make_capture())
    assert os.listdir(tmp_path) == []


def test_final_name_appears_only_for_a_complete_synced_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cap = make_capture()
    events: list[tuple[str, object]] = []
    real_fsync, real_link, real_replace = os.fsync, os.link, os.replace

    def spy_fsync(fd: int) -> None:
        st_ = os.fstat(fd)
        events.append(("fsync-dir" if stat.S_ISDIR(st_.st_mode) else "fsync-file", st_.st_ino))
        real_fsync(fd)

    def check_source(src: os.PathLike[str] | str) -> None:
        events.append(("rename", os.stat(src).st_ino))
        assert_same_capture(cap, read_capture_h5(src))  # complete before it gets the name

    def spy_link(src, dst):  # type: ignore[no-untyped-def]
        check_source(src)
        real_link(src, dst)

    def spy_replace(src, dst):  # type: ignore[no-untyped-def]
        check_source(src)
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "link", spy_link)
    monkeypatch.setattr(os, "replace", spy_replace)
    for overwrite in (False, True):
        events.clear()
        write_capture_h5(tmp_path / "c.h5", cap, overwrite=overwrite)
        kinds = [k for k, _ in events]
        assert kinds == ["fsync-file", "rename", "fsync-dir"]
        assert events[0][1] == events[1][1]  # the file synced is the file renamed
        assert events[2][1] == os.stat(tmp_path).st_ino
    assert os.listdir(tmp_path) == ["c.h5"]


def test_name_taken_during_the_write_is_not_clobbered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.h5"
    real = h5py.Group.create_dataset

    def someone_else_writes_first(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not path.exists():
            path.write_bytes(b"the other writer")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(h5py.Group, "create_dataset", someone_else_writes_first)
    with pytest.raises(CaptureFileError, match="already exists"):
        write_capture_h5(path, make_capture())
    assert path.read_bytes() == b"the other writer"
    assert os.listdir(tmp_path) == ["c.h5"]


def test_csv_export_is_atomic_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.csv"
    write_capture_csv(path, make_capture())
    before = path.read_bytes()

    def no_replace(src: object, dst: object) -> None:
        raise OSError("rename failed")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(OSError):
        write_capture_csv(path, make_capture(n=50), overwrite=True)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["c.csv"]
    with pytest.raises(CaptureFileError, match="already exists"):
        write_capture_csv(path, make_capture(n=50))


@pytest.mark.parametrize("writer, name", [
    (write_capture_h5, "c.csv"), (write_capture_h5, "c"), (write_capture_csv, "c.h5")])
def test_writers_insist_on_a_readable_suffix(tmp_path: Path, writer: Callable[..., Path],
                                             name: str) -> None:
    with pytest.raises(CaptureFileError, match="must end in"):
        writer(tmp_path / name, make_capture(n=20))
    assert os.listdir(tmp_path) == []


# ------------------------------------------------------------------ bad HDF5 files


@pytest.mark.fault(injected="bad input: a truncated HDF5 capture",
                   expected="one line naming the file, nothing crashed")
def test_truncated_h5_is_a_capture_file_error(tmp_path: Path) -> None:
    path = write_capture_h5(tmp_path / "c.h5", make_capture())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CaptureFileError, match=r"c\.h5: unreadable HDF5 capture"):
        read_capture(path)


@pytest.mark.fault(injected="bad input: flipped bits in a capture's counts",
                   expected="the checksum catches it: one line naming the file")
def test_corrupted_counts_are_detected(tmp_path: Path) -> None:
    path = write_capture_h5(tmp_path / "c.h5", make_capture())
    with h5py.File(path) as f:
        chunk = f["counts"].id.get_chunk_info(0)
    with open(path, "r+b") as fh:  # flip one byte inside the first counts chunk
        fh.seek(chunk.byte_offset + chunk.size // 2)
        b = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([b[0] ^ 0xFF]))
    with pytest.raises(CaptureFileError, match="unreadable HDF5 capture"):
        read_capture(path)


def _mutate(path: Path, how: str) -> None:
    with h5py.File(path, "r+") as f:
        if how == "no-format":
            del f.attrs["format"]
        elif how == "other-format":
            f.attrs["format"] = "something-else"
        elif how == "version-2":
            f.attrs["format_version"] = 2
        elif how == "float-counts":
            data = f["counts"][()]
            del f["counts"]
            f["counts"] = data.astype(np.float64)
        elif how == "one-joint":
            data = f["counts"][()]
            del f["counts"]
            f["counts"] = data[:, :1]
        elif how == "short-index":
            data = f["sample_index"][()]
            del f["sample_index"]
            f["sample_index"] = data[:-1]
        elif how == "int32-index":
            data = f["sample_index"][()]
            del f["sample_index"]
            f["sample_index"] = data.astype(np.int32)
        elif how == "no-counts":
            del f["counts"]
        elif how == "bad-rig":
            f.attrs["rig_json"] = '{"m1": -1}'
        elif how == "no-rig":
            del f.attrs["rig_json"]
        elif how == "bad-covariate":
            f.attrs["covariates_json"] = '{"temperature_c": "warm"}'
        elif how == "garbled-covariates":
            f.attrs["covariates_json"] = '{"temperature_c": '
        elif how == "unsorted-index":
            data = f["sample_index"][()]
            data[10], data[11] = data[11], data[10]
            f["sample_index"][...] = data


@pytest.mark.parametrize("how, message", [
    ("no-format", r"c\.h5: not a hilrig capture \(missing attribute format\)$"),
    ("other-format", r"not a hilrig capture \(format is 'something-else'\)"),
    ("version-2", r"unsupported format_version 2 \(this software reads 1\)"),
    ("float-counts", r"dataset counts must be int32, got float64"),
    ("one-joint", r"dataset counts has shape \(3000, 1\), expected \(n, 2\)"),
    ("short-index", r"sample_index has 2999 rows, data has 3000"),
    ("int32-index", r"dataset sample_index must be int64, got int32"),
    ("no-counts", r"missing dataset counts"),
    ("bad-rig", r"attribute rig_json: m1: Input should be greater than 0"),
    ("no-rig", r"missing attribute rig_json"),
    ("bad-covariate", r"attribute covariates_json: covariate temperature_c: 'warm' is not a "),
    ("garbled-covariates", r"attribute covariates_json: Expecting value"),
    ("unsorted-index", r"sample_index must increase strictly \(row 11"),
])
def test_invalid_h5_content_is_named(tmp_path: Path, how: str, message: str) -> None:
    path = write_capture_h5(tmp_path / "c.h5", make_capture())
    _mutate(path, how)
    with pytest.raises(CaptureFileError, match=message) as info:
        read_capture(path)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("content", [b"", b"not hdf5 at all\n" * 100, b"\x89HDF\r\n\x1a\n"])
def test_non_hdf5_bytes_are_a_capture_file_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "junk.h5"
    path.write_bytes(content)
    with pytest.raises(CaptureFileError, match=r"junk\.h5: unreadable HDF5 capture"):
        read_capture(path)


def test_missing_files_and_unknown_types(tmp_path: Path) -> None:
    for name in ("none.h5", "none.csv"):
        with pytest.raises(CaptureFileError, match=rf"{name}: file not found"):
            read_capture(tmp_path / name)
    (tmp_path / "c.txt").write_text("t,theta0,theta1\n")
    with pytest.raises(CaptureFileError, match="unknown capture file type '.txt'"):
        read_capture(tmp_path / "c.txt")


# ------------------------------------------------------------------------------ CSV


def test_csv_export_import_round_trip(tmp_path: Path) -> None:
    cap = make_capture()
    path = write_capture_csv(tmp_path / "run 7.csv", cap)
    back = read_capture(path)
    assert back.counts is None
    assert np.allclose(back.angles_rad, cap.angles_rad, rtol=1e-12, atol=0)
    # Indices restart at 0 (t is relative) but every jump is kept.
    assert np.array_equal(back.sample_index, cap.sample_index - cap.sample_index[0])
    assert back.gaps() == [(700, 3)]
    assert back.sample_rate_hz == pytest.approx(RATE, rel=1e-9)
    assert back.duration_s == pytest.approx(cap.duration_s, rel=1e-12)
    assert back.source.kind == "replay" and back.source.identity == "csv:run 7.csv"
    assert back.counts_per_rev == CPR and back.rig == RigParams()
    assert back.capture_id == "run 7"


def test_csv_export_keeps_the_capture_time_and_its_covariates(tmp_path: Path) -> None:
    cap = replace(make_capture(), created_utc="2026-11-28T02:15:00.250Z",
                  covariates={"temperature_c": 23.5, "humidity_pct": 41})
    path = write_capture_csv(tmp_path / "c.csv", cap)
    back = read_capture(path)
    assert back.created_utc == "2026-11-28T02:15:00.250Z"
    assert back.covariates == {"temperature_c": 23.5, "humidity_pct": 41.0}
    assert capture_csv_time(path) == "2026-11-28T02:15:00.250Z"
    plain = tmp_path / "lab.csv"  # a CSV from elsewhere: its time is unknown
    plain.write_text(_csv(_rows()))
    assert capture_csv_time(plain) is None and read_capture(plain).covariates == {}


@pytest.mark.parametrize("comment, message", [
    ("# covariates={temperature_c: 20}", "line 1: covariates: Expecting property name"),
    ('# covariates={"Temperature": 20}', "line 1: covariates: covariate name 'Temperature'"),
    ('# covariates={"t_c": "warm"}', "line 1: covariates: covariate t_c: 'warm' is not a"),
    ("# created_utc=yesterday", "line 1: created_utc='yesterday' is not an ISO 8601 time"),
    ("# created_utc=2026-11-28T02:15:00", "line 1: created_utc='2026-11-28T02:15:00': give"),
])
def test_a_malformed_time_or_covariate_comment_is_named(tmp_path: Path, comment: str,
                                                        message: str) -> None:
    path = tmp_path / "c.csv"
    path.write_text("\n".join([comment, "t,theta0,theta1", *_rows()]) + "\n")
    with pytest.raises(CaptureFileError, match=re.escape(message)):
        read_capture(path)


def test_csv_import_takes_rig_and_resolution(tmp_path: Path) -> None:
    path = write_capture_csv(tmp_path / "c.csv", make_capture(n=100))
    rig = RigParams(tilt_deg=3.0)
    back = read_capture_csv(path, rig=rig, counts_per_rev=(4096, 2048))
    assert back.rig == rig
    assert back.counts_per_rev == back.source.counts_per_rev == (4096, 2048)


def _csv(rows: list[str], header: str = "t,theta0,theta1") -> str:
    return "\n".join(["# a comment line", header, *rows]) + "\n"


def _rows(n: int = 12, step: float = 0.001) -> list[str]:
    return [f"{k * step!r},{0.01 * k!r},{-0.02 * k!r}" for k in range(n)]


def test_hand_written_csv_is_tolerated(tmp_path: Path) -> None:
    rows = _rows(20)
    rows[5] = " " + rows[5].replace(",", " , ") + "  # inline comment"
    rows.insert(9, "# a comment between rows")
    del rows[13:15]  # two samples lost: a gap in time
    text = "\ufeff" + _csv(rows, header=" t , theta0,theta1 ").replace("\n", "\r\n")
    path = tmp_path / "hand.csv"
    path.write_text(text, encoding="utf-8", newline="")
    cap = read_capture(path)
    assert cap.sample_rate_hz == pytest.approx(1000.0, rel=1e-12)
    assert cap.gaps() == [(12, 2)]
    assert np.array_equal(cap.sample_index, np.r_[0:12, 14:20])
    assert cap.angles_rad[5].tolist() == [0.05, -0.1]


@pytest.mark.parametrize("rows, header, message", [
    (_rows(), "0.0,0.1,0.2",
     r"line 2: missing header t,theta0,theta1 \(found data '0.0,0.1,0.2'\)"),
    (_rows(), "time,a,b", r"line 2: header must be t,theta0,theta1, got 'time,a,b'"),
    ([r.rsplit(",", 1)[0] for r in _rows()], "t,theta0",
     r"line 2: header has 2 column\(s\) \(t,theta0\); both joints are required"),
    ([], "t,theta0,theta1", r"c\.csv: only 0 data rows \(at least 10 required\)"),
    (_rows(5), "t,theta0,theta1", r"c\.csv: only 5 data rows"),
    (_rows()[:4] + ["0.004,abc,0.1"] + _rows()[5:], "t,theta0,theta1",
     r"line 7: theta0 is not a number: 'abc'"),
    (_rows()[:4] + ["0.004,,0.1"] + _rows()[5:], "t,theta0,theta1",
     r"line 7: theta0 is not a number: ''"),
    (_rows()[:4] + ["0.004,1_0,0.1"] + _rows()[5:], "t,theta0,theta1",
     r"line 7: theta0 is not a number: '1_0'"),
    (_rows()[:4] + ["0.004,0.1,nan"] + _rows()[5:], "t,theta0,theta1", r"line 7: theta1 is nan"),
    (_rows()[:4] + ["inf,0.1,0.2"] + _rows()[5:], "t,theta0,theta1", r"line 7: t is inf"),
    (_rows()[:4] + ["0.004,0.1"] + _rows()[5:], "t,theta0,theta1",
     r"line 7: expected 3 columns \(t,theta0,theta1\), got 2"),
    (_rows()[:4] + ["0.004,0.1,0.2,0.3"] + _rows()[5:], "t,theta0,theta1",
     r"line 7: expected 3 columns \(t,theta0,theta1\), got 4"),
    ([r.rsplit(",", 1)[0] for r in _rows()], "t,theta0,theta1",
     r"line 3: expected 3 columns \(t,theta0,theta1\), got 2"),
    (_rows()[:4] + ["0.0025,0.1,0.2"] + _rows()[5:], "t,theta0,theta1",
     r"line 7: time not increasing \(0.0025 after 0.003\)"),
    (_rows()[:4] + ["0.003,0.1,0.2"] + _rows()[5:], "t,theta0,theta1",
     r"line 7: duplicated time \(0.003\)"),
    (_rows()[:4] + ["0.00405,0.1,0.2"] + _rows()[5:], "t,theta0,theta1",
     r"line 7: time step 0.00105 s is not a whole multiple of the median step 0.001 s"),
    (_rows()[:4] + ["0.0035,0.1,0.2"] + _rows()[5:], "t,theta0,theta1",
     r"line 7: time step 0.0005 s is not a whole multiple"),
    (_rows()[:4] + ["0.00300001,0.1,0.2"] + _rows()[4:], "t,theta0,theta1",
     r"line 7: time step 1e-08 s is not a whole multiple"),
    (_rows()[:4] + ["0.0045,0.1,0.2"] + _rows()[6:], "t,theta0,theta1",
     r"line 7: time step 0.0015 s is not a whole multiple"),
])
@pytest.mark.fault(injected="bad input: CSV with NaN, unordered or repeated time, one joint, text",
                   expected="one line naming the file, the line and the problem")
def test_bad_csv_names_file_line_and_problem(tmp_path: Path, rows: list[str], header: str,
                                             message: str) -> None:
    path = tmp_path / "c.csv"
    path.write_text(_csv(rows, header))
    with pytest.raises(CaptureFileError, match=message) as info:
        read_capture(path)
    assert str(info.value).startswith(f"{path}: ")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("content, message", [
    (b"", r"c\.csv: no header line \(expected t,theta0,theta1\)"),
    (b"# only a comment\n\n", r"c\.csv: no header line"),
    (_csv(_rows()[:4] + ["0.004,0.@4,0"] + _rows()[5:]).encode().replace(b"@", b"\xff"),
     r"c\.csv: line 7: not UTF-8 text"),
    # a lone CR is not a line break: these 20 rows are one line
    (b"t,theta0,theta1\n" + b"0,0,0\r" * 20,
     r"line 2: expected 3 columns \(t,theta0,theta1\), got 41"),
])
def test_bad_csv_bytes(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "c.csv"
    path.write_bytes(content)
    with pytest.raises(CaptureFileError, match=message):
        read_capture(path)


def test_errors_far_into_a_file_name_the_right_line(tmp_path: Path) -> None:
    rows = _rows(3000)
    path = tmp_path / "c.csv"
    # found after parsing (np.loadtxt succeeds) ...
    path.write_text(_csv(rows[:-1] + ["2.999,0.1,nan"]))
    with pytest.raises(CaptureFileError, match=r"line 3002: theta1 is nan"):
        read_capture(path)
    # ... and found while parsing (line-by-line fallback)
    path.write_text(_csv(rows[:-1] + ["2.999,0.1,x"]))
    with pytest.raises(CaptureFileError, match=r"line 3002: theta1 is not a number: 'x'"):
        read_capture(path)


def test_fallback_parser_reads_what_loadtxt_reads(tmp_path: Path) -> None:
    rows = _rows(500, step=1e-4)
    fast, slow = tmp_path / "fast.csv", tmp_path / "slow.csv"
    fast.write_text(_csv(rows))
    slow.write_text(_csv(rows[:250] + [" \t"] + rows[250:]))  # forces the line parser
    a, b = read_capture(fast), read_capture(slow)
    assert np.array_equal(a.angles_rad, b.angles_rad)
    assert np.array_equal(a.sample_index, b.sample_index)
    assert a.sample_rate_hz == b.sample_rate_hz


@pytest.mark.fault(injected="bad input: huge CSV files",
                   expected="refused at the limit with one line, bounded memory")
def test_csv_size_limits(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(_csv(_rows(30)))
    with pytest.raises(CaptureFileError, match=r"c\.csv: file is \d+ bytes, more than the limit"):
        read_capture_csv(path, max_bytes=100)
    with pytest.raises(CaptureFileError, match=r"more than 20 data rows"):
        read_capture_csv(path, max_rows=20)
    path.write_text(_csv(_rows(30)[:5] + [" "] + _rows(30)[5:]))  # same via the line parser
    with pytest.raises(CaptureFileError, match=r"more than 20 data rows"):
        read_capture_csv(path, max_rows=20)
    assert len(read_capture_csv(path, max_rows=30)) == 30


# ------------------------------------------------------------------- CSV robustness

_FUZZ = settings(max_examples=3 * settings.default.max_examples, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])


def _parses_or_capture_file_error(path: Path) -> None:
    try:
        cap = read_capture_csv(path)
    except CaptureFileError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert len(cap) >= 10 and np.all(np.isfinite(cap.angles_rad))
        assert np.all(np.diff(cap.sample_index) >= 1)


@_FUZZ
@given(text=st.text())
def test_arbitrary_text_parses_or_raises_capture_file_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fuzz.csv"
    path.write_text(text, encoding="utf-8", errors="surrogatepass", newline="")
    _parses_or_capture_file_error(path)


@pytest.mark.fault(injected="bad input: arbitrary bytes as a capture file (hypothesis)",
                   expected="a capture or a CaptureFileError, never another exception")
@_FUZZ
@given(data=st.binary())
def test_arbitrary_bytes_parse_or_raise_capture_file_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "fuzz.csv"
    path.write_bytes(b"t,theta0,theta1\n" + data)
    _parses_or_capture_file_error(path)


_TOKEN = st.sampled_from(["0", "1", "-1", "0.001", "1e-3", "1e308", "-1e308", "5e-324", "nan",
                          "inf", "-inf", "Infinity", "x", "", " ", "#", ",", "\r", "\t", "1,2",
                          "0.0015", "1e400", "+.5", "1.", "\ufeff", "\xa0", "\x0c"])
_LINE = st.lists(_TOKEN, max_size=6).map("".join)


@_FUZZ
@given(head=st.sampled_from(["t,theta0,theta1", " t , theta0 , theta1", "t,theta0", "", "#"]),
       lines=st.lists(_LINE, max_size=30), grid=st.booleans())
def test_csv_like_text_parses_or_raises_capture_file_error(
        tmp_path: Path, head: str, lines: list[str], grid: bool) -> None:
    if grid:  # mostly valid rows, so the later checks get exercised too
        lines = [f"{k * 0.001!r},{line or '0'},0" if k % 3 else f"{k * 0.001!r},0,0"
                 for k, line in enumerate(lines * 2)]
    path = tmp_path / "fuzz.csv"
    path.write_text("\n".join([head, *lines]), encoding="utf-8", newline="")
    _parses_or_capture_file_error(path)


# --------------------------------------- what a capture file may hold (fault suite)

def _h5_variant(tmp_path: Path, name: str, change: Callable[[h5py.File], None]) -> Path:
    path = tmp_path / name
    write_capture_h5(path, make_capture(n=2_000, gap=None))
    with h5py.File(path, "r+") as f:
        change(f)
    return path


def _replace_datasets(rows: slice | None = None, **values: np.ndarray
                      ) -> Callable[[h5py.File], None]:
    def change(f: h5py.File) -> None:
        for name in ("counts", "sample_index"):
            data = values.get(name, f[name][()] if rows is None else f[name][rows])
            del f[name]
            f.create_dataset(name, data=data)
    return change


def _bad_files(tmp_path: Path) -> dict[str, Path]:
    t = np.arange(100) * 1e-3
    huge_index = np.arange(2_000, dtype=np.int64)
    huge_index[-1] = 10**15
    angles = tmp_path / "huge_angles.csv"
    angles.write_text(_csv([f"{a!r},{1e308 if k % 2 else -1e308},0.1"
                            for k, a in enumerate(t.tolist())]))
    times = tmp_path / "huge_times.csv"
    times.write_text(_csv([f"{1e300 + k * 1e290!r},0.1,0.2" for k in range(100)]))

    def slow_rate(f: h5py.File) -> None:
        f.attrs["sample_rate_hz"] = 1e-300

    return {
        "only 1 samples": _h5_variant(tmp_path, "one_row.h5", _replace_datasets(slice(0, 1))),
        "longer than the longest capture": _h5_variant(
            tmp_path, "huge_index.h5", _replace_datasets(sample_index=huge_index)),
        "sample_rate_hz must lie in [1, 1e+06] Hz, got 1e-300": _h5_variant(
            tmp_path, "slow.h5", slow_rate),
        "no joint angle": angles,
        "sample_rate_hz must lie in [1, 1e+06] Hz, got 1e-290": times,
    }


@pytest.mark.fault(injected="bad input: a 1-row HDF5, sample_index up to 1e15, "
                            "sample_rate_hz 1e-300, CSV angles of +-1e308, CSV times near 1e300",
                   expected="hilrig identify: exit 2 and one line naming the file and the "
                            "problem; no traceback, no allocation of petabytes")
def test_files_no_capture_could_hold_are_one_line_errors(tmp_path, capsys):
    for expected, path in _bad_files(tmp_path).items():
        with pytest.raises(CaptureFileError, match=re.escape(expected)):
            read_capture(path)
        assert main(["identify", str(path)]) == 2, path
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(path) in err[0] and expected in err[0], err


@pytest.mark.fault(injected="bad input: a FIFO named .csv and one named .h5",
                   expected="refused at once as not a regular file (it blocked for ever)")
@pytest.mark.timeout(30)
def test_a_fifo_is_refused_not_waited_on(tmp_path):
    for name in ("pipe.csv", "pipe.h5"):
        os.mkfifo(tmp_path / name)
        with pytest.raises(CaptureFileError, match="not a regular file"):
            read_capture(tmp_path / name)


@pytest.mark.fault(injected="bad input: captures longer than the settings allow "
                            "(CSV and HDF5)",
                   expected="refused as soon as the limit is passed, naming the setting to raise")
def test_a_file_longer_than_the_longest_capture_is_refused_naming_the_setting(tmp_path):
    from hilrig.daq.config import load_settings

    limits = CaptureLimits.of(load_settings(None, trigger={"max_duration_s": 0.5,
                                                           "pre_trigger_s": 0.1}))
    assert limits.max_samples == 6_001 and limits.max_duration_s == pytest.approx(0.6)
    h5 = tmp_path / "long.h5"
    write_capture_h5(h5, make_capture(n=7_000, gap=None))
    csv = tmp_path / "long.csv"
    write_capture_csv(csv, make_capture(n=7_000, gap=None))
    for path in (h5, csv):
        with pytest.raises(CaptureFileError, match=r"more than 6001 samples.*trigger\."
                                                   r"max_duration_s"):
            read_capture(path, limits=limits)
    sparse = tmp_path / "sparse.csv"  # few samples, but a span of 5 s
    sparse.write_text(_csv(_rows(12, step=0.5)))
    with pytest.raises(CaptureFileError, match=r"spans 5\.5 s, longer than"):
        read_capture(sparse, limits=limits)
    assert len(read_capture(csv)) == 7_000  # the default limits: what any settings allow


def test_a_long_csv_read_tells_its_progress(tmp_path):
    path = tmp_path / "long.csv"
    write_capture_csv(path, make_capture(n=450_001, first=0, gap=None))
    seen: list[float] = []
    capture = read_capture(path, progress=lambda fraction, message: seen.append(fraction))
    assert len(capture) == 450_001
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] == pytest.approx(1.0)


@pytest.mark.fault(injected="bad input: an HDF5 capture whose counts are an external link, "
                            "external storage or a virtual dataset of another file",
                   expected="refused: a capture holds its own data")
def test_a_capture_naming_data_in_another_file_is_refused(tmp_path):
    donor = tmp_path / "donor.h5"
    write_capture_h5(donor, make_capture(n=2_000, gap=None))

    def external_link(f: h5py.File) -> None:
        del f["counts"]
        f["counts"] = h5py.ExternalLink(str(donor), "/counts")

    def virtual(f: h5py.File) -> None:
        del f["counts"]
        layout = h5py.VirtualLayout(shape=(2_000, 2), dtype=np.int32)
        layout[:] = h5py.VirtualSource(str(donor), "counts", shape=(2_000, 2))
        f.create_virtual_dataset("counts", layout)

    for name, change, why in (("link.h5", external_link, "a link to elsewhere"),
                              ("virtual.h5", virtual, "keeps its data in other files")):
        with pytest.raises(CaptureFileError, match=why):
            read_capture(_h5_variant(tmp_path, name, change))


# writes a 200,000-sample capture onto the nearly full disk given, leaving 0 to 152 kB
# free: every write either lands whole or fails with ENOSPC, in a process of its own so
# that a crash of the HDF5 library shows as its exit status
_FULL_DISK_WRITES = """
import errno, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from test_capture_file import make_capture
from hilrig.daq.storage import read_capture, write_capture_h5
root, cap = Path(sys.argv[1]), make_capture(n=200_000)
landed = refused = 0
for k in range(20):
    filler = root / "filler"
    filler.unlink(missing_ok=True)
    free = os.statvfs(root).f_bavail * os.statvfs(root).f_frsize
    with open(filler, "wb") as f:
        os.posix_fallocate(f.fileno(), 0, max(free - k * 8 * 1024, 4096))
    try:
        path = write_capture_h5(root / "c.h5", cap)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC, exc
        refused += 1
    else:
        assert read_capture(path).counts.shape == (200_000, 2)
        path.unlink()
        landed += 1
    assert sorted(p.name for p in root.iterdir()) == ["filler"], list(root.iterdir())
print(landed, refused)
"""


@pytest.mark.fault(injected="storage: a capture written onto a real full disk (a 20 MB tmpfs "
                            "left with 0 to 152 kB free, 20 times)",
                   expected="each write lands whole or raises OSError(ENOSPC); no partial "
                            "file, and the process lives (HDF5 2.0 crashed closing a file "
                            "whose write failed)")
def test_a_full_disk_refuses_a_capture_with_enospc_and_the_process_lives(
        small_disk: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FULL_DISK_WRITES, str(small_disk),
                           str(Path(__file__).parent)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    landed, refused = map(int, done.stdout.split())
    assert refused >= 10 and landed >= 1, done.stdout  # both outcomes were exercised
