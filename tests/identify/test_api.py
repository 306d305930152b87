"""The package's root: the public names, one version, one timestamp, a cheap import."""

import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from importlib.metadata import PackageNotFoundError, version

import hilrig.identify as identify
from hilrig.identify import SOFTWARE_VERSION, IdentificationResult, ParameterEstimate, utc_now

#: every name `from identify import X` gave before the package was split into layers
NAMES_BEFORE_THE_SPLIT = (
    "METHODS", "PARAM_NAMES", "RIG_LAYOUT", "TABLE_III_TRUTH", "FrictionParams",
    "IdentificationResult", "Measurement", "ParameterEstimate", "Release", "RigParams",
    "acceleration", "contiguous_segments", "decimate_mean", "find_release", "fit_percent",
    "friction", "friction_torque", "holoborodko_first", "holoborodko_first_coefficients",
    "holoborodko_second", "holoborodko_second_coefficients", "savitzky_golay_first",
    "savitzky_golay_second", "identify", "identify_grey_box", "inverse_dynamics",
    "normalized_compute_time", "simulate", "simulate_capture", "simulate_rk4", "total_energy",
)


def test_every_name_of_the_flat_package_is_still_exported():
    for name in NAMES_BEFORE_THE_SPLIT:
        assert name in identify.__all__, name
        assert getattr(identify, name) is not None, name
    for name in identify.__all__:
        assert hasattr(identify, name), name


def test_utc_now_is_iso_8601_with_milliseconds_and_z():
    stamp = utc_now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert abs(parsed - datetime.now(UTC)) < timedelta(seconds=5)


def _result() -> IdentificationResult:
    est = ParameterEstimate(value=1.0, ci95=None, identifiable=True)
    return IdentificationResult(method="m", parameters={"mu_d0": est}, fit_percent={"arm": 99.0},
                                compute_seconds=1.0, normalized_compute_time=1e-5,
                                capture_seconds=10.0, sample_rate_hz=1e4, samples=100_000,
                                tilt_deg=10.0)


def test_a_result_records_the_one_software_version_and_a_utc_now_stamp():
    try:
        installed = version("hilrig")
    except PackageNotFoundError:
        installed = "0+unknown"
    assert SOFTWARE_VERSION == installed
    r = _result()
    assert r.software_version == SOFTWARE_VERSION
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", r.created_utc)


def test_importing_identify_does_not_load_matplotlib():
    code = "import sys, hilrig.identify; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
