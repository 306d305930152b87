"""The MQTT contract: JSON Schemas checked in and current, every message of a session valid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import jsonschema
import numpy as np
import pytest

from hilrig.daq.acquisition import TelemetryDecimator
from hilrig.daq.mqtt.schemas import SCHEMA_DIR, generate, schema_file
from hilrig.drivers import SampleBlock
from hilrig.identify import DEFAULT_METHOD

BROKER = ("127.0.0.1", 1883)


def _validator(schema: str) -> jsonschema.Draft202012Validator:
    doc = json.loads((SCHEMA_DIR / schema_file(schema)).read_text())
    return jsonschema.Draft202012Validator(doc)


def test_the_checked_in_schemas_are_current():
    files = generate()
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.schema.json")) == sorted(files)
    for name, text in files.items():
        assert (SCHEMA_DIR / name).read_text() == text, \
            f"{name}: run python -m hilrig.daq.mqtt.schemas"


def test_every_event_code_the_service_publishes_is_in_the_documented_table():
    """A dashboard acts on `code`: each one the daq package spells out is listed in
    docs/mqtt.md's table of event codes (job.retry and three others were missing)."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    spelled = set()
    for path in (root / "daq").rglob("*.py"):
        for code in re.findall(r'"((?:capture|identify|session|command|job)\.[a-z_]+'
                               r'(?:\.\{[a-z_]+\})?)"', path.read_text()):
            spelled.add(re.sub(r"\{[a-z_]+\}", "<kind>", code))
    table = (root / "docs" / "mqtt.md").read_text()
    listed = set(re.findall(r"^\| `([a-z_.<>]+)` \| (?:info|warning|error) \|", table, re.M))
    assert {"identify.failed", "job.retry", "session.suspended.<kind>"} <= spelled
    assert spelled <= listed, sorted(spelled - listed)


def test_a_schema_rejects_what_breaks_the_contract():
    status = _validator("hilrig.status/1")
    ok = {"schema": "hilrig.status/1", "rig_id": "rig1", "time": "2026-11-22T10:00:00.000Z",
          "software_version": "0.1.0", "state": "idle"}
    status.validate(ok)
    assert not status.is_valid({**ok, "state": "sleeping"})
    assert not status.is_valid({k: v for k, v in ok.items() if k != "rig_id"})
    assert status.is_valid({**ok, "a_later_key": 1})  # consumers ignore unknown keys


def test_telemetry_is_decimated_to_100_hz_with_velocities_in_degrees_per_second():
    rate = 10_000.0
    dec = TelemetryDecimator(rate, (40_000, 40_000), hz=100.0, block_s=0.1)
    idx = np.arange(20_000)
    counts = np.stack([np.zeros(idx.size), 4000 * np.sin(2 * np.pi * idx / rate)], 1)
    bodies = []
    for k in range(0, 20_000, 100):
        bodies += dec.feed(SampleBlock(k, counts[k:k + 100].astype(np.int32), 1000.0 + k / rate))
    assert len(bodies) == 20  # 2 s at 100 Hz in blocks of 10
    b = bodies[5]
    assert b["rate_hz"] == 100.0 and b["index0"] == 5000
    assert len(b["t"]) == len(b["theta1_deg"]) == len(b["omega1_dps"]) == 10
    # epoch seconds: a float64 near 1.8e9 s is exact to 2.4e-7 s
    assert np.allclose(np.diff(b["t"]), 0.01, rtol=0, atol=1e-6)
    theta = 36.0 * np.sin(2 * np.pi * np.arange(5000, 6000, 100) / rate)
    assert np.allclose(b["theta1_deg"], theta, atol=0.01)
    # backward difference at 100 Hz of a 1 Hz sine of 36 deg amplitude: <= 226 deg/s
    assert max(abs(w) for w in b["omega1_dps"]) == pytest.approx(226, rel=0.02)


