"""The `hilrig` command as a user runs it: simulate, identify, export, and its errors.

The 35 s public case runs once through real subprocesses (exit status and a clean
stdout matter there); everything else calls daq.cli.main in-process on real files.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import math
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from hilrig.daq.acquisition import Capture
from hilrig.daq.cli import main, run
from hilrig.daq.storage import read_capture, write_capture_h5
from hilrig.identify import (
    DEFAULT_METHOD,
    PARAM_NAMES,
    TABLE_III_TRUTH,
    FrictionParams,
    IdentificationResult,
    RigParams,
    simulate,
)

SCALE = 40_000 / (2.0 * math.pi)  # counts per radian
QUANTUM = 1.0 / SCALE
RESULT_KEYS = {"schema", "method", "capture_id", "parameters", "fit_percent", "compute_seconds",
               "normalized_compute_time", "capture_seconds", "sample_rate_hz", "samples",
               "lost_samples", "tilt_deg", "diagnostics", "software_version", "created_utc",
               "rig", "rig_kind", "response"}
ESTIMATE_KEYS = {"value", "ci95", "identifiable", "note", "assumed"}


def _hilrig() -> list[str]:
    script = Path(sys.executable).with_name("hilrig")
    return [str(script)] if script.exists() else [sys.executable, "-m", "hilrig"]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("HILRIG_")}


def run_cli(*args: str | Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*_hilrig(), *map(str, args)], cwd=cwd, env=_env(), timeout=timeout,
                          capture_output=True, text=True)


def run_main(*args: str | Path) -> tuple[int, str]:
    """main() in-process; returns (exit status, stdout)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main([str(a) for a in args])
    return rc, out.getvalue()


def identify_json(path: Path) -> dict:
    rc, out = run_main("identify", path, "--json")
    assert rc == 0
    return json.loads(out)


def assert_one_line_error(capfd, *fragments: str) -> str:
    out, err = capfd.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("hilrig: error:")
    for fragment in fragments:
        assert fragment in lines[0]
    return lines[0]


def sim_counts(friction: FrictionParams, samples: int, pose_deg=(0.0, 120.0),
               tilt: float = 10.0) -> np.ndarray:
    """Counts of `samples` samples of identify.simulate from a release at pose_deg."""
    x0 = [math.radians(pose_deg[0]), math.radians(pose_deg[1]), 0.0, 0.0]
    _, s, _ = simulate(RigParams(tilt_deg=tilt), friction, x0, (samples - 1) / 10_000.0)
    assert s.shape[0] == samples
    return np.rint(s[:, :2] * SCALE).astype(np.int32)


@pytest.fixture(autouse=True)
def _no_hilrig_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("HILRIG_"):
            monkeypatch.delenv(name)


# ------------------------------------------------------------- the public case, end to end


@pytest.fixture(scope="module")
def table3(tmp_path_factory):
    """`hilrig simulate --out table3.h5` with defaults, then `hilrig identify table3.h5 --json`."""
    d = tmp_path_factory.mktemp("table3")
    sim = run_cli("simulate", "--out", "table3.h5", cwd=d)
    ident = run_cli("identify", "table3.h5", "--json", cwd=d, timeout=240)
    return d / "table3.h5", sim, ident


def test_public_case_recovers_table_iii_through_the_cli(table3):
    path, sim, ident = table3
    assert sim.returncode == 0, sim.stderr
    assert "table3.h5" in sim.stdout
    assert ident.returncode == 0, ident.stderr
    result = json.loads(ident.stdout)  # one JSON document and nothing else on stdout
    assert min(result["fit_percent"]["arm"], result["fit_percent"]["pendulum"]) >= 99.5
    params = result["parameters"]
    for name in ("mu_d0", "mu_d1", "mu_v1"):
        assert params[name]["value"] == pytest.approx(getattr(TABLE_III_TRUTH, name), rel=0.05)
    for name in ("Fn_t0", "Fn_t1"):
        assert params[name]["identifiable"] is False


def test_public_case_capture_is_the_documented_default(table3):
    path, sim, _ = table3
    assert sim.returncode == 0, sim.stderr
    capture = read_capture(path)
    assert capture.rig.tilt_deg == 10.0
    assert capture.sample_rate_hz == 10_000.0
    assert len(capture) == 355_001  # 0.5 s at rest, then 35 s
    assert capture.gaps() == []
    assert np.all(capture.counts[:5_000] == [0, round(120 / 360 * 40_000)])
    np.testing.assert_array_equal(capture.counts[5_000:5_000 + 20_000],
                                  sim_counts(TABLE_III_TRUTH, 20_000))


