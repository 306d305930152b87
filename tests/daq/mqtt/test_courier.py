"""Delivery guarantees: a real Mosquitto process the test stops and starts again.

Results and capture records go through the outbox on disk and are deleted only after
the broker acknowledged them, so a broker outage or a restart of the service loses
nothing; a redelivered message carries the same msg_id.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import aiomqtt
import pytest

from hilrig.daq.config import MqttConfig, load_settings
from hilrig.daq.mqtt import CommandRouter, Courier, send_command
from hilrig.daq.runtime import SessionPlan, SessionRun, SimReleaser, new_session_id
from hilrig.daq.storage import Catalog, Outbox
from hilrig.drivers.sim import SimulatedRig
from hilrig.identify import PARAM_NAMES, TABLE_III_TRUTH, IdentificationResult, ParameterEstimate


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Mosquitto:
    """A private Mosquitto on a free loopback port, stopped and started by the test.

    Persistent, like a lab's broker: sessions and their queued QoS 1 messages survive a
    restart, so a dashboard that comes back after the rig still gets what it missed.
    """

    def __init__(self, directory: Path) -> None:
        exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        if not Path(exe).exists():
            pytest.fail("these tests need the mosquitto binary (Debian: mosquitto)")
        self.exe = exe
        self.port = _free_port()
        self.conf = directory / "mosquitto.conf"
        self.conf.write_text(f"listener {self.port} 127.0.0.1\nallow_anonymous true\n"
                             f"persistence true\npersistence_location {directory}/\n")
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen([self.exe, "-c", str(self.conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise AssertionError("mosquitto did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)
        self.proc = None

    def crash(self) -> None:
        """SIGKILL: nothing retained since its last autosave survives."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None


@pytest.fixture
def broker(tmp_path):
    b = Mosquitto(tmp_path)
    b.start()
    yield b
    b.stop()


class Collector:
    """A dashboard: stays subscribed, reconnecting by itself whenever the broker is back.

    Its session is persistent (one client id, clean_session off), as a dashboard that must
    not miss results would have: whether it or the rig reconnects first, nothing is lost.
    """

    def __init__(self, port: int, topic: str) -> None:
        self.port, self.topic = port, topic
        self.client_id = f"dash-{uuid.uuid4().hex[:6]}"
        self.messages: list[tuple[str, dict]] = []
        self.connected = asyncio.Event()
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            try:
                async with aiomqtt.Client("127.0.0.1", self.port, identifier=self.client_id,
                                          clean_session=False) as c:
                    await c.subscribe(self.topic, qos=1)
                    self.connected.set()
                    async for m in c.messages:
                        self.messages.append((m.topic.value, json.loads(m.payload)))
            except aiomqtt.MqttError:
                self.connected.clear()
                await asyncio.sleep(0.05)

    def stop(self) -> None:
        self._task.cancel()


def _result(capture_id: str) -> IdentificationResult:
    return IdentificationResult(
        method="grey-box", capture_id=capture_id, fit_percent={"arm": 99.0, "pendulum": 99.5},
        parameters={n: ParameterEstimate(value=getattr(TABLE_III_TRUTH, n), identifiable=True)
                    for n in PARAM_NAMES},
        compute_seconds=1.0, normalized_compute_time=1e-6, capture_seconds=10.0,
        sample_rate_hz=1e4, samples=100_001, tilt_deg=10.0)


def test_the_outbox_keeps_messages_across_processes_and_ignores_a_known_id(tmp_path):
    box = Outbox(tmp_path)
    box.put("a", "t/1", b"one")
    box.put("b", "t/2", b"two", retain=True)
    box.put("a", "t/1", b"one again")  # the same message: not queued twice
    box.close()
    again = Outbox(tmp_path)  # a restarted service
    rows = again.pending()
    assert [(r.msg_id, r.topic, r.payload, r.retain) for r in rows] == [
        ("a", "t/1", b"one", False), ("b", "t/2", b"two", True)]
    again.done(rows[0].seq)
    assert len(again) == 1


@pytest.mark.timeout(120)
async def test_listening_means_a_command_sent_now_is_heard_across_a_broker_restart(tmp_path,
                                                                                  broker, until):
    # `hilrig serve` announces itself on `listening`: a command sent the moment it is set
    # must get its reply, after the first connection and after a reconnection alike.
    rig = f"listen-{uuid.uuid4().hex[:6]}"
    cfg = MqttConfig(url=broker.url, rig_id=rig)
    async with Courier(cfg, Outbox(tmp_path), backoff=(0.2, 0.5),
                       commands=CommandRouter(rig)) as courier:
        for _ in range(2):
            await asyncio.wait_for(courier.listening.wait(), 20)
            reply = await send_command(cfg, "arm", {}, timeout_s=10)
            assert not reply["ok"] and "not available" in reply["error"]
            broker.stop()
            await until(lambda: not courier.listening.is_set(), 10, "the link to drop")
            broker.start()


