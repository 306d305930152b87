"""Load benchmark: several simulated rigs at 10 kHz into one service process and one broker.

Prints figures; asserts nothing. Each rig is a paced SimulatedRig (real time, 100-sample
blocks) with its own service (ring, trigger, capture files, identification process,
courier with telemetry) in this one process and event loop, all publishing to the
broker at --url. The rigs release again and again from (0, 30) deg (20 s decays).

Reported: samples received against the samples the rigs' clocks produced (lost and
late), captures and results, the service process's CPU (percent of one core, without
the identification processes) and its resident memory: each minute, and its growth in
the second half of the run against the first (a leak keeps growing; filling rings level off).

    python bench/bench_load.py [--rigs 4] [--seconds 300] [--url mqtt://127.0.0.1:1883]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from pathlib import Path

from hilrig.daq.config import load_settings
from hilrig.daq.mqtt import Courier
from hilrig.daq.runtime import PlainRun, rss_mb
from hilrig.daq.storage import Outbox
from hilrig.drivers.sim import SimulatedRig


async def run(n_rigs: int, seconds: float, url: str, root: Path) -> None:
    services, couriers, sources = [], [], []
    for k in range(n_rigs):
        s = load_settings(None, storage={"directory": str(root / f"rig{k}")},
                          mqtt={"rig_id": f"load-{k}-{uuid.uuid4().hex[:4]}", "url": url},
                          identify={"method": "grey-box"}, sim={"pose_deg": (0.0, 30.0)})
        src = SimulatedRig(rig=s.rig, friction=s.sim.friction, pose_deg=(0.0, 30.0),
                           paced=True, hold_s=1.0)
        courier = Courier(s.mqtt, Outbox(root / f"rig{k}"), url=url, source=src.info)
        await courier.__aenter__()
        couriers.append(courier)
        sources.append(src)
        services.append(PlainRun(s, src, courier))
    rss0, cpu0, t0 = rss_mb(), time.process_time(), time.monotonic()
    tasks = [asyncio.create_task(svc.run()) for svc in services]
    rss_series = []  # (elapsed s, RSS MB) each minute: does memory level off?
    while (left := seconds - (time.monotonic() - t0)) > 0:
        await asyncio.sleep(min(60.0, left))
        elapsed = time.monotonic() - t0
        rss_series.append((elapsed, rss_mb()))
        done = sum(len(svc.report.outcomes) for svc in services)
        print(f"  {elapsed:5.0f} s: RSS {rss_series[-1][1]:.0f} MB, {done} captures", flush=True)
    wall = time.monotonic() - t0
    cpu = time.process_time() - cpu0
    for src in sources:
        await src.__aexit__(None, None, None)  # ends each service's acquisition
    await asyncio.gather(*tasks, return_exceptions=True)
    for c in couriers:
        await c.__aexit__(None, None, None)
    expected = int(wall * 10_000)
    print(f"{n_rigs} rigs x 10 kHz for {wall:.0f} s into one process:")
    for k, (svc, src) in enumerate(zip(services, sources)):
        got = src.stats.samples
        late = max(0, expected - got)
        print(f"  rig {k}: {got} samples produced and consumed (clock: {expected}; "
              f"{late} not yet produced at the end = {late / 1e4:.2f} s behind), "
              f"ring lost {svc.ring.lost_samples}, overruns {svc.ring.overruns}, "
              f"{len(svc.report.outcomes)} captures, "
              f"{sum(o.result is not None for o in svc.report.outcomes)} results, "
              f"telemetry dropped {couriers[k].telemetry_dropped}")
    print(f"  service process CPU {100 * cpu / wall:.1f} % of one core; RSS {rss0:.0f} MB at "
          f"start, {rss_mb():.0f} MB at the end")
    if len(rss_series) >= 4:  # growth over the second half against the first
        half = len(rss_series) // 2
        first = rss_series[half - 1][1] - rss0
        second = rss_series[-1][1] - rss_series[half - 1][1]
        print(f"  RSS growth: {first:+.0f} MB in the first {rss_series[half - 1][0]:.0f} s, "
              f"{second:+.0f} MB in the {rss_series[-1][0] - rss_series[half - 1][0]:.0f} s after")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rigs", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--url", default="mqtt://127.0.0.1:1883")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(args.rigs, args.seconds, args.url, Path(tmp)))


if __name__ == "__main__":
    main()