def test_result_json_has_the_documented_shape(table3):
    _, _, ident = table3
    result = json.loads(ident.stdout)
    assert set(result) == RESULT_KEYS
    assert result["schema"] == "hilrig.result/1"
    assert result["method"] == DEFAULT_METHOD
    assert result["rig_kind"] == "furuta"
    assert result["capture_id"] == "table3"
    assert list(result["parameters"]) == list(PARAM_NAMES)
    for name, p in result["parameters"].items():
        assert set(p) == ESTIMATE_KEYS, name
        assert isinstance(p["note"], str)
        if p["identifiable"]:
            lo, hi = p["ci95"]
            assert lo <= p["value"] <= hi, name
            assert p["assumed"] is None
        else:  # no estimate; what the simulation assumed, why, and any range the data allow
            assert p["value"] is None and p["note"]
            assert p["assumed"] is not None
            assert p["assumed"] > 0
            # "not identifiable: ...", or "estimated, not identified with confidence: ..."
            assert "not identif" in p["note"]
    assert set(result["fit_percent"]) == {"arm", "pendulum"}
    assert result["compute_seconds"] > 0
    assert result["normalized_compute_time"] == pytest.approx(
        result["compute_seconds"] / (result["capture_seconds"] * result["sample_rate_hz"]))
    assert result["capture_seconds"] == pytest.approx(35.5)
    assert result["sample_rate_hz"] == 10_000.0
    assert result["samples"] == 355_001
    assert result["lost_samples"] == 0
    assert result["tilt_deg"] == 10.0
    assert isinstance(result["diagnostics"], dict)
    assert isinstance(result["software_version"], str) and result["software_version"]
    datetime.fromisoformat(result["created_utc"].replace("Z", "+00:00"))
    IdentificationResult.model_validate(result)


# --------------------------------------------------------------------- CSV and export


@pytest.fixture(scope="module")
def short(tmp_path_factory):
    """An 8 s capture as HDF5 and as CSV, the HDF5 exported to CSV, each identified."""
    d = tmp_path_factory.mktemp("short")
    h5, csv, exported = d / "short.h5", d / "direct.csv", d / "exported.csv"
    assert run_main("simulate", "--out", h5, "--duration", "8")[0] == 0
    assert run_main("simulate", "--out", csv, "--duration", "8")[0] == 0
    assert run_main("export", h5, "--out", exported)[0] == 0
    return {"h5": h5, "csv": csv, "exported": exported,
            "h5_result": identify_json(h5), "csv_result": identify_json(csv),
            "exported_result": identify_json(exported)}


def test_simulated_csv_is_identified(short):
    text = short["csv"].read_text().splitlines()
    assert "t,theta0,theta1" in text[:3]
    result = short["csv_result"]
    assert result["samples"] == 85_001
    assert result["fit_percent"]["arm"] >= 99.5
    assert result["fit_percent"]["pendulum"] >= 99.5
    assert result["parameters"]["mu_d1"]["value"] == pytest.approx(6e-4, rel=0.05)


def test_export_keeps_every_angle_exactly(short):
    h5 = read_capture(short["h5"])
    csv = read_capture(short["exported"])
    np.testing.assert_array_equal(csv.angles_rad, h5.angles_rad)
    np.testing.assert_array_equal(csv.sample_index, h5.sample_index - h5.sample_index[0])
    assert csv.sample_rate_hz == h5.sample_rate_hz


def test_the_command_ends_its_process_without_collecting_what_it_loaded(short, tmp_path):
    """run(), the command's entry point, is main() and then the collector frozen (the
    interpreter's closing collections are skipped); the command's work is the same."""
    out = tmp_path / "again.csv"
    assert gc.get_freeze_count() == 0
    try:
        assert run(["export", str(short["h5"]), "--out", str(out)]) == 0
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert out.read_bytes() == short["exported"].read_bytes()


def test_exported_csv_identifies_like_its_hdf5(short):
    a, b = short["h5_result"], short["exported_result"]
    assert b["fit_percent"]["arm"] == pytest.approx(a["fit_percent"]["arm"], abs=1e-4)
    assert b["fit_percent"]["pendulum"] == pytest.approx(a["fit_percent"]["pendulum"], abs=1e-4)
    for name in PARAM_NAMES:
        pa, pb = a["parameters"][name], b["parameters"][name]
        assert pb["identifiable"] == pa["identifiable"], name
        if pa["identifiable"]:
            lo, hi = pa["ci95"]
            assert lo <= pb["value"] <= hi, name


