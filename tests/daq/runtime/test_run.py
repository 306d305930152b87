"""The service end to end: simulated rig -> trigger -> capture file -> identification -> MQTT."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from hilrig.daq.acquisition import TriggerState
from hilrig.daq.config import load_settings
from hilrig.daq.mqtt import CommandRouter
from hilrig.daq.runtime import PlainRun
from hilrig.daq.storage import read_capture
from hilrig.drivers.sim import SimulatedRig
from hilrig.identify import DEFAULT_METHOD

BROKER = ("127.0.0.1", 1883)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def two_captures(tmp_path_factory):
    """Two simulated releases through the service, without MQTT."""
    directory = tmp_path_factory.mktemp("captures")
    settings = load_settings(None, storage={"directory": str(directory)})
    source = SimulatedRig(rig=settings.rig, friction=settings.sim.friction,
                          pose_deg=settings.sim.pose_deg, paced=False, hold_s=1.0)
    events: list[str] = []
    service = PlainRun(settings, source, None, captures=2, say=events.append)
    report = asyncio.run(service.run())
    return report, events, directory


@pytest.mark.timeout(240)
def test_each_release_becomes_one_identified_capture_file(two_captures):
    report, events, directory = two_captures
    assert [o.error for o in report.outcomes] == [None, None]
    assert len({o.capture_id for o in report.outcomes}) == 2
    for o in report.outcomes:
        capture = read_capture(o.path)
        assert capture.capture_id == o.capture_id
        assert capture.trigger.end_reason == "settled"
        assert capture.gaps() == []
        assert o.result is not None and o.result.capture_id == o.capture_id
        assert min(o.result.fit_percent.values()) > 99.5
        assert o.result.parameters["mu_d1"].value == pytest.approx(6e-4, rel=0.05)
    assert sorted(p.name for p in directory.iterdir()) == sorted(f"{o.capture_id}.h5"
                                                               for o in report.outcomes)
    assert any(e.startswith("result ") for e in events)


@pytest.mark.timeout(240)
async def test_a_held_rig_is_released_by_command_and_a_rig_that_cannot_be_is_refused(
        tmp_path, until):
    settings = load_settings(None, storage={"directory": str(tmp_path)})
    rig = SimulatedRig(pose_deg=(0.0, 30.0), paced=False, auto_release=False)
    run = PlainRun(settings, rig, None, captures=1)
    router = CommandRouter(settings.mqtt.rig_id)
    run.register_commands(router)
    task = asyncio.create_task(run.run())
    await until(lambda: run.engine.trigger_state is TriggerState.ARMED, 60, "the trigger to arm")
    reply = await router.handle("release", {}, None)
    assert reply["ok"] and reply["result"]["released"], reply
    report = await asyncio.wait_for(task, 200)
    (outcome,) = report.outcomes
    capture = read_capture(outcome.path)
    # the source told where it let go: the trigger's onset follows within a few ms
    assert 0 <= capture.trigger.onset_index - reply["result"]["release_index"] < 100
    again = await router.handle("release", {}, None)
    assert not again["ok"] and "not held" in again["error"]

    class ByHand:  # a source with no way to let go: a person releases it
        def __init__(self, inner: SimulatedRig) -> None:
            self.info, self.stats, self._inner = inner.info, inner.stats, inner

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc):
            pass

        def blocks(self):
            return self._inner.blocks()

    manual = PlainRun(settings, ByHand(rig), None, captures=1)
    manual.register_commands(router := CommandRouter(settings.mqtt.rig_id))
    refused = await router.handle("release", {}, None)
    assert not refused["ok"] and "released by hand" in refused["error"]


def test_capture_keeps_the_pre_trigger_window_and_starts_at_the_release(two_captures):
    report, _, _ = two_captures
    first = read_capture(report.outcomes[0].path)
    release = 10_000  # the simulated rig is held 1.0 s at 10 kHz, then let go
    onset = first.trigger.onset_index
    assert abs(onset - release) <= 50  # within 5 ms of the release
    assert first.sample_index[0] == onset - 5000  # 0.5 s pre-trigger kept
    assert (first.counts[: onset - int(first.sample_index[0]) - 10] ==
            first.counts[0]).all()  # at rest before it


def _sub(rig_id: str) -> subprocess.Popen:
    return subprocess.Popen(
        ["mosquitto_sub", "-h", BROKER[0], "-p", str(BROKER[1]), "-v", "-q", "1",
         "-F", "%t|%r|%p", "-t", f"hilrig/{rig_id}/#"],
        stdout=subprocess.PIPE, text=True)


def _clear_retained(rig_id: str) -> None:
    for topic in ("status", "result/latest"):
        subprocess.run(["mosquitto_pub", "-h", BROKER[0], "-p", str(BROKER[1]), "-r", "-n",
                        "-t", f"hilrig/{rig_id}/{topic}"], check=False, timeout=10)


def _retained_status_becomes(rig_id: str, state: str, within_s: float) -> bool:
    """Poll the retained status with a fresh mosquitto_sub until it reads `state`."""
    import time
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        got = subprocess.run(["mosquitto_sub", "-h", BROKER[0], "-p", str(BROKER[1]), "-C", "1",
                              "-W", "2", "-t", f"hilrig/{rig_id}/status"],
                             capture_output=True, text=True, timeout=10)
        if got.stdout.strip() and json.loads(got.stdout)["state"] == state:
            return True
        time.sleep(0.5)
    return False


def _service_env(tmp_path: Path, rig_id: str, url: str = "mqtt://127.0.0.1:1883") -> dict:
    env = dict(os.environ)
    env.update(HILRIG_MQTT__RIG_ID=rig_id, HILRIG_MQTT__URL=url, HILRIG_MQTT__KEEPALIVE_S="2",
               HILRIG_STORAGE__DIRECTORY=str(tmp_path / "data"))
    return env


@pytest.mark.timeout(240)
def test_any_mqtt_client_sees_status_capture_result_and_offline_after_kill(tmp_path):
    rig_id = f"test-{uuid.uuid4().hex[:8]}"
    sub = _sub(rig_id)
    service = subprocess.Popen([sys.executable, "-m", "hilrig", "run", "--sim", "--unpaced"],
                               env=_service_env(tmp_path, rig_id), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    seen: dict[str, dict] = {}
    try:
        assert sub.stdout is not None
        for line in sub.stdout:
            topic, retained, payload = line.rstrip("\n").split("|", 2)
            if not payload:
                continue
            doc = json.loads(payload)
            kind = topic.split("/")[2]
            seen.setdefault(kind if kind != "result" else "/".join(topic.split("/")[2:4]), doc)
            if kind == "result" and topic.endswith(f"/{DEFAULT_METHOD}"):
                break
        status = seen["status"]
        assert status["schema"].startswith("hilrig.status/") and status["rig_id"] == rig_id
        capture = next(v for k, v in seen.items() if k == "capture")
        assert capture["schema"].startswith("hilrig.capture/")
        result = next(v for k, v in seen.items() if k.startswith("result/")
                      and k != "result/latest")
        assert result["schema"] == "hilrig.result/1" and result["rig_id"] == rig_id
        assert result["capture_id"] == capture["capture_id"]
        assert result["method"] == DEFAULT_METHOD
        assert min(result["fit_percent"].values()) > 99.5
        assert result["parameters"]["Fn_t0"]["identifiable"] is False

        service.send_signal(signal.SIGKILL)  # no chance to say goodbye: the will must
        service.wait(timeout=10)
        assert _retained_status_becomes(rig_id, "offline", within_s=20)
    finally:
        sub.kill()
        if service.poll() is None:
            service.kill()
        _clear_retained(rig_id)


@pytest.mark.timeout(240)
def test_without_a_broker_the_service_starts_an_embedded_one(tmp_path):
    port = _free_port()  # nothing listens here
    rig_id = f"test-{uuid.uuid4().hex[:8]}"
    done = subprocess.run(
        [sys.executable, "-m", "hilrig", "run", "--sim", "--unpaced", "--captures", "1"],
        env=_service_env(tmp_path, rig_id, url=f"mqtt://127.0.0.1:{port}"),
        capture_output=True, text=True, timeout=200)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "embedded" in done.stderr.lower()
    # quietly: no traceback, no error, and no MQTT v5 attempt the embedded broker ignores
    # until the connect timeout (it speaks 3.1.1 only)
    assert "Traceback" not in done.stderr and "ERROR" not in done.stderr, done.stderr[-3000:]
    assert "v5" not in done.stderr and "Invalid connection" not in done.stderr
    assert f"published hilrig/{rig_id}/result/" in done.stdout
    # a capture's documents (one a second while it records) are not echoed to the terminal
    assert f"published hilrig/{rig_id}/capture/" not in done.stdout
    assert len(list((tmp_path / "data").glob("*.h5"))) == 1


@pytest.mark.timeout(240)
def test_a_plain_runs_captures_land_in_the_catalog_and_can_be_listed_and_reidentified(tmp_path):
    env = _service_env(tmp_path, f"test-{uuid.uuid4().hex[:8]}")
    env["HILRIG_IDENTIFY__METHOD"] = "regression"

    def hilrig(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "hilrig", *args], env=env,
                              capture_output=True, text=True, timeout=200)

    done = hilrig("run", "--sim", "--unpaced", "--captures", "2")
    assert done.returncode == 0, done.stderr[-2000:]
    listed = hilrig("captures", "list", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    captures = json.loads(listed.stdout)
    assert [c["seq"] for c in captures] == [1, 2] and {c["status"] for c in captures} == {"done"}
    assert all(c["session_id"] is None and Path(c["path"]).is_file() for c in captures)
    again = hilrig("reidentify", captures[0]["capture_id"], "--method", "shooting")
    assert again.returncode == 0, again.stderr[-2000:]
    results = json.loads(hilrig("results", "list", "--format", "json").stdout)
    assert sorted(r["method"] for r in results) == ["regression", "regression", "shooting"]
