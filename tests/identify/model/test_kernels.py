"""The estimator's compiled kernels are compiled ahead, in child processes, once: a real
identification afterwards loads every kernel it calls from numba's cache."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from hilrig.identify.model import KERNELS, ensure_compiled

#: a short real identification of each rig kind, its kernels' compiles and loads logged
_IDENTIFY = {
    "furuta": """
from hilrig.identify import TABLE_III_TRUTH, RigParams, identify, simulated_measurement
m = simulated_measurement(RigParams(), TABLE_III_TRUTH, duration=4.0)
identify(m, method="shooting")
""",
    "chain": """
import numpy as np
from hilrig.identify import ChainRig, identify_chain
from hilrig.identify.seeds import lab_chain
from hilrig.identify.signal import chain_record
from hilrig.identify.model import Realism
rig = ChainRig(kind="single")
rec = chain_record(rig, lab_chain(1), [2.0, 0.0], 4.0, Realism(), rest_s=0.2, rate_hz=1000.0)
identify_chain(rec, rig)
""",
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("family", sorted(KERNELS))
def test_kernels_compiled_ahead_serve_the_first_identification(tmp_path, monkeypatch, family):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    messages: list[str] = []
    spent = ensure_compiled(family, lambda _f, msg: messages.append(msg))
    assert spent > 0 and messages and "once after an install" in messages[0]
    assert len(list(tmp_path.glob(f"hilrig-kernels-{family}-*.ok"))) == 1
    t0 = time.perf_counter()
    assert ensure_compiled(family) == 0.0  # warm: a stamp, no child
    assert time.perf_counter() - t0 < 1.0
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_DEBUG_CACHE="1")
    run = subprocess.run([sys.executable, "-c", _IDENTIFY[family]], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    names = {name for group in KERNELS[family] for _m, name, _a in group}
    lines = run.stdout.splitlines()

    def logged(what: str) -> set[str]:
        return {n for n in names for line in lines if what in line and f".{n}-" in line}

    assert logged("data saved") == set()  # none of them compiled in the identifying process
    assert logged("data loaded") == names