def test_exported_csv_gives_the_same_parameter_values_as_its_hdf5(short):
    a, b = short["h5_result"], short["exported_result"]
    for name in PARAM_NAMES:
        va, vb = a["parameters"][name]["value"], b["parameters"][name]["value"]
        if va is None:
            assert vb is None, name
        else:
            assert vb == pytest.approx(va, rel=1e-9), name


# --------------------------------------------------------------------------- gaps


def test_identify_reports_lost_samples(short, tmp_path):
    full = read_capture(short["h5"])
    keep = np.ones(len(full), dtype=bool)
    keep[40_000:40_250] = False  # 250 samples lost mid-decay
    gappy = Capture(capture_id="gappy", sample_index=full.sample_index[keep],
                    counts=np.ascontiguousarray(full.counts[keep]),
                    sample_rate_hz=full.sample_rate_hz, counts_per_rev=full.counts_per_rev,
                    rig=full.rig, source=full.source, trigger=full.trigger)
    path = write_capture_h5(tmp_path / "gappy.h5", gappy)
    result = identify_json(path)
    assert result["lost_samples"] == 250
    assert result["samples"] == len(full) - 250
    assert result["capture_seconds"] == pytest.approx(8.5)
    assert min(result["fit_percent"].values()) >= 99.5


# ---------------------------------------------------------------------------- --friction


def _final_pendulum_amplitude(path: Path) -> float:
    counts = read_capture(path).counts
    return float(np.abs(counts[-5_000:, 1]).max())  # last 0.5 s


def test_friction_changes_the_simulation(tmp_path):
    truth, rough = tmp_path / "truth.h5", tmp_path / "rough.h5"
    assert run_main("simulate", "--out", truth, "--duration", "3", "--rest", "0")[0] == 0
    assert run_main("simulate", "--out", rough, "--duration", "3", "--rest", "0",
                    "--friction", '{"mu_d1": 2e-3}')[0] == 0
    assert _final_pendulum_amplitude(rough) < 0.9 * _final_pendulum_amplitude(truth)
    # the names given replace the truth's values; the others stay Table III
    expected = TABLE_III_TRUTH.model_copy(update={"mu_d1": 2e-3})
    np.testing.assert_array_equal(read_capture(rough).counts, sim_counts(expected, 30_001))


@pytest.mark.parametrize("form", ["whole result", "@whole result", "parameters object"])
def test_friction_accepts_an_identify_result(table3, tmp_path, form):
    _, _, ident = table3
    result = json.loads(ident.stdout)
    result["parameters"]["mu_d1"]["value"] = 2e-3  # make it tell from the default truth
    expected = IdentificationResult.model_validate(result).friction_params()
    text = json.dumps(result if form != "parameters object" else result["parameters"])
    if form.startswith("@"):
        (tmp_path / "result.json").write_text(text)
        text = f"@{tmp_path / 'result.json'}"
    out = tmp_path / "from_result.h5"
    assert run_main("simulate", "--out", out, "--duration", "1", "--rest", "0",
                    "--friction", text)[0] == 0
    counts = read_capture(out).counts
    np.testing.assert_array_equal(counts, sim_counts(expected, 10_001))
    assert not np.array_equal(counts, sim_counts(TABLE_III_TRUTH, 10_001))


def test_friction_from_a_file(tmp_path):
    (tmp_path / "f.json").write_text('{"mu_v0": 1e-3, "omega_t1": 0.01}')
    out = tmp_path / "f.h5"
    assert run_main("simulate", "--out", out, "--duration", "1", "--rest", "0",
                    "--friction", f"@{tmp_path / 'f.json'}")[0] == 0
    expected = TABLE_III_TRUTH.model_copy(update={"mu_v0": 1e-3, "omega_t1": 0.01})
    np.testing.assert_array_equal(read_capture(out).counts, sim_counts(expected, 10_001))