@pytest.mark.fault(injected="MQTT: Mosquitto stopped while results are published, then started",
                   expected="results wait in the outbox on disk and all arrive, none twice")
@pytest.mark.timeout(120)
async def test_results_sent_while_the_broker_is_down_arrive_when_it_is_back(tmp_path, broker,
                                                                             until):
    rig = f"outage-{uuid.uuid4().hex[:6]}"
    cfg = MqttConfig(url=broker.url, rig_id=rig)
    dash = Collector(broker.port, f"hilrig/{rig}/result/+/+")
    await asyncio.wait_for(dash.connected.wait(), 10)
    box = Outbox(tmp_path / "spool")
    async with Courier(cfg, box, backoff=(1.0, 2.0)) as courier:
        for k in range(3):
            await courier.publish_result(f"c{k}", "grey-box", _result(f"c{k}"))
        await until(lambda: len(dash.messages) == 3 and courier.pending == 0, 20,
                     "3 results (and result/latest) delivered before the outage")
        broker.stop()
        await until(lambda: not dash.connected.is_set(), 10, "the dashboard to notice")
        for k in range(3, 8):
            await courier.publish_result(f"c{k}", "grey-box", _result(f"c{k}"))
        await courier.publish_capture("c7", {"samples": 10})
        await asyncio.sleep(1.0)
        assert courier.pending == 11  # on disk: 5 results x 2 topics, 1 capture record
        broker.start()
        await asyncio.wait_for(dash.connected.wait(), 10)
        await until(lambda: courier.pending == 0, 30, "the outbox to drain")
        assert courier.reconnects >= 1
    await until(lambda: len(dash.messages) >= 8, 10, "every result")
    dash.stop()
    ids = [m["msg_id"] for _, m in dash.messages]
    assert sorted({m["capture_id"] for _, m in dash.messages}) == [f"c{k}" for k in range(8)]
    assert len(ids) == len(set(ids))  # each once here; a redelivery would repeat its msg_id
    assert len(box) == 0


@pytest.mark.fault(injected="MQTT: the service stops while the broker is down",
                   expected="its undelivered results stay on disk and go out on the next start")
@pytest.mark.timeout(120)
async def test_what_a_stopped_service_could_not_send_goes_out_on_its_next_start(tmp_path,
                                                                                broker, until):
    rig = f"restart-{uuid.uuid4().hex[:6]}"
    cfg = MqttConfig(url=broker.url, rig_id=rig)
    broker.stop()
    spool = tmp_path / "spool"
    async with Courier(cfg, Outbox(spool), drain_timeout_s=1.0) as courier:
        await courier.publish_result("c1", "grey-box", _result("c1"))
    assert len(Outbox(spool)) == 2  # nothing lost with the service gone
    broker.start()
    dash = Collector(broker.port, f"hilrig/{rig}/result/c1/+")
    await asyncio.wait_for(dash.connected.wait(), 10)
    async with Courier(cfg, Outbox(spool)) as courier:  # the service started again
        await until(lambda: courier.pending == 0, 30, "the old outbox to drain")
    await until(lambda: dash.messages, 10, "the old result")
    dash.stop()
    assert dash.messages[0][1]["msg_id"].startswith("result/c1/grey-box/")


@pytest.mark.fault(injected="MQTT: broker stopped during a 10-capture session while three "
                            "more captures are identified, then started",
                   expected="acquisition and identification go on; all 10 results delivered, "
                            "once each in the catalog")
