"""`hilrig session identify`: a session's captures put together from the results kept in the
catalog, the answer kept as a row of its own; `hilrig identify A B --pooled` on files.
Bad input is one line before any fit."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from hilrig.daq.acquisition import Capture
from hilrig.daq.storage import Catalog, write_capture_h5
from hilrig.drivers import SourceInfo
from hilrig.identify import RigParams, SessionResult

from .test_cli import assert_one_line_error, run_main

HOURS = np.linspace(0.0, 8.0, 6)


@pytest.fixture
def archive(tmp_path, monkeypatch, night):
    """A session of 6 captures 1.6 h apart from 22:00 whose pendulum's viscous term rose
    10 % (their results as the estimator states them), and a session without results."""
    root = tmp_path / "archive"
    monkeypatch.setenv("HILRIG_STORAGE__DIRECTORY", str(root))
    with Catalog.open(root) as cat:
        cat.add_session("S-empty", "{}")
        cat.add_session("S-night", "{}")
        start = datetime(2026, 11, 27, 22, 0, tzinfo=UTC)
        for k, result in enumerate(night(HOURS, drift={"mu_v1": 0.0125})):
            stamp = (start + timedelta(hours=float(HOURS[k]))).isoformat(timespec="milliseconds")
            cat.add_capture(result.capture_id or "", session_id="S-night", seq=k + 1,
                            status="done", started_utc=stamp.replace("+00:00", "Z"))
            cat.add_result(result, capture_id=result.capture_id or "")
    return root


def test_a_session_identified_gives_its_drift_and_keeps_the_answer(archive, capsys):
    rc, out = run_main("session", "identify", "S-night")
    assert rc == 0
    assert out.startswith("session S-night: drift over 6 captures: mu_v1 +1.2 %/h")
    rc, out = run_main("session", "identify", "S-night", "--json", "--dry-run")
    answer = SessionResult.model_validate_json(out)
    assert answer.verdict == "drift" and answer.session_id == "S-night"
    assert [c.x for c in answer.captures] == pytest.approx(HOURS, abs=1 / 60)
    with Catalog.open(archive) as cat:
        (kept,) = cat.session_results("S-night")  # the dry run kept nothing
        assert kept.verdict == "drift" and kept.captures == 6
        assert kept.result().drift.slopes["mu_v1"].moved
    assert json.loads(out)["schema"] == "hilrig.session-result/1"


@pytest.mark.parametrize("args, fragment", [
    (["session", "identify", "S-empty"], "session S-empty has no capture identified by"),
    (["session", "identify", "S-typo"], "no session 'S-typo'"),
])
def test_a_session_without_results_or_unknown_is_a_one_line_error(archive, capfd, args,
                                                                    fragment):
    rc, _ = run_main(*args)
    assert rc == 2
    assert_one_line_error(capfd, fragment)


def _recording_file(path, capture_id: str, temperature_c: float | None,
                    overwrite: bool = False):
    """A small capture file that records the lab's temperature (or nothing)."""
    capture = Capture(capture_id=capture_id, sample_index=np.arange(1000),
                      counts=np.zeros((1000, 2), np.int32), sample_rate_hz=10_000.0,
                      counts_per_rev=(40_000, 40_000), rig=RigParams(),
                      source=SourceInfo(kind="simulated", identity="test",
                                        sample_rate_hz=10_000.0,
                                        counts_per_rev=(40_000, 40_000)),
                      covariates={} if temperature_c is None
                      else {"temperature_c": temperature_c})
    return str(write_capture_h5(path, capture, overwrite=overwrite))