@pytest.mark.parametrize("value, fragments", [
    ('{"mu_dd1": 1e-4}', ["'mu_dd1'", "unknown"]),
    ('{"mu_d1": "big"}', ["mu_d1", "number"]),
    ('{"mu_d1": true}', ["mu_d1", "number"]),
    ('{"mu_d1": NaN}', ["mu_d1", "number"]),
    ('{"mu_d1": -1e-4}', ["mu_d1", "greater than or equal to 0"]),
    ('{"omega_t0": 0}', ["omega_t0", "greater than 0"]),
    ('{"mu_d1": 1e-4', ["not valid JSON"]),
    ('[1e-4]', ["JSON object"]),
    ('{"parameters": {"mu_d1": {"value": null, "assumed": null}}}', ["mu_d1"]),
    ("@missing.json", ["missing.json"]),
])
def test_bad_friction_exits_2_and_writes_nothing(tmp_path, capfd, value, fragments):
    if value.startswith("@"):
        value = f"@{tmp_path / value[1:]}"
    rc, _ = run_main("simulate", "--out", tmp_path / "x.h5", "--duration", "0.1",
                     "--friction", value)
    assert rc == 2
    line = assert_one_line_error(capfd, "--friction", *fragments)
    assert "errors.pydantic.dev" not in line
    assert list(tmp_path.iterdir()) == []


