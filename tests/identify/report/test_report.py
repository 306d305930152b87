"""Every method on one capture side by side: Table V, the parameter table, the figures."""

import subprocess
import sys

import pytest

from hilrig.identify import PARAM_NAMES, TABLE_III_TRUTH, RigParams, simulated_measurement
from hilrig.identify.report import compare_methods, parameter_table, table_v, write_figures


@pytest.fixture(scope="module")
def short_capture():
    return simulated_measurement(RigParams(), TABLE_III_TRUTH, duration=8.0, rest_s=0.3,
                                 capture_id="short")


@pytest.fixture(scope="module")
def results(short_capture):
    seen = []
    out = compare_methods(short_capture, ["regression", "integral"],
                          progress=lambda f, msg: seen.append((f, msg)))
    assert seen[0] == (0.0, "regression") and seen[-1] == (1.0, "done")
    return out


def test_table_v_has_a_row_per_method_and_the_seeds_rows(results):
    table = table_v(results).splitlines()
    assert table[0].split()[:2] == ["method", "compute"]
    assert [line.split()[0] for line in table[1:3]] == ["regression", "integral"]
    assert any(line.startswith("UAS (seed)") for line in table)
    assert any(line.startswith("grey-box optimisation (seed)") for line in table)


def test_parameter_table_shows_assumed_values_in_parentheses(results):
    lines = parameter_table(results).splitlines()
    assert [line.split()[0] for line in lines[1:1 + len(PARAM_NAMES)]] == list(PARAM_NAMES)
    mu_s0 = lines[1 + PARAM_NAMES.index("mu_s0")].split()
    assert mu_s0[1].startswith("(") and mu_s0[2] == "-"  # regression assumes, integral has none


def test_figures_are_written(short_capture, results, tmp_path):
    paths = write_figures(short_capture, results, tmp_path)
    assert [p.name for p in paths] == ["fig6_responses.png", "fig7_spectra.png",
                                       "fig8_residuals.png"]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_importing_the_report_does_not_load_matplotlib():
    code = "import sys, hilrig.identify.report; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


def test_a_method_that_cannot_take_the_capture_is_a_row_saying_why_not_a_crash():
    # seed 000's Table V noise (0.1 rad at 1 kHz) leaves the regression no samples
    # away from reversals; the other methods' rows must still come out
    from hilrig.identify.model import Realism

    noisy = simulated_measurement(RigParams(), TABLE_III_TRUTH, duration=4.0, rest_s=0.3,
                                  rate_hz=1000.0, realism=Realism(seed=1, noise_rad=0.1))
    rows = compare_methods(noisy, ["regression", "uas"])
    assert [r.method for r in rows] == ["regression", "uas"]
    failed = rows[0]
    assert "could not run on this capture" in failed.diagnostics["error"]
    assert all(not p.identifiable and p.value is None for p in failed.parameters.values())
    assert rows[1].parameters["mu_d0"].value is not None
    table = table_v(rows)
    assert "regression" in table and "uas" in table


def test_a_diverged_method_is_drawn_off_scale_not_flattening_the_others():
    # fig. 8: the UAS residual (+-100 deg) made every other method's a flat line
    import numpy as np

    from hilrig.identify.report import OFF_SCALE_FACTOR, residual_limit

    t = np.linspace(0, 30, 3000)
    residuals = {"grey-box": 0.02 * np.sin(t), "output-error": 0.03 * np.sin(3 * t),
                 "shooting": 0.01 * np.cos(t), "uas": 100.0 * np.sin(0.2 * t)}
    limit, off = residual_limit(residuals)
    assert off == ["uas"]
    assert 0.03 <= limit <= 0.03 * 1.3  # the largest of the rest, with a margin
    # methods that differ by less than the factor all stay on the axis
    close = {"a": 0.02 * np.sin(t), "b": 0.02 * OFF_SCALE_FACTOR / 2 * np.sin(t)}
    limit, off = residual_limit(close)
    assert off == [] and limit >= 0.1
