"""Campaign throughput: the same 20 captures re-identified by the recommended estimator on
this machine's process pool and on Dask LocalClusters of 1 and 2 worker processes, in one
run, each a campaign of its own into the same catalog (real SQLite, real HDF5 files).

Goals (issue: campaigns on a cluster): from 1 to 2 Dask workers a speed-up of at least
1.8x; Dask's overhead per task against the local pool under 5 %. Each backend's start
(processes spawned, the kernels' cache loaded) is timed apart from its campaign. A
campaign hands out the longest expected task first, from the compute times the catalog
holds: the first round's pool:1 runs in capture order, every later campaign knows them.

    python bench/bench_campaign.py [--captures 20] [--duration 35] [--method shooting]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hilrig.daq.runtime.identification import (
    Campaign,
    DaskExecutor,
    IdentificationExecutor,
    LocalExecutor,
    Selection,
    parse_cluster,
    select_tasks,
)
from hilrig.daq.storage import Catalog, session_capture_path

GOAL_SPEEDUP = 1.8
GOAL_OVERHEAD = 0.05


def _captures(root: Path, n: int, duration: float) -> str:
    """n realistic captures (rig off its CAD values, hand release, lost frames, noise) in
    a session of the catalog; its id."""
    sid = "S-bench-campaign"
    with Catalog.open(root) as cat:
        cat.add_session(sid, "{}", name="bench")
        paths = [session_capture_path(root / sid, f"C{k:03d}") for k in range(n)]

        def make(k: int) -> None:
            paths[k].parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, "-m", "hilrig", "simulate", "--out", str(paths[k]),
                            "--duration", str(duration), "--seed", str(k),
                            "--rig-error", "0.03", "--tremor", "0.001", "--push", "0.05",
                            "0.1", "--noise", "0.0005", "--lost-frames", "0.002",
                            "--theta1", str(60 + 5 * k)], check=True, capture_output=True)

        with ThreadPoolExecutor(2) as pool:
            list(pool.map(make, range(n)))
        for k, path in enumerate(paths):
            cat.add_capture(f"C{k:03d}", status="done", session_id=sid, seq=k + 1,
                            path=str(path))
    return sid


def _run(root: Path, sid: str, method: str, executor: IdentificationExecutor, name: str
         ) -> tuple[float, float, dict[str, float]]:
    """(start s, campaign s, each capture's compute s) of one campaign on `executor`."""
    t0 = time.perf_counter()
    executor.start()
    if isinstance(executor, DaskExecutor):
        while executor.workers < (executor.spec.workers or 1):
            time.sleep(0.05)
    started = time.perf_counter() - t0
    selection = Selection(methods=[method], session=sid)
    with Catalog.open(root) as cat:
        tasks, _ = select_tasks(cat, root, selection)
        t1 = time.perf_counter()
        report = asyncio.run(Campaign(cat, executor, say=print).run(
            selection.campaign_id(salt=name), selection, tasks))
        took = time.perf_counter() - t1
        computes = {r.capture_id: r.result().compute_seconds
                    for r in cat.results(session_id=sid)
                    if (r.result_key or "").startswith(
                        f"campaign/{selection.campaign_id(salt=name)}/")}
    executor.shutdown()
    assert report.done == len(tasks), report.failures
    return started, took, computes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--captures", type=int, default=20)
    ap.add_argument("--duration", type=float, default=35.0)
    ap.add_argument("--method", default="shooting")
    ap.add_argument("--rounds", type=int, default=2,
                    help="the backends alternate this many times (a busy machine's drift "
                         "falls on all of them); each one's median counts")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        sid = _captures(root, args.captures, args.duration)
        print(f"{args.captures} captures of {args.duration:g} s simulated in "
              f"{time.perf_counter() - t0:.0f} s")
        took_by: dict[str, list[float]] = {}
        alone: dict[str, list[float]] = {}  # each capture's compute on one worker
        # one single-threaded identification per worker process, as a campaign runs them
        backends = (("pool:1", lambda: LocalExecutor(1, threads=1)),
                    ("dask:1", lambda: DaskExecutor(parse_cluster("local:1"))),
                    ("pool:2", lambda: LocalExecutor(2, threads=1)),
                    ("dask:2", lambda: DaskExecutor(parse_cluster("local:2"))))
        for round_ in range(args.rounds):
            for name, make in backends:
                started, took, computes = _run(root, sid, args.method, make(),
                                               f"{name}/{round_}")
                took_by.setdefault(name, []).append(took)
                if name == "pool:1":
                    for capture_id, seconds in computes.items():
                        alone.setdefault(capture_id, []).append(seconds)
                times = list(computes.values())
                print(f"round {round_ + 1} {name}: start {started:.1f} s, campaign "
                      f"{took:.1f} s ({took / args.captures:.2f} s per capture; compute "
                      f"median {statistics.median(times):.2f} s, sum {sum(times):.1f} s)",
                      flush=True)
        runs = {name: statistics.median(t) for name, t in took_by.items()}
    speedup = runs["dask:1"] / runs["dask:2"]
    overhead = runs["dask:1"] / runs["pool:1"] - 1
    print(f"speed-up from 1 to 2 Dask workers: {speedup:.2f}x (goal >= {GOAL_SPEEDUP}x); "
          f"pool 1 -> 2: {runs['pool:1'] / runs['pool:2']:.2f}x")
    print(f"Dask's overhead per task against the local pool, one worker each: "
          f"{100 * overhead:+.1f} % (goal < {100 * GOAL_OVERHEAD:g} %); two each: "
          f"{100 * (runs['dask:2'] / runs['pool:2'] - 1):+.1f} %")
    # what the tasks' own lengths allow two workers, apart from any engine, each task to
    # whichever worker is free: oldest capture first (the first round's order: nothing
    # known yet), and longest first (what the campaign does once the archive has results)
    seconds = [statistics.median(alone[c]) for c in sorted(alone)]
    print(f"the tasks' lengths allow two workers at most {_allowed(seconds):.2f}x oldest "
          f"first, {_allowed(sorted(seconds, reverse=True)):.2f}x longest first (longest "
          f"{max(seconds):.1f} s of {sum(seconds):.1f} s)")
    _keep_rate()


def _allowed(seconds: list[float], workers: int = 2) -> float:
    """Speed-up of greedy list scheduling of these task lengths on `workers` against one."""
    free = [0.0] * workers
    for s in seconds:
        k = free.index(min(free))
        free[k] += s
    return sum(seconds) / max(free)


def _keep_rate(n: int = 500) -> None:
    """How fast the client keeps finished tasks (the one SQLite writer): n results of one
    capture kept as a campaign keeps them (a row, a JSON file beside the capture, the
    task's row), in its batches."""
    from hilrig.daq.runtime.identification import CampaignTask, TaskOutcome, run_task
    from hilrig.daq.runtime.identification import IdentifyTask as Task

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sid = _captures(root, 1, 5.0)
        with Catalog.open(root) as cat:
            row = cat.captures(sid)[0]
            path = Path(row.path or "")
            outcome = run_task(Task.of_file(row.capture_id, path, "regression"))
            campaign = Campaign(cat, LocalExecutor(1), say=print)
            cat.add_campaign("keep-rate", "{}")
            for batch in (1, 25):
                t0 = time.perf_counter()
                for start in range(0, n, batch):
                    campaign._keep("keep-rate", [  # noqa: SLF001 - the keeping alone, timed
                        (CampaignTask(row.capture_id, path, f"m{batch}-{k}"),
                         TaskOutcome(**{**outcome.model_dump(), "method": f"m{batch}-{k}"}))
                        for k in range(start, min(n, start + batch))],
                        _progress(n))
                took = time.perf_counter() - t0
                print(f"keeping results, batches of {batch}: {n / took:.0f} per second")


def _progress(n: int):  # type: ignore[no-untyped-def]
    from hilrig.daq.runtime.identification import CampaignProgress

    return CampaignProgress("keep-rate", total=n)


if __name__ == "__main__":
    main()
