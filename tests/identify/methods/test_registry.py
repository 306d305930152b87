"""The methods by name: each name runs its method, and the seed reproductions load only
when one of them is asked for."""

from __future__ import annotations

import importlib
import subprocess
import sys

import numpy as np
import pytest

from hilrig.identify import TABLE_III_TRUTH, RigParams, simulated_measurement
from hilrig.identify.methods import SEED_METHODS, identify


@pytest.mark.parametrize("name", sorted(SEED_METHODS))
def test_each_seed_method_is_where_the_registry_says(name):
    module, function = SEED_METHODS[name].split(":")
    method = getattr(importlib.import_module(module, "hilrig.identify.methods"), function)
    assert callable(method)
    # it reports its results under the name it is asked by
    assert sys.modules[method.__module__].METHOD == name


def test_the_estimator_is_ready_without_loading_the_seed_methods():
    seeds = tuple(target.split(":")[0].lstrip(".") for target in SEED_METHODS.values())
    probe = ("import sys\nfrom hilrig.identify.methods import METHODS\n"
             "print(sorted(m for m in sys.modules if m.startswith('hilrig.identify.methods.')\n"
             f"             and m.split('.')[3] in {seeds!r}))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.strip() == "[]"


def test_a_seed_method_called_by_name_runs_and_reports_under_that_name():
    m = simulated_measurement(RigParams(), TABLE_III_TRUTH, duration=8.0)
    result = identify(m, "regression")
    assert result.method == "regression"
    assert np.isfinite(result.parameters["mu_d1"].value)
