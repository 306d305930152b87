"""A record in a convention other than the one it states is refused before any fit, with
the flag that reads it; every rig kind takes --unit and --zero.

Before: a Furuta CSV in degrees ran 12 s into an `SVD did not converge` traceback; a single
pendulum's CSV in degrees came out 166 % off with exit 0; a pendulum measured from hanging
fitted at 32 % with nothing said on the terminal; a chain's CSV without --rig was told only
that its header was wrong.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from hilrig.daq.cli.chain import _commands as chain_commands
from hilrig.daq.cli.furuta import _commands as furuta_commands
from hilrig.daq.storage import read_capture

from .test_cli import assert_one_line_error, run_main

DATA = Path(__file__).parents[2] / "data" / "multiarm"


def _rewrite(src: Path, dst: Path, convert: Callable[[np.ndarray], np.ndarray],
             comment: str = "") -> Path:
    """src's rows with their angles converted, under its header (comments dropped)."""
    lines = [ln for ln in src.read_text().splitlines() if not ln.startswith("#")]
    rows = np.loadtxt(lines[1:], delimiter=",", ndmin=2)
    rows[:, 1:] = convert(rows[:, 1:])
    body = "\n".join(",".join(repr(float(x)) for x in r) for r in rows)
    dst.write_text(comment + lines[0] + "\n" + body + "\n")
    return dst


@pytest.fixture(scope="module")
def furuta_csv(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("conventions")
    assert run_main("simulate", "--out", d / "f.h5", "--duration", "6", "--rate", "1000")[0] == 0
    assert run_main("export", d / "f.h5", "--out", d / "f.csv")[0] == 0
    return d / "f.csv"


@pytest.fixture
def no_fit(monkeypatch):
    """Any fit fails the test: the refusal comes before one."""
    def fit(*args, **kwargs):
        raise AssertionError("a fit was started")
    monkeypatch.setattr(furuta_commands, "identify", fit)
    monkeypatch.setattr(chain_commands, "identify_chain", fit)


def test_a_furuta_csv_in_degrees_is_refused_before_any_fit_with_the_flag_that_reads_it(
        furuta_csv, tmp_path, capfd, no_fit):
    deg = _rewrite(furuta_csv, tmp_path / "deg.csv", np.degrees)
    assert run_main("identify", deg)[0] == 2
    assert_one_line_error(capfd, "deg.csv", "theta1", "--unit deg", "`# unit=deg`")
    assert run_main("compare", deg)[0] == 2
    assert_one_line_error(capfd, "deg.csv", "--unit deg")


def test_a_furuta_csv_read_in_its_stated_unit_and_zero_gives_the_same_angles(furuta_csv,
                                                                              tmp_path):
    rad = read_capture(furuta_csv).angles_rad
    deg = _rewrite(furuta_csv, tmp_path / "deg.csv", np.degrees)
    assert np.allclose(read_capture(deg, unit="deg").angles_rad, rad, atol=1e-12)
    said = _rewrite(furuta_csv, tmp_path / "said.csv", np.degrees, "# unit=deg\n")
    assert np.allclose(read_capture(said).angles_rad, rad, atol=1e-12)
    # from upright, half a turn either way: the pendulum ends near 0 as hilrig's do
    for turn in (math.pi, -math.pi):
        up = _rewrite(furuta_csv, tmp_path / "up.csv", lambda a, t=turn: a + [0.0, t])
        assert np.allclose(read_capture(up, zero="upright").angles_rad, rad, atol=1e-12)


def test_a_furuta_pendulum_measured_from_upright_names_zero_upright(furuta_csv, tmp_path,
                                                                    capfd, no_fit):
    up = _rewrite(furuta_csv, tmp_path / "up.csv", lambda a: a + [0.0, math.pi])
    assert run_main("identify", up)[0] == 2
    assert_one_line_error(capfd, "up.csv", "theta1", "--zero upright")


def test_the_flags_identify_a_furuta_csv_in_degrees(furuta_csv, tmp_path):
    deg = _rewrite(furuta_csv, tmp_path / "deg.csv", np.degrees)
    rc, out = run_main("identify", deg, "--unit", "deg", "--method", "regression")
    assert rc == 0 and "goodness of fit" in out


def test_angles_wrapped_to_one_turn_are_refused_naming_the_samples(furuta_csv, tmp_path,
                                                                   capfd, no_fit):
    wrapped = _rewrite(furuta_csv, tmp_path / "w.csv", lambda a: np.mod(a, 2 * math.pi))
    assert run_main("identify", wrapped)[0] == 2
    assert_one_line_error(capfd, "w.csv", "wrapped to one turn", "between samples")


def test_an_hdf5_capture_takes_no_unit(furuta_csv, capfd):
    assert run_main("identify", furuta_csv.with_suffix(".h5"), "--unit", "deg")[0] == 2
    assert_one_line_error(capfd, "f.h5", "for a CSV's angles")


@pytest.mark.parametrize("convert,flag", [(np.degrees, "--unit deg"),
                                          (lambda a: a - math.pi, "--zero hanging")])
def test_a_single_pendulums_csv_in_another_convention_is_refused_with_the_flag(
        tmp_path, capfd, no_fit, convert, flag):
    other = _rewrite(DATA / "single_pendulum_1khz.csv", tmp_path / "s.csv", convert)
    assert run_main("identify", other, "--rig", "single")[0] == 2
    assert_one_line_error(capfd, "s.csv", "theta1", flag)


@pytest.mark.parametrize("name,kind", [("single_pendulum_1khz.csv", "single"),
                                       ("double_pendulum_1khz.csv", "nlink:2")])
def test_a_chain_record_without_rig_is_told_which_rig(capfd, no_fit, name, kind):
    assert run_main("identify", DATA / name)[0] == 2
    assert_one_line_error(capfd, name, f"--rig {kind}")
