"""What a run publishes when its disk is full (a real full tmpfs under a real SQLite
outbox, a real Mosquitto): the rig's status and the event saying why reach a dashboard
while the disk is full; the durable messages wait, in order, and go once there is room."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import uuid

import aiomqtt
import pytest

from hilrig.daq.config import MqttConfig
from hilrig.daq.mqtt import Courier
from hilrig.daq.runtime import Publication
from hilrig.daq.storage import Outbox
from hilrig.drivers.sim import SimulatedRig
from hilrig.identify import TABLE_III_TRUTH, IdentificationResult, ParameterEstimate

BROKER = "mqtt://127.0.0.1:1883"


def _result(capture_id: str) -> IdentificationResult:
    params = {"mu_d1": ParameterEstimate(value=TABLE_III_TRUTH.mu_d1, identifiable=True,
                                         ci95=(5.9e-4, 6.1e-4))}
    return IdentificationResult(
        method="shooting", capture_id=capture_id, fit_percent={"arm": 99.0, "pendulum": 99.5},
        parameters=params, compute_seconds=1.0, normalized_compute_time=1e-6,
        capture_seconds=35.0, sample_rate_hz=1e4, samples=350_001, tilt_deg=10.0,
        diagnostics={"note": "x" * 20_000})  # several pages: the outbox must grow


def _fill(directory) -> object:
    """Write zeros until the file system says it is full."""
    filler = directory / "filler"
    chunk = b"\0" * (1 << 16)
    with open(filler, "wb") as f:
        try:
            while True:
                f.write(chunk)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


@pytest.mark.fault(injected="disk: full under the outbox while results, the status and an "
                            "event are published",
                   expected="status and event reach the broker while it is full; the results "
                            "wait in memory and arrive in order once there is room")
async def test_a_full_disk_holds_the_results_but_not_the_status_or_the_event(small_disk,
                                                                              until):
    rig = f"full-{uuid.uuid4().hex[:6]}"
    outbox = Outbox(small_disk)
    seen: list[tuple[str, dict]] = []

    async def collect(client: aiomqtt.Client) -> None:
        async for m in client.messages:
            if m.payload:
                seen.append((m.topic.value.removeprefix(f"hilrig/{rig}/"),
                             json.loads(m.payload)))

    async with aiomqtt.Client("127.0.0.1", 1883) as dash:
        await dash.subscribe(f"hilrig/{rig}/#", qos=1)
        reader = asyncio.create_task(collect(dash))
        try:
            await _publish_on_a_full_disk(rig, small_disk, outbox, seen, until)
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
    results = [t for t, _ in seen if t.startswith("result/c")]
    assert results == ["result/c1/shooting", "result/c2/shooting"]
    assert [t for t, _ in seen].count("events") == 1
    assert len(outbox) == 0


async def _publish_on_a_full_disk(rig, small_disk, outbox, seen, until) -> None:
    def topics() -> list[str]:
        return [t for t, _ in seen]

    async with Courier(MqttConfig(url=BROKER, rig_id=rig), outbox) as courier, \
            Publication(courier, SimulatedRig()) as pub:
        await until(lambda: courier.connected, 10, "the courier's connection")
        filler = _fill(small_disk)
        pub.result("c1", _result("c1"))
        pub.result("c2", _result("c2"))
        pub.status("suspended", reason="disk: full")
        pub.event("warning", "session.suspended.disk", "disk: full")
        await until(lambda: "events" in topics(), 10, "the event while the disk is full")
        await until(lambda: any(t == "status" and p["state"] == "suspended"
                                for t, p in seen), 10, "the status")
        await asyncio.sleep(0.5)
        assert not [t for t in topics() if t.startswith("result")]
        event = dict(seen)["events"]
        assert event["code"] == "session.suspended.disk" and event["level"] == "warning"

        filler.unlink()  # room again: the results follow, in the order given
        await until(lambda: sum(t.startswith("result/c") for t in topics()) == 2, 10,
                    "the held results")