def test_a_session_pooled_against_the_temperature_its_captures_record(tmp_path, monkeypatch,
                                                                      night, capfd):
    """The night's viscous term rose 10 % over 8 h while the lab warmed 1.5 degC an hour,
    each capture file recording its temperature: the trend per degC, from the files."""
    root = tmp_path / "archive"
    monkeypatch.setenv("HILRIG_STORAGE__DIRECTORY", str(root))
    with Catalog.open(root) as cat:
        cat.add_session("S-warm", "{}")
        for k, result in enumerate(night(HOURS, drift={"mu_v1": 0.0125})):
            cid = result.capture_id or ""
            path = _recording_file(tmp_path / f"{cid}.h5", cid,
                                   None if k == 5 else 20.0 + 1.5 * float(HOURS[k]))
            cat.add_capture(cid, session_id="S-warm", seq=k + 1, status="done", path=path)
            cat.add_result(result, capture_id=cid)
    rc, _ = run_main("session", "identify", "S-warm", "--covariate", "temperature_c")
    assert rc == 2  # the last capture's file records none: said, nothing pooled
    assert_one_line_error(capfd, "records no covariate 'temperature_c' (it records: none)")
    last = night(HOURS)[5].capture_id or ""  # its file rewritten, recording one
    _recording_file(tmp_path / f"{last}.h5", last, 20.0 + 1.5 * 8.0, overwrite=True)
    rc, out = run_main("session", "identify", "S-warm", "--covariate", "temperature_c",
                       "--json", "--dry-run")
    assert rc == 0
    answer = SessionResult.model_validate_json(out)
    assert answer.covariate == "temperature_c" and answer.verdict == "drift"
    assert [c.x for c in answer.captures] == pytest.approx(20.0 + 1.5 * HOURS)
    lo, hi = answer.drift.slopes["mu_v1"].ci95
    assert lo < 0.0125 / 1.5 / 1.05 < hi  # per degC, of the level at the mean temperature


@pytest.fixture(scope="module")
def two_files(tmp_path_factory):
    out = tmp_path_factory.mktemp("pooled")
    for name, theta1, tilt in (("a", "120", "10"), ("b", "110", "10"), ("c", "110", "12")):
        rc, _ = run_main("simulate", "--out", str(out / f"{name}.h5"), "--duration", "3",
                         "--theta1", theta1, "--tilt", tilt)
        assert rc == 0
    return out / "a.h5", out / "b.h5", out / "c.h5"


@pytest.mark.parametrize("extra, fragment", [
    ([], "add --pooled to identify them together"),
    (["--pooled", "--hours", "0"], "--hours: 1 values for 2 files"),
    (["--pooled", "--method", "grey-box"], "not --method grey-box"),
    (["--pooled", "--covariate", "temperature_c"],
     "records no covariate 'temperature_c' (it records: none)"),
    (["--pooled", "--covariate", "x", "--hours", "0", "1"], "--covariate and --hours: give one"),
])
def test_several_files_need_pooled_and_consistent_options(two_files, capfd, extra, fragment):
    rc, _ = run_main("identify", str(two_files[0]), str(two_files[1]), *extra)
    assert rc == 2
    assert_one_line_error(capfd, fragment)


def test_files_of_two_rigs_are_not_pooled(two_files, capfd):
    rc, _ = run_main("identify", str(two_files[0]), str(two_files[2]), "--pooled")
    assert rc == 2
    assert_one_line_error(capfd, "its rig differs from")


def test_pooled_on_one_file_or_hours_without_pooled_are_one_line_errors(two_files, capfd):
    rc, _ = run_main("identify", str(two_files[0]), "--pooled")
    assert rc == 2
    assert_one_line_error(capfd, "--pooled: give two capture files or more")
    rc, _ = run_main("identify", str(two_files[0]), "--hours", "1")
    assert rc == 2
    assert_one_line_error(capfd, "--hours is for --pooled")
    rc, _ = run_main("identify", str(two_files[0]), "--covariate", "temperature_c")
    assert rc == 2
    assert_one_line_error(capfd, "--covariate is for --pooled")


def test_friction_pooled_against_a_recorded_temperature(tmp_path, capsys):
    """Three captures of a rig whose pendulum's viscous term rises 5 % an hour while the
    lab warms 1.5 degC an hour, each recording its temperature: pooled against it, the
    trend is per degree, and its interval holds the truth."""
    files = []
    for hours in (0.0, 4.0, 8.0):
        path = tmp_path / f"warm-{hours:g}h.h5"
        rc, _ = run_main("simulate", "--out", str(path), "--duration", "10", "--drift",
                         "mu_v1=0.05", "--session-hours", str(hours), "--covariate",
                         f"temperature_c={20 + 1.5 * hours}")
        assert rc == 0
        files.append(str(path))
    capsys.readouterr()
    rc, out = run_main("identify", *files, "--pooled", "--covariate", "temperature_c", "--json")
    assert rc == 0
    answer = SessionResult.model_validate_json(out)
    assert answer.covariate == "temperature_c"
    assert [c.x for c in answer.captures] == [20.0, 26.0, 32.0]
    slope = answer.drift.slopes["mu_v1"]
    truth = 0.05 / 1.5 / 1.2  # per degC, of the level at the mean temperature (hour 4)
    assert slope.ci95[0] < truth < slope.ci95[1]
    assert abs(answer.drift.slopes["mu_d1"].per_unit) < 1e-3


