"""The Python API for notebooks: a researcher reads a capture, a CSV or arrays, identifies
it with any method and rig kind, and gets results and the catalog as DataFrames."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hilrig
from hilrig.daq.acquisition import Capture, TriggerInfo
from hilrig.daq.storage import CaptureFileError, Catalog, write_capture_csv, write_capture_h5
from hilrig.drivers import SourceInfo
from hilrig.identify import PARAM_NAMES, IdentificationResult, Measurement, Record
from hilrig.identify.model import RIG_KINDS, parse_rig_kind
from hilrig.identify.signal import simulated_measurement

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "multiarm"


@pytest.fixture(scope="module")
def capture_file(tmp_path_factory) -> Path:
    """A 12 s simulated Furuta capture in counts, as a session stores it."""
    from hilrig.identify import RigParams
    from hilrig.identify.reference import TABLE_III_TRUTH

    m = simulated_measurement(RigParams(tilt_deg=10.0), TABLE_III_TRUTH, capture_id="nb1",
                              duration=12.0)
    cpr = (40_000, 40_000)
    counts = np.rint(m.angles * 40_000 / (2 * math.pi)).astype(np.int32)
    capture = Capture(capture_id="nb1", sample_index=m.sample_index, counts=counts,
                      sample_rate_hz=m.rate_hz, counts_per_rev=cpr, rig=m.rig,
                      source=SourceInfo(kind="simulated", identity="sim", counts_per_rev=cpr,
                                        sample_rate_hz=m.rate_hz),
                      trigger=TriggerInfo(onset_index=0, start_index=0,
                                          end_index=len(counts), end_reason="duration"))
    return write_capture_h5(tmp_path_factory.mktemp("nb") / "nb1.h5", capture)


@pytest.fixture(scope="module")
def result(capture_file) -> IdentificationResult:
    return hilrig.fit(capture_file)


def test_a_capture_file_is_identified_in_one_call_by_the_recommended_estimator(result):
    assert result.method == "shooting" and result.capture_id == "nb1"
    assert result.fit_percent["pendulum"] > 99.0


def test_the_result_shows_itself_in_one_line_and_as_a_table_in_jupyter(result):
    line = repr(result)
    assert "\n" not in line and len(line) < 400, line  # the model is ~50 kB of arrays
    assert line.startswith("<IdentificationResult shooting on nb1: mu_d0 ")
    html = result._repr_html_()
    assert html.count("<tr>") >= len(PARAM_NAMES) and "95 % interval" in html
    assert str(result) == result.summary() and "goodness of fit" in str(result)


def test_the_parameters_come_as_a_dataframe_with_their_intervals(result):
    frame = result.to_dataframe()
    assert list(frame.columns) == ["group", "value", "ci95_lo", "ci95_hi", "identifiable",
                                   "assumed", "note"]
    assert set(PARAM_NAMES) <= set(frame.index) and set(result.rig) <= set(frame.index)
    row = frame.loc["mu_d1"]
    assert row["group"] == "friction" and row["ci95_lo"] < row["value"] < row["ci95_hi"]
    assert row["value"] == result.parameters["mu_d1"].value
    unknown = [n for n, p in result.rig.items() if p.value is None]
    assert unknown and frame.loc[unknown, "value"].isna().all()  # NaN: the data cannot tell


def test_the_response_comes_as_a_dataframe_indexed_by_time(result):
    frame = result.to_dataframe("response")
    assert frame.index.name == "t_s"
    assert list(frame.columns) == ["measured.arm", "simulated.arm", "measured.pendulum",
                                   "simulated.pendulum"]
    assert len(frame) == len(result.response.t_s) and frame.index.dropna().is_monotonic_increasing
    with pytest.raises(ValueError, match="'parameters' or 'response'"):
        result.to_dataframe("rig")


def test_any_method_runs_on_what_read_gives(capture_file):
    m = hilrig.read(capture_file)
    assert isinstance(m, Measurement) and m.angles.shape[1] == 2 and m.capture_id == "nb1"
    out = hilrig.fit(m, method="regression")
    assert out.method == "regression"
    with pytest.raises(ValueError, match="unknown identification method 'greybox'"):
        hilrig.fit(m, method="greybox")


def test_arrays_are_identified_as_a_file_would_be_and_their_units_checked():
    d = np.loadtxt(DATA / "single_pendulum_1khz.csv", delimiter=",", skiprows=1)[:8000]
    t, q = d[:, 0], d[:, 1]  # rad from upright, as the builders recorded it
    in_degrees = np.degrees(q - math.pi)  # from hanging, as another lab would
    with pytest.raises(ValueError, match="unit='deg'"):
        hilrig.from_arrays(in_degrees, t=t, rig="single", zero="hanging")
    record = hilrig.from_arrays(in_degrees, t=t, rig="single", unit="deg", zero="hanging")
    assert isinstance(record, Record) and np.allclose(record.angles[:, 0], q, atol=1e-9)
    out = hilrig.fit(record, rig="single", friction_law="coulomb-viscous")
    assert out.rig_kind == "single" and out.fit_percent["theta1"] > 99.0
    assert {"Fc1/nu1", "b1/nu1"} <= set(out.to_dataframe().index)
    with pytest.raises(ValueError, match="is for the Furuta rig"):
        hilrig.fit(record, rig="single", method="uas")


@pytest.mark.parametrize("kind", RIG_KINDS)
def test_every_rig_kind_takes_arrays_as_its_own_data(kind):
    joints = parse_rig_kind(kind)[1]
    t = np.arange(2000) / 1000.0
    swing = 0.3 * np.sin(2 * math.pi * t)[:, None] * np.ones(joints)  # rad from hanging
    data = hilrig.from_arrays(swing, t=t, rig=kind, zero="hanging", capture_id="a1")
    assert isinstance(data, Measurement if kind == "furuta" else Record)
    assert data.angles.shape == (2000, joints) and data.capture_id == "a1"


def test_a_rig_of_another_kind_than_the_data_is_refused_in_one_line_before_any_fit(
        capture_file, capsys):
    from hilrig.identify import RigParams

    with pytest.raises(ValueError, match="capture nb1 is of the Furuta rig, not single"):
        hilrig.fit(capture_file, rig="single")
    with pytest.raises(ValueError, match="a Measurement is of the Furuta rig, not nlink:2"):
        hilrig.fit(hilrig.read(capture_file), rig="nlink:2")
    record = hilrig.from_arrays(np.linspace(0.0, 0.5, 100), rate_hz=100.0, rig="single")
    with pytest.raises(ValueError, match="RigParams describe the Furuta rig; these data "
                                         "hold 1 link"):
        hilrig.fit(record, rig=RigParams())
    with pytest.raises(ValueError, match="rig nlink:2 has 2 link"):
        hilrig.fit(record, rig="nlink:2")
    with pytest.raises(ValueError, match="is for the Furuta rig"):
        hilrig.fit(record, rig="single", method="uas", progress=True)
    with pytest.raises(TypeError, match="source: a capture file's path.* not ndarray"):
        hilrig.fit(np.zeros((10, 2)))
    assert capsys.readouterr().err == ""  # no progress line was begun


def test_a_csv_of_the_furuta_rig_is_read_in_the_unit_it_states(capture_file, tmp_path):
    from hilrig.daq.storage import read_capture

    csv = write_capture_csv(tmp_path / "nb1.csv", read_capture(capture_file))
    m = hilrig.read(csv)
    assert np.allclose(m.angles, hilrig.read(capture_file).angles, atol=1e-9)
    t = m.t
    degrees = tmp_path / "deg.csv"  # the same swing in degrees, and no comment saying so
    degrees.write_text("t,theta0,theta1\n" + "".join(
        f"{t[k]:.4f},{np.degrees(m.angles[k, 0]):.5f},{np.degrees(m.angles[k, 1]):.5f}\n"
        for k in range(0, len(t), 10)))
    with pytest.raises(CaptureFileError, match="--unit deg"):
        hilrig.read(degrees)
    back = hilrig.read(degrees, unit="deg")
    assert np.allclose(back.angles, m.angles[::10], atol=1e-6)


def test_the_catalog_comes_as_dataframes_with_session_and_capture_ids(result, tmp_path):
    with Catalog.open(tmp_path) as cat:
        cat.add_session("S1", "{}")
        cat.add_capture("nb1", session_id="S1", seq=1, status="done")
        cat.add_result(result, capture_id="nb1")
        cat.add_capture("nb2", session_id="S1", seq=2, status="failed")
    view = hilrig.catalog(tmp_path)
    results = view.results()
    assert list(results.index) == [1] and results.loc[1, "session_id"] == "S1"
    assert results.loc[1, "capture_id"] == "nb1" and results.loc[1, "method"] == "shooting"
    assert results.loc[1, "mu_d1"] == result.parameters["mu_d1"].value
    assert results.loc[1, "mu_d1_ci95_hi"] == result.parameters["mu_d1"].ci95[1]
    assert {f"rig.{n}" for n in result.rig} <= set(results.columns)
    captures = view.captures(session="S1")
    assert list(captures.index) == ["nb1", "nb2"]
    assert list(captures["results"]) == [1, 0] and list(captures["status"]) == ["done", "failed"]
    assert view.result(1).parameters == result.parameters
    assert view.results(method="uas").empty


def test_a_folder_without_a_catalog_is_one_line_naming_it(tmp_path):
    from hilrig.daq.storage import CatalogError

    with pytest.raises(CatalogError, match="no hilrig catalog here"):
        hilrig.catalog(tmp_path).results()
    assert not list(tmp_path.iterdir())  # nothing made on the way


def test_without_pandas_a_dataframe_says_which_extra_to_install(result, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"hilrig\[notebook\]"):
        result.to_dataframe()


def test_importing_hilrig_loads_nothing_heavy():
    code = ("import sys, hilrig; print(sorted(m for m in ('numba', 'scipy', 'pandas', "
            "'hilrig.daq.api') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "[]"


def test_the_worked_example_runs_from_a_capture_to_a_dataframe_and_a_figure(capture_file,
                                                                           tmp_path):
    example = ROOT / "docs" / "examples" / "notebook.py"
    lines = [ln for ln in example.read_text().splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert len(lines) < 10, lines
    done = subprocess.run([sys.executable, str(example), str(capture_file)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "mu_d1" in done.stdout and "ci95_lo" in done.stdout
    assert (tmp_path / "nb1.png").stat().st_size > 10_000
