"""Output error driven by seed 003's modified simplex, on the rig."""

import pytest

from identify import TABLE_III_TRUTH, RigParams, identify, simulated_measurement


@pytest.fixture(scope="module")
def short_result():
    m = simulated_measurement(RigParams(), TABLE_III_TRUTH, (0.0, 120.0), 6.0, rest_s=0.2)
    return identify(m, method="simplex")


def test_simplex_output_error_fits_the_capture(short_result):
    assert short_result.method == "simplex"
    assert min(short_result.fit_percent.values()) > 99.9
    value = short_result.parameters["mu_d1"].value or short_result.parameters["mu_d1"].assumed
    assert value == pytest.approx(6e-4, rel=0.05)


def test_an_unconverged_simplex_gives_no_intervals(short_result):
    converged = short_result.diagnostics["converged"]
    for p in short_result.parameters.values():
        if not converged:
            assert p.ci95 is None or p.value is None