@pytest.mark.parametrize("extra, fragment", [
    (["--covariate", "Temperature=20"], "covariate name 'Temperature'"),
    (["--covariate", "temperature_c=warm"], "expected NAME=VALUE"),
    (["--covariate", "temperature_c=nan"], "is not a finite number"),
])
def test_a_malformed_covariate_is_one_line_before_simulating(tmp_path, capfd, extra, fragment):
    rc, _ = run_main("simulate", "--out", str(tmp_path / "x.h5"), *extra)
    assert rc == 2
    assert_one_line_error(capfd, fragment)
    assert not (tmp_path / "x.h5").exists()


def test_csv_captures_carry_their_time_and_temperature_into_a_pooled_answer(tmp_path, capsys):
    """Simulated straight to CSV, and exported from HDF5 to CSV: each file keeps the
    capture's time and its covariates, so the CSVs pool as the captures would."""
    files = []
    for hours in (0.0, 4.0, 8.0):
        h5, csv = tmp_path / f"w{hours:g}.h5", tmp_path / f"w{hours:g}.csv"
        rc, _ = run_main("simulate", "--out", str(h5), "--duration", "6", "--session-hours",
                         str(hours), "--covariate", f"temperature_c={20 + 1.5 * hours}")
        assert rc == 0 and run_main("export", str(h5), "--out", str(csv))[0] == 0
        files.append(str(csv))
    rc, _ = run_main("simulate", "--out", str(tmp_path / "direct.csv"), "--duration", "6",
                     "--covariate", "temperature_c=19.5")
    assert rc == 0
    capsys.readouterr()
    rc, out = run_main("identify", *files, str(tmp_path / "direct.csv"), "--pooled",
                       "--covariate", "temperature_c", "--json")
    assert rc == 0
    answer = SessionResult.model_validate_json(out)
    assert [c.x for c in answer.captures] == [20.0, 26.0, 32.0, 19.5]
    rc, out = run_main("identify", *files, "--pooled", "--json")  # in their recorded hours
    assert rc == 0
    hours = [c.x for c in SessionResult.model_validate_json(out).captures]
    assert hours == sorted(hours) and hours[0] == 0.0


def test_a_csv_from_elsewhere_has_no_time_and_pooling_it_asks_for_hours(tmp_path, capfd):
    for k in range(2):
        lines = ["t,theta0,theta1"] + [f"{i / 1000!r},0.0,{0.5 * 0.999 ** i!r}"
                                      for i in range(3000)]
        (tmp_path / f"lab{k}.csv").write_text("\n".join(lines) + "\n")
    rc, _ = run_main("identify", str(tmp_path / "lab0.csv"), str(tmp_path / "lab1.csv"),
                     "--pooled")
    assert rc == 2
    assert_one_line_error(capfd, "lab0.csv: records no time of capture")


def test_results_list_pooled_shows_each_answer_kept(archive, capfd):
    rc, out = run_main("results", "list", "--pooled")
    assert rc == 0 and out.splitlines()[1:] == []  # nothing kept yet: a header
    assert "no session answers (hilrig session identify) yet" in capfd.readouterr().err
    run_main("session", "identify", "S-night")
    rc, out = run_main("results", "list", "--pooled", "--session", "S-night")
    head, row = out.splitlines()
    assert head.split()[:4] == ["session_result_id", "session_id", "captures", "verdict"]
    assert "S-night" in row and "drift" in row and "mu_v1+1.2%/h" in row
    rc, out = run_main("results", "list", "--pooled", "--format", "json")
    (rec,) = json.loads(out)
    assert rec["verdict"] == "drift" and rec["mu_v1_ci95_lo"] < rec["mu_v1"]
    rc, _ = run_main("results", "list", "--pooled", "--method", "shooting")
    assert rc == 2
    assert_one_line_error(capfd, "--pooled lists sessions' answers")


def test_a_notebook_reads_a_sessions_answer_without_keeping_it(archive):
    import hilrig

    answer = hilrig.catalog(archive).session_answer("S-night")
    assert answer.verdict == "drift" and str(answer).startswith("session S-night: drift")
    with Catalog.open(archive) as cat:
        assert cat.session_results("S-night") == []


