"""Output error driven by seed 003's modified simplex, on the rig."""

import pytest

# private on purpose: the tests wrap the optimiser the method calls, to compare what the
# method reports with what the optimiser did
import hilrig.identify.methods._simplex as simplex_method
from hilrig.identify import TABLE_III_TRUTH, RigParams, identify, simulated_measurement
from hilrig.identify.methods import identify_simplex


def _run_recording_the_optimiser(run):
    """run() with the method's modified_simplex wrapped; (its result, the optimiser's)."""
    seen = []

    def recording(*args, **kwargs):
        seen.append(optimiser(*args, **kwargs))
        return seen[-1]

    optimiser = simplex_method.modified_simplex
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(simplex_method, "modified_simplex", recording)
        result = run()
    assert len(seen) == 1
    return result, seen[0]


@pytest.fixture(scope="module")
def short_run():
    m = simulated_measurement(RigParams(), TABLE_III_TRUTH, (0.0, 120.0), 6.0, rest_s=0.2)
    return _run_recording_the_optimiser(lambda: identify(m, method="simplex"))


@pytest.fixture(scope="module")
def short_result(short_run):
    return short_run[0]


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


def test_the_reported_restarts_are_the_optimisers(short_run):
    result, optimiser = short_run
    assert optimiser.nrestart > 0  # restarts on a successful extension happen here
    assert result.diagnostics["simplex_restarts"] == optimiser.nrestart
    assert result.diagnostics["evaluations"] == optimiser.nfev


@pytest.fixture(scope="module")
def converged_run():
    """A 2 s capture and looser tolerances: small enough for the simplex to converge."""
    m = simulated_measurement(RigParams(), TABLE_III_TRUTH, (0.0, 120.0), 2.0, rest_s=0.2)
    return _run_recording_the_optimiser(
        lambda: identify_simplex(m, maxfev=20_000, xatol=3e-2, fatol=1e-8))


def test_a_converged_simplex_reports_jacobian_intervals(converged_run):
    result, optimiser = converged_run
    assert optimiser.success and result.diagnostics["converged"]
    assert result.diagnostics["simplex_restarts"] == optimiser.nrestart > 0
    assert min(result.fit_percent.values()) > 99.9
    identified = {n: p for n, p in result.parameters.items() if p.identifiable}
    assert {"mu_d0", "mu_d1", "mu_v1"} <= set(identified)
    for name, p in identified.items():
        lo, hi = p.ci95
        assert lo < p.value < hi, name
        assert "stopped before converging" not in p.note
    assert result.parameters["mu_d1"].value == pytest.approx(6e-4, rel=0.05)
