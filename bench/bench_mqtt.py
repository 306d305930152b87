"""MQTT benchmark: publish rate through the durable outbox, and end-to-end latency.

Prints figures; asserts nothing. Needs a broker at --url (Mosquitto on 127.0.0.1:1883).

1. Publish rate of results (about 2.5 kB each, QoS 1): the Courier (outbox on disk,
   fsync per message, PUBACK before deletion) against the bare Publisher sending the
   same payloads one by one in the same run.
2. End to end on the 35 s reference capture (Table III truth, released from (0, 120)
   deg, unpaced): a subscriber's clock from the capture's "stop" document (settled and
   written) to its grey-box result, against the identification's own compute time.

    python bench/bench_mqtt.py [--results N] [--url mqtt://127.0.0.1:1883]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
import uuid
from pathlib import Path

import aiomqtt

from hilrig.daq.config import MqttConfig, load_settings
from hilrig.daq.mqtt import Courier, Publisher, parse_mqtt_url
from hilrig.daq.runtime import PlainRun
from hilrig.daq.storage import Outbox
from hilrig.drivers.sim import SimulatedRig
from hilrig.identify import PARAM_NAMES, TABLE_III_TRUTH, IdentificationResult, ParameterEstimate


def _result(capture_id: str) -> IdentificationResult:
    return IdentificationResult(
        method="grey-box", capture_id=capture_id, fit_percent={"arm": 99.9, "pendulum": 99.9},
        parameters={n: ParameterEstimate(value=getattr(TABLE_III_TRUTH, n), ci95=(0.0, 1.0),
                                         identifiable=True) for n in PARAM_NAMES},
        compute_seconds=1.0, normalized_compute_time=1e-6, capture_seconds=35.0,
        sample_rate_hz=1e4, samples=350_001, tilt_deg=10.0)


async def publish_rate(url: str, n: int, spool: Path) -> None:
    rig = f"bench-{uuid.uuid4().hex[:6]}"
    cfg = MqttConfig(url=url, rig_id=rig)
    results = [_result(f"c{k}") for k in range(n)]
    async with Publisher(cfg, url=url) as pub:
        payloads = [pub.result_message(r.capture_id, "grey-box", r) for r in results]
        t0 = time.perf_counter()
        for topic, payload in payloads:
            await pub.send(topic, payload, retain=False)
        bare = time.perf_counter() - t0
    box = Outbox(spool)
    async with Courier(cfg, box, url=url) as courier:
        while not courier.connected:
            await asyncio.sleep(0.01)
        t0 = time.perf_counter()
        for r in results:
            await courier.publish_result(r.capture_id, "grey-box", r)
        while courier.pending:
            await asyncio.sleep(0.001)
        durable = time.perf_counter() - t0
    size = len(payloads[0][1])
    print(f"publish, {n} results of {size} B, QoS 1:")
    print(f"  bare Publisher (acked one by one)        {n / bare:8.0f} results/s")
    print(f"  Courier through the outbox (+ result/latest, fsync) {2 * n / durable:8.0f} "
          f"messages/s = {n / durable:.0f} results/s, ratio {bare / durable:.2f} of bare")


async def end_to_end(url: str, root: Path) -> None:
    rig = f"bench-e2e-{uuid.uuid4().hex[:6]}"
    settings = load_settings(None, storage={"directory": str(root)},
                             mqtt={"rig_id": rig, "url": url, "telemetry_hz": 0})
    host, port = parse_mqtt_url(url)
    seen: dict[str, float] = {}
    compute: list[float] = []

    async def listen(ready: asyncio.Event) -> None:
        async with aiomqtt.Client(host, port) as c:
            await c.subscribe(f"hilrig/{rig}/#", qos=1)
            ready.set()
            async for m in c.messages:
                body = json.loads(m.payload)
                if m.topic.value.split("/")[2] == "capture" and body.get("document") == "stop":
                    seen["stop"] = time.perf_counter()
                elif "/result/" in m.topic.value and not m.topic.value.endswith("latest"):
                    seen["result"] = time.perf_counter()
                    compute.append(body["compute_seconds"])
                    return

    ready = asyncio.Event()
    task = asyncio.create_task(listen(ready))
    await ready.wait()
    source = SimulatedRig(rig=settings.rig, friction=settings.sim.friction,
                          pose_deg=(0.0, 120.0), paced=False, hold_s=1.0)
    async with Courier(settings.mqtt, Outbox(root), url=url) as courier:
        await PlainRun(settings, source, courier, captures=1).run()
    await asyncio.wait_for(task, 120)
    latency = seen["result"] - seen["stop"]
    print(f"end to end, 35 s reference capture: capture stop -> result at the subscriber "
          f"{latency:.2f} s, of which identification {compute[0]:.2f} s "
          f"(ratio {latency / compute[0]:.2f}; the rest: file read in the worker, "
          "publication)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=int, default=500)
    ap.add_argument("--url", default="mqtt://127.0.0.1:1883")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(publish_rate(args.url, args.results, Path(tmp) / "spool"))
        asyncio.run(end_to_end(args.url, Path(tmp) / "e2e"))


if __name__ == "__main__":
    main()
