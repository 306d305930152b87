"""Session benchmark: what a long unattended session costs against the plain service.

Prints figures; asserts nothing. Both runs take the same simulated captures, unpaced,
released from (0, 30) deg (20 s decays), identified by grey-box in the worker process,
without MQTT:

1. baseline: the plain service (`PlainRun`, files only);
2. session: `SessionRun` with the SQLite catalog, the dated archive, a result JSON
   per result, progress and the free-disk check before every capture.

It prints seconds per capture for both and their ratio, the session's catalog
writes per capture, and the resident memory of the service process every 5 captures
(it must level off: the ring, the trigger and the buffers are preallocated, finished
captures leave memory for the catalog).

    python bench/bench_session.py [--captures N]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from hilrig.daq.config import load_settings
from hilrig.daq.runtime import PlainRun, SessionPlan, SessionRun, SimReleaser, new_session_id
from hilrig.daq.storage import Catalog
from hilrig.drivers.sim import SimulatedRig

POSE = (0.0, 30.0)


def baseline(n: int, root: Path) -> float:
    settings = load_settings(None, storage={"directory": str(root / "plain")},
                             sim={"pose_deg": POSE})
    rig = SimulatedRig(rig=settings.rig, friction=settings.sim.friction, pose_deg=POSE,
                       paced=False, hold_s=1.0)
    t0 = time.perf_counter()
    report = asyncio.run(PlainRun(settings, rig, None, captures=n).run())
    assert not report.failed, report.failed
    return time.perf_counter() - t0


def session(n: int, root: Path) -> tuple[float, dict[int, float], int]:
    settings = load_settings(None, storage={"directory": str(root / "archive")})
    plan = SessionPlan(captures=n, poses_deg=[POSE], paced=False)
    rss: dict[int, float] = {}
    with Catalog.open(root / "archive") as cat:
        sid = new_session_id()
        cat.add_session(sid, plan.model_dump_json())
        rig = SimulatedRig(rig=settings.rig, friction=settings.sim.friction, pose_deg=POSE,
                           paced=False, auto_release=False)
        writes = 0
        original = cat._write

        def counted(*args):  # type: ignore[no-untyped-def]
            nonlocal writes
            writes += 1
            return original(*args)

        cat._write = counted  # type: ignore[method-assign]

        def progress(p: dict) -> None:
            if p["done"] and p["done"] % 5 == 0:
                rss[p["done"]] = p["rss_mb"]
                print(f"  {p['done']:4d} captures done, rss {p['rss_mb']:.1f} MB", flush=True)

        runner = SessionRun(settings, rig, None, plan=plan, catalog=cat, session_id=sid,
                               releaser=SimReleaser(rig, plan.hold_s), on_progress=progress)
        t0 = time.perf_counter()
        asyncio.run(runner.run())
        elapsed = time.perf_counter() - t0
        assert len(cat.done_seqs(sid)) == n
    return elapsed, rss, writes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--captures", type=int, default=30)
    args = ap.parse_args()
    n = args.captures
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"baseline: plain service, {n} captures ...", flush=True)
        base = baseline(n, root)
        print(f"session: {n} captures ...", flush=True)
        sess, rss, writes = session(n, root)
    print(f"plain service {base / n:.2f} s/capture, session {sess / n:.2f} s/capture, "
          f"ratio {sess / base:.3f}")
    print(f"catalog writes per capture: {writes / n:.1f}")
    marks = sorted(rss)
    if len(marks) >= 2:
        print(f"rss {rss[marks[0]]:.1f} MB after {marks[0]} captures, {rss[marks[-1]]:.1f} MB "
              f"after {marks[-1]} (growth {rss[marks[-1]] - rss[marks[0]]:+.1f} MB)")


if __name__ == "__main__":
    main()
