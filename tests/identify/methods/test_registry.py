"""The methods by name: each name runs its method, and the seed reproductions load only
when one of them is asked for."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from hilrig.identify import TABLE_III_TRUTH, RigParams, simulated_measurement
from hilrig.identify.methods import METHOD_NAMES, METHODS, identify

SEED_MODULES = ("_grey_box", "_output_error", "_regression", "_simplex", "_uas", "integral")


def test_the_registry_holds_every_name_the_command_line_offers():
    assert tuple(sorted(METHODS)) == METHOD_NAMES


def test_the_estimator_is_ready_without_loading_the_seed_methods():
    probe = ("import sys\nfrom hilrig.identify.methods import METHODS\n"
             "print(sorted(m.rsplit('.', 1)[-1] for m in sys.modules\n"
             "             if m.startswith('hilrig.identify.methods.') and\n"
             f"             m.rsplit('.', 1)[-1] in {SEED_MODULES!r}))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.strip() == "[]"


def test_a_seed_method_called_by_name_loads_and_reports_under_that_name():
    m = simulated_measurement(RigParams(), TABLE_III_TRUTH, duration=8.0)
    result = identify(m, "regression")
    assert result.method == "regression"
    assert np.isfinite(result.parameters["mu_d1"].value)
