"""The estimator's compiled kernels are compiled ahead, in child processes, once: a real
identification afterwards loads every kernel it calls from numba's cache."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from hilrig.identify.model import KERNELS, ensure_compiled


def _record(family: str, path) -> None:
    """A short record of the rig kind, simulated here: the identifying process below
    only identifies, as `hilrig identify FILE` does, so every kernel it compiles is its."""
    import numpy as np

    from hilrig.identify import TABLE_III_TRUTH, ChainRig, RigParams, simulated_measurement
    from hilrig.identify.model import Realism
    from hilrig.identify.seeds import lab_chain
    from hilrig.identify.signal import chain_record

    if family == "furuta":
        m = simulated_measurement(RigParams(), TABLE_III_TRUTH, duration=4.0)
    else:
        m = chain_record(ChainRig(kind="single"), lab_chain(1), [2.0, 0.0], 4.0, Realism(),
                         rest_s=0.2, rate_hz=1000.0)
    np.savez(path, angles=m.angles, sample_index=m.sample_index, rate_hz=m.rate_hz,
             resolution=m.resolution_rad or 0.0)


#: a real identification of each rig kind's record, its kernels' compiles and loads logged
_IDENTIFY = {
    "furuta": """
import sys, numpy as np
from hilrig.identify import Measurement, identify
d = np.load(sys.argv[1])
m = Measurement(angles=d["angles"], sample_index=d["sample_index"],
                rate_hz=float(d["rate_hz"]), resolution_rad=float(d["resolution"]) or None)
r = identify(m, method="shooting", progress=lambda f, msg: print("progress:", msg))
print("seconds:", r.diagnostics["compile_seconds"], r.compute_seconds)
""",
    "chain": """
import sys, numpy as np
from hilrig.identify import ChainRig, Record, identify_chain
d = np.load(sys.argv[1])
rec = Record(angles=d["angles"], sample_index=d["sample_index"], rate_hz=float(d["rate_hz"]),
             resolution_rad=float(d["resolution"]) or None)
r = identify_chain(rec, ChainRig(kind="single"),
                   progress=lambda f, msg: print("progress:", msg))
print("seconds:", r.diagnostics["compile_seconds"], r.compute_seconds)
""",
}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("family", sorted(KERNELS))
def test_kernels_compiled_ahead_serve_the_first_identification(tmp_path, monkeypatch, family):
    # the first identification after an install took 20 s, all of it stored as its
    # compute_seconds: the compile is done ahead and reported apart
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    record = tmp_path / "record.npz"
    _record(family, record)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), NUMBA_DEBUG_CACHE="1")
    run = subprocess.run([sys.executable, "-c", _IDENTIFY[family], str(record)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    lines = run.stdout.splitlines()
    progress = [ln for ln in lines if ln.startswith("progress:")]
    assert "once after an install" in progress[0]
    compile_s = float(next(ln for ln in lines if ln.startswith("seconds:")).split()[1])
    assert compile_s > 0.5  # said apart from compute_seconds, which it is not part of
    assert len(list(tmp_path.glob(f"hilrig-kernels-{family}-*.ok"))) == 1
    t0 = time.perf_counter()
    assert ensure_compiled(family) == 0.0  # warm: a stamp, no child
    assert time.perf_counter() - t0 < 1.0
    names = {name for group in KERNELS[family] for _m, name, _a in group}

    def logged(what: str) -> set[str]:
        return {n for n in names for line in lines if what in line and f".{n}-" in line}

    assert logged("data saved") == set()  # none of them compiled in the identifying process
    assert logged("data loaded") == names
    warm = subprocess.run([sys.executable, "-c", _IDENTIFY[family], str(record)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert "seconds: 0.0 " in warm.stdout, warm.stdout[-2000:] + warm.stderr[-2000:]
