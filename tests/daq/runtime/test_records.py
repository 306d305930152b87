"""A session's captures as retained records on the broker, built from the catalog, and
the broker's window of sessions kept bounded (real SQLite catalog, real Mosquitto)."""

from __future__ import annotations

import asyncio
import json
import uuid

import aiomqtt
import numpy as np

from hilrig.daq.config import MqttConfig
from hilrig.daq.mqtt import Courier, Topics
from hilrig.daq.runtime import CaptureRecords, Publication, prune_retained
from hilrig.daq.storage import Catalog, Outbox
from hilrig.drivers.sim import SimulatedRig
from hilrig.identify import (
    PARAM_NAMES,
    TABLE_III_TRUTH,
    IdentificationResult,
    ParameterEstimate,
    pool_results,
)
from hilrig.identify.results import response_of

BROKER = "mqtt://127.0.0.1:1883"


def _result(capture_id: str, mu_d1: float) -> IdentificationResult:
    import numpy as np

    t = np.linspace(0, 1, 50)
    q = np.c_[np.sin(t), np.cos(t)]
    params = {n: ParameterEstimate(value=getattr(TABLE_III_TRUTH, n), identifiable=True,
                                   ci95=(0.9 * getattr(TABLE_III_TRUTH, n),
                                         1.1 * getattr(TABLE_III_TRUTH, n)))
              for n in PARAM_NAMES}
    params["mu_d1"] = ParameterEstimate(value=mu_d1, ci95=(mu_d1 * 0.98, mu_d1 * 1.02),
                                        identifiable=True)
    return IdentificationResult(
        method="shooting", capture_id=capture_id, fit_percent={"arm": 99.0, "pendulum": 99.5},
        parameters=params, compute_seconds=1.0, normalized_compute_time=1e-6,
        capture_seconds=1.0, sample_rate_hz=1e4, samples=10_001, tilt_deg=10.0,
        diagnostics={"warnings": ["pendulum: residual 1.7 x noise"]},
        response=response_of([(t, q, q + 0.001)], ("arm", "pendulum")))


async def _retained(rig: str) -> dict[str, dict]:
    got: dict[str, dict] = {}
    async with aiomqtt.Client("127.0.0.1", 1883) as c:
        await c.subscribe(f"hilrig/{rig}/#", qos=1)
        try:
            async with asyncio.timeout(1.0):
                async for m in c.messages:
                    if m.retain and m.payload and "/status" not in m.topic.value:
                        got[m.topic.value.removeprefix(f"hilrig/{rig}/")] = json.loads(m.payload)
        except TimeoutError:
            pass
    return got


async def test_records_follow_the_catalog_and_old_sessions_leave_the_broker(tmp_path, until,
                                                                           night):
    rig = f"rec-{uuid.uuid4().hex[:6]}"
    catalog = Catalog.open(tmp_path)
    cfg = MqttConfig(url=BROKER, rig_id=rig)
    sessions = []
    for k in range(3):
        sid = f"S{k}"
        catalog.add_session(sid, "{}", name=f"night {k}")
        sessions.append(sid)
    async with Courier(cfg, Outbox(tmp_path)) as courier:
        async with Publication(courier, SimulatedRig()) as pub:  # leaving hands all over
            for k, sid in enumerate(sessions):
                records = CaptureRecords(catalog, sid, pub)
                catalog.add_capture(f"c{k}a", status="recording", session_id=sid, seq=1)
                catalog.add_capture(f"c{k}b", status="timeout", session_id=sid, seq=2)
                catalog.update_capture(f"c{k}b", error="no motion within 60 s")
                records.update()
                catalog.update_capture(f"c{k}a", status="done", lost_samples=0)
                catalog.add_result(_result(f"c{k}a", 0.0006 + k * 1e-5), capture_id=f"c{k}a")
                records.update()
                hours = np.linspace(0, 4, 3)  # and the session's answer
                pub.session_result(sid, pool_results(night(hours), hours, session_id=sid))
        await until(lambda: courier.connected and not courier._latest, 10, "delivery")
        before = await _retained(rig)
        # every capture of every session, with its outcome and its result's intervals
        rec = before["session/S2/capture/c2a"]
        assert rec["schema"] == "hilrig.capture_record/1" and rec["status"] == "done"
        mu = rec["results"]["shooting"]["parameters"]["mu_d1"]
        assert mu["value"] == 0.00062 and mu["ci95"] == [0.00062 * 0.98, 0.00062 * 1.02]
        assert rec["results"]["shooting"]["warnings"] == ["pendulum: residual 1.7 x noise"]
        assert before["session/S2/capture/c2b"]["reason"] == "no motion within 60 s"
        overlay = before["result/c2a/shooting/overlay"]
        assert overlay["joints"] == ["arm", "pendulum"] and len(overlay["t_s"]) == 50
        assert before["session/S1/result"]["schema"] == "hilrig.session-result/1"
        assert len(before) == 12  # 3 sessions x (2 records + 1 overlay + 1 answer)

        # a fourth session keeping 2: the two oldest leave the broker, the catalog keeps all
        catalog.add_session("S3", "{}")
        async with Publication(courier, SimulatedRig()) as pub:
            old = prune_retained(catalog, pub, Topics(rig), current="S3", keep=2)
        await until(lambda: not courier._latest, 10, "delivery")
        after = await _retained(rig)
    assert sorted(old) == ["S0", "S1"]
    assert set(after) == {"session/S2/capture/c2a", "session/S2/capture/c2b",
                          "result/c2a/shooting/overlay", "session/S2/result"}
    assert len(catalog.captures()) == 6


def test_a_record_is_published_again_only_when_its_capture_changed(tmp_path):
    catalog = Catalog.open(tmp_path)
    catalog.add_session("S", "{}")
    catalog.add_capture("c1", status="recording", session_id="S", seq=1)
    sent: list[tuple[str, str]] = []

    class Recorder(Publication):  # what would be handed to the courier, in order
        def capture_record(self, session_id, capture_id, record):
            sent.append((capture_id, record["status"]))

        def overlay(self, capture_id, method, response, session_id=None):
            sent.append((capture_id, f"overlay {method}"))

    records = CaptureRecords(catalog, "S", Recorder(None, SimulatedRig()))
    records.update()
    records.update()
    catalog.update_capture("c1", status="captured")
    records.update()
    catalog.add_result(_result("c1", 0.0006), capture_id="c1")
    records.update()
    records.update()
    assert sent == [("c1", "recording"), ("c1", "captured"), ("c1", "overlay shooting"),
                    ("c1", "captured")]  # the last one now carries the result
