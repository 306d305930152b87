"""`hilrig identify FILE --rig single|nlink:N`: a lab's own record, held-out validation, and a
published parameter set scored under the same rules."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hilrig.daq.storage import read_joint_csv

from .test_cli import assert_one_line_error, run_main

DATA = Path(__file__).parents[2] / "data" / "multiarm"


def test_identify_validates_on_held_out_chunks_and_scores_a_published_set(tmp_path):
    params = tmp_path / "published.json"
    params.write_text(json.dumps({"m": [0.14758], "com": [0.14775], "l": [], "J": [1.0912e-4],
                                  "b": [2.2394e-4]}))
    rc, out = run_main("identify", DATA / "single_pendulum_1khz.csv", "--rig", "single",
                       "--validate", "36.668:55", "--segment-s", "9.167",
                       "--params", f"@{params}", "--json")
    assert rc == 0
    doc = json.loads(out)
    assert doc["rig_kind"] == "single" and doc["schema"] == "hilrig.result/1"
    assert [v["span"][0] for v in doc["validation"]] == [36.668, 45.835]
    for ours, theirs in zip(doc["validation"], doc["validation_given"], strict=True):
        assert ours["fit_percent"]["theta1"] >= theirs["fit_percent"]["theta1"] - 0.02
    # the published set scored here agrees with the fit its builders report (99.81 %)
    assert doc["validation_given"][0]["fit_percent"]["theta1"] == pytest.approx(99.81, abs=0.05)
    assert all(s["span_s"][1] < 36.668 for s in doc["diagnostics"]["segments"])
    # the published ratios, named as the result's, for reading side by side
    assert doc["given_parameters"]["kappa1/nu1"] == pytest.approx(0.15275, abs=1e-4)
    assert doc["given_parameters"]["b1/nu1"] == pytest.approx(0.010269, abs=1e-5)


def test_one_measured_quantity_gives_every_value_in_si_with_its_uncertainty(tmp_path):
    rc, out = run_main("identify", DATA / "single_pendulum_1khz.csv", "--rig", "single",
                       "--friction-law", "coulomb-viscous-drag", "--measured",
                       "nu1=0.0218+-2%", "--json")
    assert rc == 0
    doc = json.loads(out)
    rig, ratios = doc["rig"], doc["parameters"]
    assert rig["nu1"]["value"] == pytest.approx(0.0218)
    kappa = rig["kappa1"]
    assert kappa["value"] == pytest.approx(0.0218 * ratios["kappa1/nu1"]["value"])
    lo, hi = kappa["ci95"]  # the 2 % of the weighing carries into it
    assert (hi - lo) / 2 == pytest.approx(1.96 * 0.02 * kappa["value"], rel=0.05)
    assert kappa["note"].startswith("kg m^2")
    assert rig["Fc1"]["note"].startswith("N m")


def test_the_text_summary_says_what_each_value_means(tmp_path):
    csv = tmp_path / "swing.csv"
    d = np.loadtxt(DATA / "single_pendulum_1khz.csv", delimiter=",", skiprows=1)[:8000]
    # degrees from the hanging position, as the comment above the header says
    body = "\n".join(f"{t:.3f},{np.degrees(q - np.pi):.6f}" for t, q in d)
    csv.write_text(f"# unit=deg zero=hanging\nt,theta1\n{body}\n")
    table = read_joint_csv(csv)
    assert table.angles[:, 0] == pytest.approx(d[:, 1], abs=1e-6)
    rc, out = run_main("identify", csv, "--rig", "single", "--friction-law", "viscous")
    assert rc == 0
    assert "kappa1/nu1" in out and "inertia of link 1 about its joint" in out
    assert "theta1" in out


@pytest.mark.parametrize("args, fragment", [
    (("--rig", "nlink:7"), "expected furuta, single or nlink:N"),
    (("--rig", "nlink:2"), "holds 1 joint(s), rig kind nlink:2 has 2"),
    (("--rig", "single", "--validate", "5:1"), "T1 must be after T0"),
    (("--rig", "single", "--params", "{\"kappa1\": 1}"), "lacks nu1"),
    (("--validate", "1:2"), "--validate is for --rig single or nlink:N"),
])
def test_bad_rig_arguments_are_one_line_errors(capfd, args, fragment):
    rc, _ = run_main("identify", DATA / "single_pendulum_1khz.csv", *args)
    assert rc == 2
    assert_one_line_error(capfd, fragment)


def test_a_record_header_other_than_t_theta_is_refused(tmp_path, capfd):
    csv = tmp_path / "x.csv"
    csv.write_text("t,alpha\n" + "\n".join(f"{k / 1000},{k}" for k in range(200)))
    rc, _ = run_main("identify", csv, "--rig", "single")
    assert rc == 2
    assert_one_line_error(capfd, "header must be t,theta1[,theta2[,theta3]]")


def test_a_run_on_a_single_pendulum_records_its_kind_and_identifies_it_as_one(tmp_path):
    from hilrig.daq.storage import read_capture

    cfg = tmp_path / "hilrig.toml"
    cfg.write_text(f'[rig]\nkind = "single"\n[storage]\ndirectory = "{tmp_path / "data"}"\n'
                   '[trigger]\nmax_duration_s = 8\n'
                   '[mqtt]\nrig_id = "chain-single"\n')
    rc, out = run_main("--config", cfg, "run", "--sim", "--captures", "1", "--unpaced")
    assert rc == 0, out
    (path,) = (tmp_path / "data").glob("*.h5")
    assert read_capture(path).kind.kind == "single"
    rc, out = run_main("identify", path, "--json")  # the file says how to identify it
    assert rc == 0
    doc = json.loads(out)
    assert doc["rig_kind"] == "single" and doc["fit_percent"]["theta1"] > 99.9


def test_simulate_writes_a_chain_record_that_identify_and_compare_read(tmp_path):
    out = tmp_path / "double.csv"
    rc, text = run_main("simulate", "--rig", "nlink:2", "--out", out, "--duration", "6",
                        "--rest", "0.5", "--tremor", "0.002", "--jitter", "1", "--seed", "3",
                        "--angles", "110", "100")
    assert rc == 0 and "nlink:2" in text
    table = read_joint_csv(out)
    assert table.angles.shape[1] == 2 and table.rate_hz == pytest.approx(1000.0)
    assert table.angles[0] == pytest.approx(np.radians([110.0, 100.0]), abs=0.02)
    rc, text = run_main("compare", out, "--rig", "nlink:2", "--plot", tmp_path / "fig")
    assert rc == 0  # --plot was refused for a chain rig
    figure = tmp_path / "fig" / "compare_nlink2.png"
    assert f"wrote {figure}" in text and figure.stat().st_size > 20_000
    rows = {line.split()[0]: line for line in text.splitlines()
            if line.startswith(("regression", "shooting"))}
    assert set(rows) == {"regression", "shooting"}
    fit = [float(x.rstrip("%")) for x in rows["shooting"].split()[2:4]]
    assert min(fit) > 99.9  # shooting follows its own simulator's swing


def test_offline_commands_take_the_rig_kind_of_the_config_when_no_rig_is_given(tmp_path):
    cfg = tmp_path / "hilrig.toml"
    cfg.write_text('[rig]\nkind = "single"\nplane_tilt_deg = 20.0\n'
                   'friction = "coulomb-viscous"\n')
    out = tmp_path / "single.csv"
    rc, text = run_main("--config", cfg, "simulate", "--out", out, "--duration", "4",
                        "--rest", "0.2", "--angles", "100")
    assert rc == 0 and "single" in text and "tilt 20" in out.read_text().splitlines()[0]
    assert read_joint_csv(out).angles.shape[1] == 1
    rc, text = run_main("--config", cfg, "identify", out, "--json")
    assert rc == 0
    doc = json.loads(text)
    assert doc["rig_kind"] == "single"
    assert doc["diagnostics"]["friction_law"] == "coulomb-viscous"


def test_simulate_refuses_a_chain_record_as_hdf5(tmp_path, capfd):
    rc, _ = run_main("simulate", "--rig", "single", "--out", tmp_path / "s.h5")
    assert rc == 2
    assert_one_line_error(capfd, "written as CSV")


@pytest.mark.slow
def test_a_session_on_a_single_pendulum_lists_its_results_by_its_own_parameters(tmp_path):
    """Three captures of a single pendulum: each result by the chain's parameters, and at
    the session's end its answer, pooled by them too. The bridge's unused channel is no
    stuck encoder (it suspended such a session for good after its first capture)."""
    cfg = tmp_path / "hilrig.toml"
    cfg.write_text(f'[rig]\nkind = "single"\n[storage]\ndirectory = "{tmp_path / "data"}"\n'
                   '[trigger]\nmax_duration_s = 8\n'
                   '[mqtt]\nrig_id = "chain-session"\n')
    rc, out = run_main("--config", cfg, "session", "start", "--captures", "3", "--sim",
                       "--unpaced")
    assert rc == 0, out
    assert "suspended" not in out and "no drift over 3 captures" in out  # one rig, one friction
    rc, pooled = run_main("--config", cfg, "results", "list", "--pooled")
    assert rc == 0
    header, row = pooled.splitlines()[:2]
    assert header.split()[2:6] == ["captures", "verdict", "Fc1/nu1", "b1/nu1"]
    assert row.split()[2:5] == ["3", "no", "drift"]
    rc, table = run_main("--config", cfg, "results", "list")
    header, row = table.splitlines()[:2]
    assert header.split()[4:6] == ["rig_kind", "fit_theta1"] and "Fc1/nu1" in header.split()
    assert "mu_d0" not in header.split() and row.split()[4] == "single"
    rc, text = run_main("--config", cfg, "results", "list", "--format", "csv")
    assert "Fc1/nu1_ci95_lo" in text.splitlines()[0]
