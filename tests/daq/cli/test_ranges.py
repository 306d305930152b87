"""Every number `identify`, `compare` and `simulate` take is checked against its range
before any work: outside it, nan or inf is one line naming the option and the range, exit
2, nothing written; never an allocation of 15 GiB, a LinAlgError or numpy's warnings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_cli import assert_one_line_error, run_main

DATA = Path(__file__).parents[2] / "data" / "multiarm"
SWING = DATA / "single_pendulum_1khz.csv"  # 0-55 s of a single pendulum at 1 kHz

# a numpy warning on the way to the refusal fails the test
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> Path:
    """A 0.5 s Furuta capture of the nominal rig (m2 0.128 kg, tilt 10 deg)."""
    path = tmp_path_factory.mktemp("ranges") / "c.h5"
    assert run_main("simulate", "--out", path, "--duration", "0.5", "--rest", "0.05")[0] == 0
    return path


def _params(**change: list[float]) -> str:
    return json.dumps({"m": [0.14758], "com": [0.14775], "l": [], "J": [1.0912e-4],
                       "b": [2.2394e-4], **change})


@pytest.mark.fault(injected="bad input: numbers out of range, nan and 1e308 for every float "
                            "option of `simulate`",
                   expected="one line naming the option and its range, exit 2, no file")
@pytest.mark.parametrize("args, fragment", [
    (["--duration", "1e308"], "--duration must be in (0, 3600] s, got 1e+308"),
    (["--duration", "0"], "--duration must be in (0, 3600] s"),
    (["--duration", "nan"], "--duration must be in"),
    (["--duration", "200"], "longer than the settings allow (110.5 s, 1105001 samples); raise "
                            "trigger.max_duration_s"),
    (["--rest", "1e308"], "--rest must be in [0, 10] s"),
    (["--tilt", "1e308"], "--tilt must be in [0, 90) deg"),
    (["--theta0", "1e308"], "--theta0 must be in [-360, 360] deg"),
    (["--theta1=-inf"], "--theta1 must be in [-360, 360] deg, got -inf"),
    (["--rate", "0"], "--rate must be in [100, 100000] Hz"),
    (["--rate", "nan"], "--rate must be in"),
    (["--push", "1e308", "0"], "--push must be in [-20, 20] rad/s"),
    (["--noise", "1e308"], "--noise"),
    (["--drag", "inf"], "--drag"),
    (["--friction", '{"mu_v1": 1e308}'], "--friction: mu_v1 must be in [0, 0.25]"),
    (["--friction", '{"omega_t1": 1e-308}'], "--friction: omega_t1 must be in [5e-06, 5]"),
    (["--rig", "single", "--angles", "1e308"], "--angles must be in [-360, 360] deg"),
    (["--rig", "nlink:2", "--angles", "120", "nan"], "--angles must be in"),
    (["--rig", "single", "--rate", "0"], "--rate must be in [100, 100000] Hz"),
    (["--rig", "single", "--duration", "2000"], "longer than the settings allow"),
    (["--rig", "single", "--params", _params(m=[1e308])], "--params: m must be in [-1000, 1000]"),
    (["--rig", "single", "--params", _params(J=[float("nan")])], "--params"),
])
def test_simulate_refuses_a_number_out_of_range(tmp_path, capfd, args, fragment):
    out = tmp_path / ("x.csv" if "--rig" in args else "x.h5")
    rc, _ = run_main("simulate", "--out", out, *args)
    assert rc == 2
    assert_one_line_error(capfd, fragment)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.fault(injected="bad input: --segment-s 1e-9, 0, nan; --validate 1e300:1e308; "
                            "--measured, --tilt, --params of 1e308 to `identify --rig single`",
                   expected="one line naming the option, exit 2, before the fit")
@pytest.mark.parametrize("args, fragment", [
    (["--validate", "36:40", "--segment-s", "1e-9"], "--segment-s must be in [0.3, 3610] s"),
    (["--validate", "36:40", "--segment-s", "0"], "--segment-s must be in [0.3, 3610] s, got 0"),
    (["--validate", "36:40", "--segment-s", "nan"], "--segment-s must be in"),
    (["--validate", "36:40", "--segment-s", "1e308"], "--segment-s must be in"),
    (["--segment-s", "2"], "--segment-s is for --validate"),
    (["--validate", "1e300:1e308"], "the record spans 0-55 s; the held-out span must overlap"),
    (["--validate", "1:1e999"], "T0 and T1 must be finite seconds"),
    (["--validate", "40:36"], "T1 must be after T0"),
    (["--measured", "nu1=1e308+-1%"], "--measured nu1 must be in [1e-09, 1000]"),
    (["--measured", "nu1=0.02+-1e-300"], "--measured nu1: its uncertainty must be in [1e-06, 1]"),
    (["--tilt", "1e308"], "--tilt must be in [0, 90) deg"),
    (["--tilt", "nan"], "--tilt must be in [0, 90) deg, got nan"),
    (["--cad-uncertainty", "nan"], "--cad-uncertainty must be in (0, 100] %"),
    (["--validate", "36:40", "--params-only", "--params", _params(J=[1e308])],
     "--params: J must be in [-1000, 1000]"),
    (["--validate", "36:40", "--params-only", "--params", '{"nu1": 1, "kappa1": 1e300}'],
     "--params: each value must lie within a factor of 1e+06"),
    (["--validate", "36:40", "--params-only", "--params", '{"nu1": 1, "kappa1": -1}'],
     "--params: every inertia kappa must be positive"),
    (["--validate", "36:40", "--params-only", "--params", '{"nu1": 1, "kappa1": 1, "b1": -1}'],
     "no friction value negative"),
])
def test_identify_a_chain_refuses_a_number_out_of_range(capfd, args, fragment):
    rc, _ = run_main("identify", SWING, "--rig", "single", *args)
    assert rc == 2
    assert_one_line_error(capfd, fragment)


@pytest.mark.fault(injected="bad input: --measured m2=1e6+-1, 1e308, 1e-300, an uncertainty "
                            "of 1e-300 to a Furuta `identify` and `compare`",
                   expected="one line naming the value and its range, exit 2 (was a "
                            "LinAlgError traceback)")
@pytest.mark.parametrize("command", ["identify", "compare"])
@pytest.mark.parametrize("args, fragment", [
    (["--measured", "m2=1e6+-1"], "--measured m2=1e+06 is not within a factor of 10 of the "
                                  "rig's nominal 0.128"),
    (["--measured", "m2=1e308+-1"], "is not within a factor of 10"),
    (["--measured", "m2=1e-300+-1e-301"], "is not within a factor of 10"),
    (["--measured", "m2_l2=1e308+-1%"], "--measured m2_l2=1e+308 is not within"),
    (["--measured", "m2=0.128+-1e-300"], "--measured m2: its uncertainty must be in [1e-06, 1]"),
    (["--measured", "tilt_deg=10+-1e-300"], "--measured tilt_deg: its uncertainty must be in "
                                            "[0.0001, 45] deg"),
    (["--measured", "tilt_deg=1e308+-1"], "--measured tilt_deg must be in [0, 90) deg"),
    (["--tilt", "1e308"], "--tilt must be in [0, 90) deg"),
    (["--cad-uncertainty", "1e308"], "--cad-uncertainty must be in (0, 100] %"),
])
def test_a_furuta_fit_refuses_a_number_out_of_range(capture, capfd, command, args, fragment):
    capfd.readouterr()
    rc, _ = run_main(command, capture, *args)
    assert rc == 2
    assert_one_line_error(capfd, fragment)


def test_values_at_the_ends_of_their_ranges_are_taken(capture, tmp_path):
    rc, out = run_main("identify", capture, "--method", "regression", "--measured",
                       "m2=1.28+-0.0001%", "--measured", "tilt_deg=10+-0.0001", "--json")
    assert rc == 0 and json.loads(out)["method"] == "regression"
    rc, _ = run_main("simulate", "--out", tmp_path / "s.h5", "--duration", "0.05", "--rest", "10",
                     "--theta0", "-360", "--theta1", "360", "--tilt", "89.9", "--rate", "100")
    assert rc == 0