def test_telemetry_restarts_its_difference_after_a_gap():
    dec = TelemetryDecimator(10_000.0, (40_000, 40_000), hz=100.0, block_s=0.05)
    ramp = np.repeat(np.arange(0, 1000, dtype=np.int32)[:, None], 2, axis=1)
    a = dec.feed(SampleBlock(0, ramp[:500], 0.0))
    b = dec.feed(SampleBlock(2000, ramp[500:], 0.0))  # 1500 samples lost
    assert a and b and b[0]["index0"] == 2000
    assert all(np.isfinite(b[0]["omega0_dps"]))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_every_message_of_a_three_capture_session_validates_against_its_schema(tmp_path):
    rig_id = f"contract-{uuid.uuid4().hex[:8]}"
    # into a file, line-buffered: a full pipe would stall the subscriber (and the broker
    # drops what a stalled client cannot take), its buffer would lose the last lines
    log = tmp_path / "sub.log"
    sink = open(log, "w")
    sub = subprocess.Popen(["stdbuf", "-oL", "mosquitto_sub", "-h", BROKER[0], "-p",
                            str(BROKER[1]), "-v", "-q", "1", "-F", "%t\t%p",
                            "-t", f"hilrig/{rig_id}/#"], stdout=sink, text=True)
    time.sleep(0.5)  # subscribed before the session starts
    try:
        env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "archive"),
                   HILRIG_MQTT__RIG_ID=rig_id, HILRIG_MQTT__URL="mqtt://127.0.0.1:1883")
        run = subprocess.run([sys.executable, "-m", "hilrig", "session", "start", "--captures",
                              "3", "--sim", "--unpaced", "--pose", "0", "30"], env=env,
                             capture_output=True, text=True, timeout=500)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    finally:
        sub.terminate()
        sub.wait(timeout=10)
        sink.close()
        out = log.read_text()
        retained = {"status", "result/latest"} | {  # leave no retained messages behind
            line.split("\t", 1)[0].removeprefix(f"hilrig/{rig_id}/")
            for line in out.splitlines() if line.split("/")[2] in ("session", "result")}
        for topic in retained:
            subprocess.run(["mosquitto_pub", "-h", BROKER[0], "-p", str(BROKER[1]), "-r", "-n",
                            "-t", f"hilrig/{rig_id}/{topic}"], check=False, timeout=10)
    seen: dict[str, int] = {}
    docs: dict[str, list[str]] = {}
    records: dict[str, dict] = {}
    overlays: dict[str, dict] = {}
    for line in out.splitlines():
        topic, payload = line.split("\t", 1)
        msg = json.loads(payload)
        _validator(msg["schema"]).validate(msg)
        assert msg["rig_id"] == rig_id and msg["time"].endswith("Z")
        levels = topic.split("/")
        kind = {"hilrig.capture_record/1": "record", "hilrig.overlay/1": "overlay",
                "hilrig.session-result/1": "answer"}.get(msg["schema"], levels[2])
        seen[kind] = seen.get(kind, 0) + 1
        if kind == "capture":
            docs.setdefault(msg["capture_id"], []).append(msg["document"])
            assert msg["session_id"] and msg["seq"] in (1, 2, 3)
        if kind == "result" and levels[3] != "latest":
            assert msg["msg_id"].startswith(f"result/{msg['capture_id']}/{DEFAULT_METHOD}/")
            assert "response" not in msg  # it has a retained topic of its own
        if kind == "record":
            assert levels[2:4] == ["session", msg["session_id"]] and levels[5] == msg["capture_id"]
            records[msg["capture_id"]] = msg  # the newest of each capture
        if kind == "overlay":
            assert levels[3:] == [msg["capture_id"], DEFAULT_METHOD, "overlay"]
            overlays[msg["capture_id"]] = msg
        if kind == "answer":  # the session's captures put together, as it ended
            assert levels[2:] == ["session", msg["session_id"], "result"]
            assert msg["verdict"] in ("no drift", "drift", "captures disagree beyond a trend")
    assert {"status", "capture", "result", "session", "telemetry"} <= set(seen)
    assert seen["answer"] == 1
    assert len(docs) == 3
    for documents in docs.values():  # start, a progress a second at most, stop
        assert documents[0] == "start" and documents[-1] == "stop"
    assert seen["result"] == 6  # 3 results, each also on result/latest
    # a dashboard opened afterwards reads the session from the retained records: each
    # capture done, with its result's parameters and intervals, and its overlay
    assert set(records) == set(docs) == set(overlays)
    assert sorted(r["seq"] for r in records.values()) == [1, 2, 3]
    for rec in records.values():
        assert rec["status"] == "done" and rec["results"][DEFAULT_METHOD]["overlay"]
        mu = rec["results"][DEFAULT_METHOD]["parameters"]["mu_d1"]
        assert mu["identifiable"] and mu["ci95"][0] < mu["value"] < mu["ci95"][1]
    for ov in overlays.values():  # measured and identified angles over the capture
        t = [x for x in ov["t_s"] if x is not None]
        assert ov["joints"] == ["arm", "pendulum"] and 200 < len(t) <= 1100
        measured = [x for x in ov["measured"][1] if x is not None]
        simulated = [x for x in ov["simulated"][1] if x is not None]
        assert max(measured) - min(measured) > 0.5  # the pendulum swung (0.52 rad = 30 deg)
        assert abs(max(simulated) - max(measured)) < 0.01
