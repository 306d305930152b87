"""Output error driven by seed 003's modified simplex, on the rig."""

import math

import numpy as np
import pytest

from identify import TABLE_III_TRUTH, Measurement, RigParams, identify, simulate

QUANTUM = 2 * math.pi / 40_000


@pytest.fixture(scope="module")
def short_result():
    rig = RigParams()
    _, s, _ = simulate(rig, TABLE_III_TRUTH, [0.0, math.radians(120), 0.0, 0.0], 6.0)
    c = np.rint(s[:, :2] / QUANTUM).astype(np.int32)
    c = np.vstack([np.repeat(c[:1], 2000, axis=0), c])
    m = Measurement(angles=c * QUANTUM, sample_index=np.arange(c.shape[0]), rate_hz=1e4, rig=rig,
                    resolution_rad=QUANTUM)
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
