"""Two methods across captures: each parameter's relative differences with intervals, the
mean's interval over the captures, and what only one method identifies."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hilrig.identify import IdentificationResult, ParameterEstimate
from hilrig.identify.report import compare_across_captures, plot_shifts, shift_table


def _result(method: str, capture_id: str, mu_d0: float, half: float,
            mu_v0: float | None = 1e-4) -> IdentificationResult:
    params = {"mu_d0": ParameterEstimate(value=mu_d0, ci95=(mu_d0 - half, mu_d0 + half),
                                         identifiable=True)}
    params["mu_v0"] = (ParameterEstimate(value=mu_v0, ci95=(0.9 * mu_v0, 1.1 * mu_v0),
                                         identifiable=True) if mu_v0 is not None
                       else ParameterEstimate(value=None, identifiable=False, note="n/i"))
    return IdentificationResult(method=method, capture_id=capture_id, parameters=params,
                                fit_percent={"arm": 99.5, "pendulum": 99.9},
                                compute_seconds=1.0, normalized_compute_time=1e-5,
                                capture_seconds=20.0, sample_rate_hz=1e4, samples=200_001,
                                tilt_deg=10.0)


def test_a_method_that_reads_two_percent_higher_is_seen_with_its_interval():
    rng = np.random.default_rng(7)
    shifts_true = 2.0 + rng.normal(0.0, 0.5, 12)  # B reads 2 % higher, +-0.5 % scatter
    pairs = [(_result("a", f"c{k}", 1e-3, 1e-6),
              _result("b", f"c{k}", 1e-3 * (1 + s / 100), 1e-6, mu_v0=None))
             for k, s in enumerate(shifts_true)]
    shifts = compare_across_captures(pairs)
    d0 = shifts["mu_d0"]
    assert d0.n == 12 and d0.mean == pytest.approx(np.mean(shifts_true))
    lo, hi = d0.mean_ci
    assert lo < 2.0 < hi and hi - lo < 1.0
    # each capture's interval: two +-0.1 % intervals combined, +-0.14 %: all exclude zero
    assert d0.half_width[0] == pytest.approx(100 * math.hypot(1e-6, 1e-6) / 1e-3, rel=1e-3)
    assert d0.beyond == 12
    # B leaves mu_v0 unidentified on every capture: counted, never a number
    assert shifts["mu_v0"].n == 0 and shifts["mu_v0"].only_a == 12
    table = shift_table(shifts, "a", "b")
    assert "mu_d0" in table and "12/12" in table


def test_differences_inside_the_intervals_are_not_counted_beyond(tmp_path):
    pairs = [(_result("a", f"c{k}", 1e-3, 1e-4), _result("b", f"c{k}", 1.01e-3, 1e-4))
             for k in range(5)]
    shifts = compare_across_captures(pairs)
    assert shifts["mu_d0"].beyond == 0  # 1 % against +-14 %
    png = tmp_path / "shifts.png"
    plot_shifts(shifts, "a", "b", str(png))
    assert png.stat().st_size > 10_000
