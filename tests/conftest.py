"""Shared fixtures: the seed's public case, simulated once per session."""

from __future__ import annotations

import asyncio
import hashlib
import math
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path


def _numba_cache_of_these_sources() -> str:
    """A numba cache directory for exactly this version of identify's sources.

    numba checks a cached kernel against its own file only: a kernel in _simulate.py
    that calls one edited in _equations.py is loaded stale, and tests pass on code that
    is no longer there. Keying the cache on every source keeps runs honest; subprocesses
    (the CLI tests) inherit it.
    """
    digest = hashlib.sha256()
    for path in sorted((Path(__file__).parents[1] / "identify").rglob("*.py")):
        digest.update(path.read_bytes())
    return str(Path(tempfile.gettempdir()) / f"hilrig-numba-{digest.hexdigest()[:16]}")


os.environ.setdefault("NUMBA_CACHE_DIR", _numba_cache_of_these_sources())

# A suite started as a background job of a non-interactive shell (`make test &`, a CI
# step under nohup) inherits SIGINT ignored, and every process it starts too: the
# Ctrl-C tests then saw commands run to the end (8 of them failed on a fresh clone so
# started). Python's own disposition is what a terminal gives a command.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402

from hilrig.identify import (  # noqa: E402
    TABLE_III_TRUTH,
    IdentificationResult,
    Measurement,
    ParameterEstimate,
    RigParams,
    simulated_measurement,
)
from hilrig.identify.model import PARAM_NAMES  # noqa: E402

# Property tests are derandomized by default: the same examples on every run, so a CI
# failure can be reproduced and a pass is not luck. `pytest --hypothesis-profile deep`
# runs ten times as many random examples (tests scale their budget by max_examples).
hypothesis_settings.register_profile("ci", derandomize=True, deadline=None, max_examples=100,
                                     print_blob=True)
hypothesis_settings.register_profile("deep", derandomize=False, deadline=None,
                                     max_examples=1000)
hypothesis_settings.load_profile("ci")


def _wait_until(predicate, timeout_s: float, what: str = "a condition"):
    """Poll predicate until it returns something truthy (returned), else fail naming what."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")


async def _until(predicate, timeout_s: float, what: str = "a condition"):
    """The same inside an event loop: polls without blocking it."""
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not (value := predicate()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        await asyncio.sleep(0.05)
    return value


@pytest.fixture
def wait_until():
    """wait_until(predicate, timeout_s, what): block until predicate() is truthy."""
    return _wait_until


@pytest.fixture
def until():
    """await until(predicate, timeout_s, what): the same from a coroutine."""
    return _until


@pytest.fixture(scope="session")
def table3_measurement() -> Measurement:
    """The seed's public case: Table III truth, tilt 10 deg, released at theta1 = 120 deg, 35 s."""
    return simulated_measurement(RigParams(tilt_deg=10.0), TABLE_III_TRUTH, capture_id="table3")


# -- the fault-injection suite: every case says what it injects and what must happen -----
_FAULTS: list[tuple[str, str, str, str]] = []


def pytest_runtest_logreport(report):
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        marker = getattr(report, "_fault", None)
        if marker is not None:
            _FAULTS.append((marker[0], marker[1], report.outcome, report.nodeid))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    m = item.get_closest_marker("fault")
    if m is not None:
        injected = m.kwargs.get("injected", m.args[0] if m.args else "?")
        expected = m.kwargs.get("expected", m.args[1] if len(m.args) > 1 else "?")
        outcome.get_result()._fault = (injected, expected)


def pytest_terminal_summary(terminalreporter):
    if not _FAULTS:
        return
    tr = terminalreporter
    tr.section(f"fault-injection suite: {len(_FAULTS)} faults")
    for injected, expected, outcome, nodeid in _FAULTS:
        tr.write_line(f"{outcome.upper():7} injected: {injected}")
        tr.write_line(f"        expected: {expected}  [{nodeid.split('::')[-1]}]")


@pytest.fixture
def small_disk(tmp_path):
    """A 20 MB tmpfs of its own, mounted for the test (a real full disk: SQLite, HDF5 and
    the OS report it each their own way)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mount)],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        pytest.fail(f"this test mounts a small tmpfs (as root, as CI runs): {done.stderr}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=30)


# -- a session's captures' results, as the recommended estimator states them -------------
NIGHT_TRUTH = {"mu_d0": 5e-4, "mu_s0": 7e-4, "mu_v0": 2.5e-4, "omega_t0": 5e-3,
         "mu_d1": 6e-4, "mu_s1": 8e-4, "mu_v1": 2.5e-4, "omega_t1": 5e-3}


def _log_estimate(value: float, sd: float) -> ParameterEstimate:
    return ParameterEstimate(value=value, ci95=(value * math.exp(-1.96 * sd),
                                                value * math.exp(1.96 * sd)),
                             identifiable=True)


def _capture_result(k: int, friction: dict[str, float], *, own: float = 0.001, scale: float = 0.006,
           tilt: float = 10.0, excess: float = 0.8) -> IdentificationResult:
    """A capture's result as the recommended estimator states it: each friction value
    with an interval of its own error (`own`, relative) and the rig's scale (`scale`)."""
    sd = math.hypot(own, scale)
    parameters = {n: _log_estimate(friction[n], sd) if n in friction else
                  ParameterEstimate(value=None, ci95=None, identifiable=False, assumed=1e-2,
                                    note="not identifiable")
                  for n in PARAM_NAMES}
    rig = {"tilt_deg": ParameterEstimate(value=tilt, ci95=(tilt - 0.002, tilt + 0.002),
                                         identifiable=True, note="deg; from the data alone"),
           "m2_l2": ParameterEstimate(value=0.008, ci95=(0.0079, 0.0081), identifiable=True,
                                      note="kg m; its scale from the weighed m2 l2")}
    return IdentificationResult(
        method="shooting", capture_id=f"c{k:02d}", parameters=parameters, rig=rig,
        fit_percent={"arm": 99.9, "pendulum": 99.9}, compute_seconds=1.0,
        normalized_compute_time=1e-6, capture_seconds=35.0, sample_rate_hz=10_000.0,
        samples=350_000, tilt_deg=10.0,
        diagnostics={"residual_over_noise": {"arm": excess, "pendulum": excess},
                     "within_rig_sd": {n: own for n in friction}})


def _night(hours: np.ndarray, *, drift: dict[str, float] | None = None, seed: int = 1,
            scatter: float = 0.002, outlier: int | None = None) -> list[IdentificationResult]:
    """One result per capture: the truth drifted linearly, each value off by `scatter`
    (relative, beyond its own error: the model's error between releases)."""
    rng = np.random.default_rng(seed)
    out = []
    for k, h in enumerate(hours):
        f = {n: v * (1 + (drift or {}).get(n, 0.0) * h) * math.exp(rng.normal(0, scatter))
             for n, v in NIGHT_TRUTH.items()}
        if k == outlier:
            f["mu_v1"] *= 1.3
        out.append(_capture_result(k, f, tilt=10.0 + rng.normal(0, 0.001)))
    return out




@pytest.fixture
def capture_result():
    """A builder of one capture's result (_capture_result)."""
    return _capture_result


@pytest.fixture
def night():
    """A builder of a session's results (_night): night(hours, drift=, outlier=, seed=)."""
    return _night