@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_a_broker_restart_during_a_ten_capture_session_loses_no_result(tmp_path, broker,
                                                                             until):
    rig = f"sess-outage-{uuid.uuid4().hex[:6]}"
    settings = load_settings(None, storage={"directory": str(tmp_path / "archive")},
                             mqtt={"rig_id": rig, "url": broker.url})
    plan = SessionPlan(captures=10, poses_deg=[(0.0, 30.0)], paced=False)
    dash = Collector(broker.port, f"hilrig/{rig}/result/+/+")
    await asyncio.wait_for(dash.connected.wait(), 10)
    with Catalog.open(tmp_path / "archive") as cat:
        sid = new_session_id()
        cat.add_session(sid, plan.model_dump_json())
        rig_src = SimulatedRig(rig=settings.rig, friction=settings.sim.friction,
                               pose_deg=plan.pose(1), paced=False, auto_release=False)
        async with Courier(settings.mqtt, Outbox(tmp_path / "archive"),
                           backoff=(0.5, 2.0)) as courier:
            runner = SessionRun(settings, rig_src, courier, plan=plan, catalog=cat,
                                   session_id=sid, releaser=SimReleaser(rig_src, plan.hold_s))
            session = asyncio.create_task(runner.run())
            await until(lambda: len(dash.messages) >= 2, 240, "two results")
            broker.stop()
            # while the broker is down, captures and identification go on: three more
            # results land in the catalog, each waiting in the outbox
            before = len(cat.results(session_id=sid))
            await until(lambda: len(cat.results(session_id=sid)) >= before + 3, 120,
                        "three more results with the broker down")
            assert courier.pending >= 3
            broker.start()
            await session
            await until(lambda: courier.pending == 0, 60, "the outbox to drain")
        results = cat.results(session_id=sid)
        assert len(results) == 10  # once each in the catalog
    await until(lambda: len({m["capture_id"] for _, m in dash.messages}) == 10, 30,
                 "all ten results at the dashboard")
    dash.stop()
    got = {}
    for _, m in dash.messages:  # a duplicate may only be a redelivery of the same message
        assert got.setdefault((m["capture_id"], m["method"]), m["msg_id"]) == m["msg_id"]
    assert sorted(c for c, _ in got) == sorted(r.capture_id for r in results)


async def _retained(port: int, topic: str, quiet_s: float = 1.0) -> dict[str, dict]:
    """What a new subscriber to `topic` gets at once: the retained messages, by topic."""
    got: dict[str, dict] = {}
    async with aiomqtt.Client("127.0.0.1", port) as c:
        await c.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(quiet_s):
                async for m in c.messages:
                    if m.retain and m.payload:
                        got[m.topic.value] = json.loads(m.payload)
        except TimeoutError:
            pass
    return got


@pytest.mark.fault(injected="MQTT: the broker crashes (SIGKILL) and comes back without its "
                            "retained messages",
                   expected="the service publishes every retained topic again: status, the "
                            "session, its capture records and overlays, the newest of each")
@pytest.mark.timeout(60)
async def test_a_broker_that_lost_its_retained_messages_is_filled_again(tmp_path, broker, until):
    rig = f"fill-{uuid.uuid4().hex[:6]}"
    cfg = MqttConfig(url=broker.url, rig_id=rig)
    response = {"joints": ["arm", "pendulum"], "t_s": [0.0, 0.1], "measured": [[0, 1], [1, 2]],
                "simulated": [[0, 1], [1, 2]]}
    async with Courier(cfg, Outbox(tmp_path), backoff=(0.2, 0.5)) as courier:
        await courier.publish_status("idle")
        await courier.publish_session("S-old", {"state": "done"})
        await courier.publish_capture_record("S-old", "c0", {"seq": 1, "status": "done"})
        courier.forget_retained("S1")  # a new session: the last one's stay on the broker only
        await courier.publish_session("S1", {"state": "running", "done": 1})
        for seq in (1, 2):
            await courier.publish_capture_record("S1", f"c{seq}", {"seq": seq,
                                                                   "status": "captured"})
        await courier.publish_capture_record("S1", "c1", {"seq": 1, "status": "done"})
        await courier.publish_overlay("c1", "shooting", response, "S1")
        prefix = f"hilrig/{rig}"
        await until(lambda: courier.connected and not courier._latest, 10, "delivery")
        before = await _retained(broker.port, f"{prefix}/#")
        assert len(before) == 7  # status, 2 sessions, 3 records, 1 overlay
        broker.crash()
        broker.start()
        assert await _retained(broker.port, f"{prefix}/#", 0.5) == {}  # the broker kept none
        await until(lambda: courier.connected and not courier._latest, 20, "a new connection")
        after = await _retained(broker.port, f"{prefix}/#")
    assert set(after) == set(before) - {f"{prefix}/session/S-old",
                                        f"{prefix}/session/S-old/capture/c0"}
    assert after[f"{prefix}/status"]["state"] == "idle"
    assert after[f"{prefix}/session/S1/capture/c1"]["status"] == "done"  # the newest
    assert after[f"{prefix}/result/c1/shooting/overlay"]["measured"] == [[0, 1], [1, 2]]