def test_bad_friction_from_the_command_line(tmp_path):
    proc = run_cli("simulate", "--out", "x.h5", "--friction", '{"mu_d1": -1}', cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1
    assert proc.stderr.startswith("hilrig: error: --friction: mu_d1")
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------- bad input files


def _truncated_h5(d: Path) -> Path:
    src = tmp_capture(d, "whole.h5")
    data = src.read_bytes()
    src.unlink()
    p = d / "truncated.h5"
    p.write_bytes(data[: len(data) // 2])
    return p


def tmp_capture(d: Path, name: str, duration: str = "0.2") -> Path:
    assert run_main("simulate", "--out", d / name, "--duration", duration, "--rest", "0.05")[0] == 0
    return d / name


BAD_INPUTS = {
    "nonexistent": (lambda d: d / "nope.h5", ["nope.h5", "not found"]),
    "wrong suffix": (lambda d: tmp_capture(d, "c.h5").rename(d / "c.dat"), ["c.dat", ".dat"]),
    "bad CSV header": (lambda d: _write(d / "b.csv", "time,a,b\n0,0,0\n"),
                       ["b.csv", "line 1", "t,theta0,theta1"]),
    "empty CSV": (lambda d: _write(d / "e.csv", ""), ["e.csv", "no header"]),
    "empty HDF5": (lambda d: _write(d / "e.h5", ""), ["e.h5", "HDF5"]),
    "truncated HDF5": (_truncated_h5, ["truncated.h5", "HDF5"]),
}


def _write(p: Path, text: str) -> Path:
    p.write_text(text)
    return p


@pytest.mark.parametrize("command", ["identify", "export"])
@pytest.mark.parametrize("kind", list(BAD_INPUTS))
def test_bad_input_file_exits_2_with_one_line(tmp_path, capfd, command, kind):
    make, fragments = BAD_INPUTS[kind]
    path = make(tmp_path)
    capfd.readouterr()
    before = sorted(p.name for p in tmp_path.iterdir())
    args = [command, path] + (["--out", tmp_path / "out.csv"] if command == "export" else [])
    rc, _ = run_main(*args)
    assert rc == 2
    assert_one_line_error(capfd, *fragments)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_truncated_hdf5_from_the_command_line(tmp_path):
    path = _truncated_h5(tmp_path)
    proc = run_cli("identify", path.name, "--json", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr  # no HDF5 library error stack
    assert proc.stderr.startswith("hilrig: error: truncated.h5")


# ------------------------------------------------------------------------ --out and --force


def test_simulate_refuses_an_existing_out_without_force(tmp_path, capfd):
    out = _write(tmp_path / "keep.h5", "precious")
    rc, _ = run_main("simulate", "--out", out, "--duration", "0.1")
    assert rc == 2
    assert_one_line_error(capfd, "keep.h5", "exists", "--force")
    assert out.read_text() == "precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.h5"]


def test_simulate_force_overwrites(tmp_path):
    out = _write(tmp_path / "keep.h5", "precious")
    assert run_main("simulate", "--out", out, "--duration", "0.1", "--rest", "0",
                    "--force")[0] == 0
    assert len(read_capture(out)) == 1_001
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.h5"]


def test_export_refuses_an_existing_out_without_force_and_overwrites_with_it(tmp_path, capfd):
    src = tmp_capture(tmp_path, "c.h5")
    out = _write(tmp_path / "c.csv", "precious")
    capfd.readouterr()
    assert run_main("export", src, "--out", out)[0] == 2
    assert_one_line_error(capfd, "c.csv", "exists", "--force")
    assert out.read_text() == "precious"
    assert run_main("export", src, "--out", out, "--force")[0] == 0
    np.testing.assert_array_equal(read_capture(out).angles_rad, read_capture(src).angles_rad)


# ------------------------------------------------------------------ other bad arguments


@pytest.mark.parametrize("tilt", ["90", "-1", "nan", "135"])
def test_simulate_tilt_out_of_range_exits_2(tmp_path, capfd, tilt):
    rc, _ = run_main("simulate", "--out", tmp_path / "x.h5", "--duration", "0.1", "--tilt", tilt)
    assert rc == 2
    assert_one_line_error(capfd, "--tilt")
    assert list(tmp_path.iterdir()) == []


def test_identify_tilt_out_of_range_exits_2(tmp_path, capfd):
    src = tmp_capture(tmp_path, "c.h5")
    capfd.readouterr()
    assert run_main("identify", src, "--tilt", "90")[0] == 2
    assert_one_line_error(capfd, "--tilt")


@pytest.mark.parametrize("args, fragment", [
    (["run"], "--sim"),
    (["run", "--sim", "--captures", "0"], "--captures"),
])
def test_run_bad_arguments_exit_2(tmp_path, args, fragment):
    proc = run_cli(*args, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("hilrig: error:") and fragment in lines[0]
    assert list(tmp_path.iterdir()) == []  # nothing started, nothing stored


@pytest.mark.parametrize("toml, key", [
    ("bogus = 1\n", "bogus"),
    ("[rig]\nfoo = 1\n", "rig.foo"),
    ("[sim.friction]\nmu_q = 1e-4\n", "sim.friction.mu_q"),
])
def test_config_with_an_unknown_key_exits_2_naming_it(tmp_path, capfd, toml, key):
    cfg = _write(tmp_path / "hilrig.toml", toml)
    rc, _ = run_main("--config", cfg, "simulate", "--out", tmp_path / "x.h5", "--duration", "0.1")
    assert rc == 2
    assert_one_line_error(capfd, "hilrig.toml", key)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hilrig.toml"]


@pytest.mark.parametrize("command", [["simulate", "--duration", "0.1"], ["captures", "list"]])
def test_an_unknown_method_in_the_config_is_refused_when_a_command_starts(tmp_path, capfd,
                                                                          command):
    # it was taken, and a capture recorded, before `unknown identification method` came
    cfg = _write(tmp_path / "hilrig.toml", '[identify]\nmethod = "greybox"\n')
    out = ["--out", tmp_path / "x.h5"] if command[0] == "simulate" else []
    rc, _ = run_main("--config", cfg, *command, *out)
    assert rc == 2
    assert_one_line_error(capfd, "hilrig.toml", "identify.method", "'greybox'", "grey-box")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hilrig.toml"]


def test_config_file_missing_exits_2(tmp_path, capfd):
    rc, _ = run_main("--config", tmp_path / "absent.toml", "simulate", "--out", tmp_path / "x.h5",
                     "--duration", "0.1")
    assert rc == 2
    assert_one_line_error(capfd, "absent.toml", "not found")
    assert list(tmp_path.iterdir()) == []


def test_config_settings_reach_the_simulation(tmp_path):
    cfg = _write(tmp_path / "hilrig.toml",
                 "[rig]\ntilt_deg = 25.0\n\n[sim.friction]\nmu_d1 = 2e-3\n")
    out = tmp_path / "x.h5"
    assert run_main("--config", cfg, "simulate", "--out", out, "--duration", "1",
                    "--rest", "0")[0] == 0
    capture = read_capture(out)
    assert capture.rig.tilt_deg == 25.0
    expected = TABLE_III_TRUTH.model_copy(update={"mu_d1": 2e-3})
    np.testing.assert_array_equal(capture.counts, sim_counts(expected, 10_001, tilt=25.0))


# ------------------------------------------------------------------ realistic captures

def test_simulate_makes_a_capture_as_a_real_rig_would_and_tells_the_nominal_rig(tmp_path, capfd):
    out = tmp_path / "real.h5"
    args = ("simulate", "--out", out, "--duration", "2", "--rest", "0.5", "--seed", "7",
            "--rig-error", "0.05", "--tremor", "0.002", "--push", "0.05", "-0.15",
            "--jitter", "1", "--lost-frames", "0.01", "--drag", "5e-6")
    rc, said = run_main(*args)
    assert rc == 0
    assert "as a real rig:" in said and "drag 5e-06" in said and "samples lost" in said
    cap = read_capture(out)
    assert cap.rig == RigParams()  # the estimator is told the nominal rig
    steps = np.diff(cap.sample_index)
    assert (steps > 1).any() and np.all((steps[steps > 1] - 1) % 10 == 0)  # whole frames lost
    held = cap.angles_rad[:4000, 1]
    assert held.std() > 5 * QUANTUM  # a trembling hand, not a still pose
    # the same seed, the same capture; no seed, another one
    again = tmp_path / "again.h5"
    assert run_main(*args[:2], again, *args[3:])[0] == 0
    np.testing.assert_array_equal(read_capture(again).counts, cap.counts)
    other = tmp_path / "other.h5"
    assert run_main("simulate", "--out", other, "--duration", "2", "--tremor", "0.002")[0] == 0
    assert not np.array_equal(read_capture(other).counts[:5000], cap.counts[:5000])


@pytest.mark.parametrize("option, value", [("--noise", "-1"), ("--lost-frames", "0.9"),
                                           ("--rig-error", "nan")])
def test_simulate_realism_out_of_range_is_one_line_naming_the_option(tmp_path, capfd,
                                                                      option, value):
    rc, _ = run_main("simulate", "--out", tmp_path / "x.h5", "--duration", "0.1", option, value)
    assert rc == 2
    assert_one_line_error(capfd, option)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.fault(injected="bad input: JSON nested 1,000 and 100,000 deep in `hilrig cmd` and "
                            "`simulate --friction`",
                   expected="one line naming the option, exit 2, nothing sent or written")
@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_json_nested_too_deeply_on_the_command_line_is_one_line(tmp_path, capfd, depth):
    deep = "[" * depth + "]" * depth
    assert run_main("cmd", "arm", '{"a": ' + deep + "}", "--timeout", "1")[0] == 2
    assert_one_line_error(capfd, "cmd", "nested too deeply")
    rc, _ = run_main("simulate", "--out", tmp_path / "x.h5", "--duration", "0.1",
                     "--friction", '{"mu_d0": ' + deep + "}")
    assert rc == 2
    assert_one_line_error(capfd, "--friction", "nested too deeply")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.fault(injected="bad input: a plan and a config file nested 3,000 deep (TOML)",
                   expected="one line naming the file, exit 2")
def test_toml_nested_too_deeply_is_one_line(tmp_path, capfd):
    deep = "[" * 3000 + "]" * 3000
    plan = _write(tmp_path / "deep.toml", f"[session]\ncaptures = 1\nposes_deg = {deep}\n")
    assert run_main("session", "start", plan)[0] == 2
    assert_one_line_error(capfd, "deep.toml", "nested too deeply")
    cfg = _write(tmp_path / "cfg.toml", f"x = {deep}\n")
    assert run_main("--config", cfg, "captures", "list")[0] == 2
    assert_one_line_error(capfd, "cfg.toml", "nested too deeply")


def test_simulate_at_1_khz_records_the_same_motion_sampled_less_often(tmp_path):
    # seed 000's Table V condition is a 1 kHz capture: the rig moves as it would at 10 kHz
    fast, slow = tmp_path / "fast.h5", tmp_path / "slow.h5"
    assert run_main("simulate", "--out", fast, "--duration", "3", "--rest", "0.1")[0] == 0
    assert run_main("simulate", "--out", slow, "--duration", "3", "--rest", "0.1",
                    "--rate", "1000")[0] == 0
    a, b = read_capture(fast), read_capture(slow)
    assert b.sample_rate_hz == 1000.0 and b.counts.shape[0] == 3101
    assert np.array_equal(a.counts[::10], b.counts)  # integrated at the same 0.1 ms step


def test_identifying_a_file_loads_nothing_only_acquisition_needs():
    # the trigger's running extremes (scipy.ndimage) serve live acquisition only; loaded
    # with the command that reads a capture file they cost it 0.05-0.07 s on this machine
    probe = ("import sys\nimport hilrig.daq.cli._offline\n"
             "print('LOADED', [m for m in ('scipy.ndimage',) if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60)
    assert "LOADED []" in done.stdout, done.stdout[-500:] + done.stderr[-2000:]