# -- a chain rig's records: simulate --rig single with a drift, identify --pooled ----------
@pytest.fixture(scope="module")
def chain_files(tmp_path_factory):
    """Three 15 s records of a single pendulum whose viscous term rises 5 % an hour, at
    hours 0, 4 and 8 of their session, each released by its own hand."""
    out = tmp_path_factory.mktemp("chain")
    for k, hours in enumerate((0.0, 4.0, 8.0)):
        rc, _ = run_main("simulate", "--rig", "single", "--out", str(out / f"s{k}.csv"),
                         "--duration", "15", "--drift", "b1=0.05", "--session-hours",
                         str(hours), "--angles", str(100 + 10 * k), "--seed", str(k),
                         "--tremor", "0.002")
        assert rc == 0
    return [str(out / f"s{k}.csv") for k in range(3)]


def test_a_chain_rigs_records_are_pooled_with_their_drift_in_the_hours_given(chain_files,
                                                                            capsys):
    capsys.readouterr()
    rc, out = run_main("identify", "--rig", "single", *chain_files, "--pooled", "--hours", "0",
                       "4", "8", "--json")
    assert rc == 0
    answer = SessionResult.model_validate_json(out)
    assert answer.rig_kind == "single" and [c.x for c in answer.captures] == [0.0, 4.0, 8.0]
    slope = answer.drift.slopes["b1/nu1"]
    truth = 0.05 / 1.2  # per hour, of the level at the mean time (hour 4)
    assert slope.ci95[0] < truth < slope.ci95[1]
    assert abs(answer.drift.slopes["Fc1/nu1"].per_unit) < 1e-3


def test_a_chain_record_simulated_by_hilrig_keeps_its_time(chain_files, capsys):
    rc, out = run_main("identify", "--rig", "single", *chain_files[:2], "--pooled", "--json")
    assert rc == 0  # in the hours their files record: written a moment apart
    hours = [c.x for c in SessionResult.model_validate_json(out).captures]
    assert hours[0] == 0.0 and 0.0 < hours[1] < 0.1


@pytest.mark.parametrize("extra, fragment", [
    (["--validate", "10:15"], "--validate scores one record"),
    (["--covariate", "temperature_c"], "s0.csv: this file's format records no covariates"),
    (["--hours", "0", "1", "2"], "--hours: 3 values for 2 files"),
])
def test_a_chain_pooled_refuses_what_it_cannot_do_in_one_line(chain_files, capfd, extra,
                                                                fragment):
    rc, _ = run_main("identify", "--rig", "single", *chain_files[:2], "--pooled", *extra)
    assert rc == 2
    assert_one_line_error(capfd, fragment)


@pytest.mark.fault(injected="identify --pooled: two captures of a single pendulum whose files "
                            "record planes tilted 0 and 20 deg",
                   expected="one line naming the file and both tilts, exit 2, nothing fitted")
@pytest.mark.slow
def test_chain_captures_of_two_tilts_are_not_pooled(tmp_path, capfd):
    paths = []
    for tilt in (0, 20):
        cfg, data = tmp_path / f"t{tilt}.toml", tmp_path / f"data{tilt}"
        cfg.write_text(f'[rig]\nkind = "single"\nplane_tilt_deg = {tilt}\n[storage]\n'
                       f'directory = "{data}"\n[trigger]\nmax_duration_s = 6\n'
                       f'[mqtt]\nrig_id = "chain-tilt-{tilt}"\n')
        rc, out = run_main("--config", cfg, "run", "--sim", "--captures", "1", "--unpaced")
        assert rc == 0, out
        paths += [str(p) for p in data.glob("*.h5")]
    capfd.readouterr()
    rc, _ = run_main("identify", *paths, "--pooled")
    assert rc == 2
    assert_one_line_error(capfd, f"{paths[1]}: records a plane tilted 20 deg, {paths[0]} 0 deg")
    rc, out = run_main("identify", *paths, "--pooled", "--tilt", "10", "--json")
    assert rc == 0  # a lab that says the tilt is one (its recorded values wrong) is believed
    assert SessionResult.model_validate_json(out).rig_kind == "single"


def test_a_chain_simulation_refuses_a_drift_of_a_term_it_has_not(tmp_path, capfd):
    rc, _ = run_main("simulate", "--rig", "single", "--out", str(tmp_path / "x.csv"),
                     "--drift", "mu_v1=0.1")
    assert rc == 2
    assert_one_line_error(capfd, "--drift: drift of mu_v1: not a friction term of a chain")
    assert not (tmp_path / "x.csv").exists()
