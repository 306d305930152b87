"""The catalog commands as a user meets them: filters that match nothing say so, wrong
filters are one-line errors, a pipe closed early is no error, and `session resume` with
no id resumes the session that needs it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hilrig.daq.storage import Catalog

from .test_cli import assert_one_line_error, run_main


@pytest.fixture
def archive(tmp_path, monkeypatch):
    root = tmp_path / "archive"
    monkeypatch.setenv("HILRIG_STORAGE__DIRECTORY", str(root))
    with Catalog.open(root) as cat:
        cat.add_session("S-old", "{}")
        cat.set_session_status("S-old", "stopped", reason="stop requested")
        cat.add_session("S-new", "{}")
        cat.set_session_status("S-new", "done")
        for k in range(40):
            cat.add_capture(f"c{k:02d}", session_id="S-new", seq=k + 1, status="done")
    return root


def test_a_filter_that_matches_nothing_says_so_on_stderr(archive, capfd):
    rc, out = run_main("captures", "list", "--status", "failed")
    assert rc == 0 and out.split() == ["capture_id", "session_id", "seq", "status",
                                       "duration_s", "samples", "lost_samples", "end_reason",
                                       "results"]
    assert "hilrig: no captures match --status failed" in capfd.readouterr().err


@pytest.mark.parametrize("args, fragment", [
    (["captures", "list", "--session", "S-typo"], "no session 'S-typo'"),
    (["captures", "list", "--status", "dne"], "--status 'dne': expected one of recording"),
    (["results", "list", "--session", "S-typo"], "no session 'S-typo'"),
    (["emulate-firmware", "--pose", "0", "400"], "angles must be within -360..360"),
])
def test_a_wrong_filter_or_pose_is_a_one_line_error(archive, capfd, args, fragment):
    rc, _ = run_main(*args)
    assert rc == 2
    assert_one_line_error(capfd, fragment)


def test_output_piped_into_a_reader_that_stops_early_is_no_error(archive):
    with Catalog.open(archive) as cat:  # more than a pipe's buffer holds (64 KiB)
        for k in range(1500):
            cat.add_capture(f"long-{k:04d}", session_id="S-new", seq=100 + k, status="done")
    listing = subprocess.Popen([sys.executable, "-m", "hilrig", "captures", "list"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=dict(os.environ))
    assert listing.stdout is not None
    listing.stdout.readline()  # `| head -1`
    listing.stdout.close()
    _, err = listing.communicate(timeout=60)
    assert listing.returncode == 0 and b"Broken pipe" not in err and b"Traceback" not in err


def test_resume_without_an_id_takes_the_session_that_needs_it(archive, capfd):
    # the newest is done; the older one was stopped and waits: that is the one meant
    with Catalog.open(archive) as cat:
        cat.add_session("S-other", "{}")
        cat.set_session_status("S-other", "failed", reason="disk full")
    rc, _ = run_main("session", "resume")
    assert rc == 2
    line = assert_one_line_error(capfd, "several sessions can be resumed")
    assert "S-old (stopped)" in line and "S-other (failed)" in line and "S-new" not in line


@pytest.mark.parametrize("args", [["--help"], ["captures", "list"]])
def test_quick_commands_load_no_compiler_no_optimiser(archive, args):
    # `hilrig --help` and `captures list` answer at once: they need neither the compiled
    # simulators (numba) nor the methods' optimisers (scipy.optimize) nor HDF5
    probe = (f"import sys\nfrom hilrig.daq.cli import main\ntry:\n    main({args!r})\n"
             "except SystemExit:\n    pass\nheavy = [m for m in ('numba', 'scipy.optimize', "
             "'h5py') if m in sys.modules]\nprint('HEAVY', heavy)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60)
    assert "HEAVY []" in done.stdout, done.stdout[-500:] + done.stderr[-2000:]


def test_a_stored_result_that_no_longer_reads_is_left_out_with_one_line(archive, capfd):
    # an earlier version stored NaN intervals, which JSON keeps as null: such a row must not
    # take the listing down with it
    import json
    import math

    from hilrig.identify import PARAM_NAMES, IdentificationResult, ParameterEstimate

    def result(capture_id: str, lo: float) -> IdentificationResult:
        params = {n: ParameterEstimate(value=1e-3, ci95=(lo, 1.1e-3), identifiable=True)
                  for n in PARAM_NAMES}
        return IdentificationResult(
            method="regression", capture_id=capture_id, parameters=params,
            fit_percent={"arm": 99.0, "pendulum": 98.0}, compute_seconds=0.5,
            normalized_compute_time=1e-6, capture_seconds=30.0, sample_rate_hz=1e4,
            samples=300001, tilt_deg=10.0)

    with Catalog.open(archive) as cat:
        cat.add_result(result("c01", 0.9e-3), capture_id="c01")
        cat.add_result(result("c02", math.nan), capture_id="c02")
    for args in (["results", "list"], ["results", "list", "--format", "csv"],
                 ["captures", "show", "c02"]):
        assert run_main(*args)[0] == 0, args
        err = capfd.readouterr().err
        assert "c02" in err and "is unreadable" in err and "left out" in err, args
        assert err.count("\n") == 1 and "Traceback" not in err, args
    rc, out = run_main("results", "list", "--format", "json")
    assert rc == 0 and [r["capture_id"] for r in json.loads(out)] == ["c01"]


def _dragged_result(capture_id: str):
    from hilrig.identify import PARAM_NAMES, IdentificationResult, ParameterEstimate

    params = {n: ParameterEstimate(value=1e-3, ci95=(0.9e-3, 1.1e-3), identifiable=True)
              for n in PARAM_NAMES}
    rig = {"reduced_length": ParameterEstimate(value=0.08, ci95=(0.079, 0.081),
                                               identifiable=True, note="m; from the data alone"),
           "drag1": ParameterEstimate(value=4.9e-6, ci95=(4.1e-6, 5.8e-6), identifiable=True,
                                      note="N m s^2; the pendulum's air drag (a torque c w|w|), "
                                           "a term the diagnostics chose")}
    return IdentificationResult(
        method="shooting", capture_id=capture_id, parameters=params, rig=rig,
        fit_percent={"arm": 99.0, "pendulum": 98.0}, compute_seconds=0.5,
        normalized_compute_time=1e-6, capture_seconds=30.0, sample_rate_hz=1e4,
        samples=300001, tilt_deg=10.0,
        diagnostics={"extra_terms": {"drag1": {"value": 4.9e-6, "ci95": [4.1e-6, 5.8e-6],
                                               "unit": "N m s^2"}},
                     "warnings": ["the pendulum's residuals are 3.1 times its noise"]})


def test_results_list_carries_the_rig_quantities_and_shows_the_extra_terms_chosen(archive):
    # the drag a fit chose was only in the result's diagnostics: no column, no table entry
    import csv
    import io
    import json

    with Catalog.open(archive) as cat:
        cat.add_result(_dragged_result("c01"), capture_id="c01")
    rc, out = run_main("results", "list", "--format", "csv")
    row = next(csv.DictReader(io.StringIO(out)))
    assert rc == 0 and float(row["rig.drag1"]) == 4.9e-6
    assert float(row["rig.drag1_ci95_lo"]) == 4.1e-6 and float(row["rig.drag1_ci95_hi"]) == 5.8e-6
    assert float(row["rig.reduced_length"]) == 0.08
    rc, out = run_main("results", "list", "--format", "json")
    assert json.loads(out)[0]["rig.drag1"] == 4.9e-6
    rc, out = run_main("results", "list")
    header, line = out.splitlines()[:2]
    assert "rig.drag1" in header and "4.9e-06" in line and "rig.reduced_length" not in header


def test_the_terminal_summary_shows_the_extra_terms_and_the_warnings():
    from hilrig.daq.cli.furuta import format_result

    text = format_result(_dragged_result("c01"))
    assert any(ln.startswith("drag1") and "4.9e-06" in ln and "[4.1e-06, 5.8e-06]" in ln
               for ln in text.splitlines()), text
    assert "warning: the pendulum's residuals are 3.1 times its noise" in text
