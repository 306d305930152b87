"""`hilrig serve`: a daemon idle between sessions, started and driven over MQTT."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid

import pytest

from hilrig.daq.config import MqttConfig, load_settings
from hilrig.daq.mqtt import CommandRouter, Courier, send_command
from hilrig.daq.runtime import RigDaemon, SessionPlan
from hilrig.daq.storage import Catalog, Outbox
from hilrig.drivers.sim import SimulatedRig

URL = "mqtt://127.0.0.1:1883"


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_a_session_started_by_command_runs_and_the_daemon_is_idle_again(tmp_path):
    rig_id = f"serve-{uuid.uuid4().hex[:8]}"
    root = tmp_path / "archive"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(root), HILRIG_MQTT__RIG_ID=rig_id,
               HILRIG_MQTT__URL=URL, HILRIG_MQTT__TELEMETRY_HZ="0")
    log = tmp_path / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "hilrig", "serve", "--sim", "--unpaced"],
                            env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    cfg = MqttConfig(url=URL, rig_id=rig_id)
    try:
        async with asyncio.timeout(60):
            while "idle; rig" not in log.read_text():
                await asyncio.sleep(0.1)
        refused = await send_command(cfg, "session/stop", {})
        assert not refused["ok"] and "no session is running" in refused["error"]
        bad = await send_command(cfg, "session/start", {"plan": {"captures": -1}})
        assert not bad["ok"] and "captures" in bad["error"]
        wrong = await send_command(cfg, "session/start",
                                   {"plan": {"captures": 1, "source": "serial", "port": "/x",
                                             "release": "operator"}})
        assert not wrong["ok"] and "this daemon's rig is sim" in wrong["error"]
        # a plan in the shape of a plan file's [session] table, as well as its bare fields
        started = await send_command(cfg, "session/start", {"plan": {"session": {
            "captures": 2, "poses_deg": [[0.0, 30.0]], "paced": False}}})
        assert started["ok"], started
        sid = started["result"]["session_id"]
        again = await send_command(cfg, "session/start", {"plan": {"captures": 1}})
        assert not again["ok"] and f"session {sid} is running" in again["error"]
        async with asyncio.timeout(300):
            while f"session {sid}: over; idle" not in log.read_text():
                await asyncio.sleep(0.2)
        with Catalog.open(root, create=False) as cat:
            assert cat.session(sid).status == "done"
            first = cat.captures(sid)[0].capture_id
        reid = await send_command(cfg, "identify", {"capture_id": first, "method": "regression"})
        assert reid["ok"] and reid["result"]["method"] == "regression"
        with Catalog.open(root, create=False) as cat:
            assert len(cat.results(capture_id=first)) == 2
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, log.read_text()[-2000:]


def _start(argv: list[str], log, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hilrig", *argv], env=env,
                            stdout=open(log, "w"), stderr=subprocess.STDOUT)


async def _until_logged(log, text: str, timeout_s: float) -> None:
    async with asyncio.timeout(timeout_s):
        while text not in log.read_text():
            await asyncio.sleep(0.1)


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_a_latch_plan_sent_to_the_daemon_opens_the_bridges_latch(tmp_path):
    # the daemon on the real serial driver, the board emulated on a pty with a release
    # output: a plan saying release = "latch" must be released by the board (RELEASE),
    # not left waiting for an operator
    rig_id = f"latch-{uuid.uuid4().hex[:8]}"
    root, link = tmp_path / "archive", tmp_path / "bridge"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(root), HILRIG_MQTT__RIG_ID=rig_id,
               HILRIG_MQTT__URL=URL, HILRIG_MQTT__TELEMETRY_HZ="0")
    emu_log, serve_log = tmp_path / "emulator.log", tmp_path / "serve.log"
    emu = _start(["emulate-firmware", "--link", str(link), "--latch", "--unpaced", "--pose",
                  "0", "30"], emu_log, env)
    serve = None
    try:
        async with asyncio.timeout(60):
            while not link.is_symlink():
                await asyncio.sleep(0.1)
        serve = _start(["serve", "--port", str(link)], serve_log, env)
        await _until_logged(serve_log, "idle; rig", 60)
        cfg = MqttConfig(url=URL, rig_id=rig_id)
        started = await send_command(cfg, "session/start", {"plan": {
            "captures": 1, "release": "latch", "poses_deg": [[0.0, 30.0]], "hold_s": 0.5}})
        assert started["ok"], started
        sid = started["result"]["session_id"]
        await _until_logged(serve_log, f"session {sid}: over; idle", 300)
        with Catalog.open(root, create=False) as cat:
            assert cat.session(sid).status == "done"
            (capture,) = cat.captures(sid)
            assert capture.status == "done"
            # the board answered RELEASE with the sample it let go at; the trigger agrees
            assert capture.summary["release_index"] >= capture.summary["start_index"]
            assert abs(capture.summary["release_error_ms"]) <= 5.0
        assert f"latch: session {sid} capture 1/1: the bridge releases the rig" \
            in serve_log.read_text()
    finally:
        if serve is not None:  # the daemon first: it stops the board's stream as it leaves
            serve.send_signal(signal.SIGTERM)
            assert serve.wait(timeout=60) == 0, serve_log.read_text()[-2000:]
        emu.send_signal(signal.SIGTERM)
        emu.wait(timeout=30)
    assert "Traceback" not in serve_log.read_text()


@pytest.mark.timeout(300)
async def test_a_plan_takes_what_it_leaves_out_from_the_daemons_rig_and_may_not_contradict_it(
        tmp_path, until):
    # no broker: the courier is never connected, what is published waits in the outbox
    settings = load_settings(None, storage={"directory": str(tmp_path)},
                             mqtt={"url": "mqtt://127.0.0.1:9", "telemetry_hz": 0})
    rig = SimulatedRig(pose_deg=(0.0, 30.0), paced=False, auto_release=False)
    router = CommandRouter(settings.mqtt.rig_id)
    lines: list[str] = []
    with Catalog.open(tmp_path) as cat:
        daemon = RigDaemon(settings, rig, Courier(settings.mqtt, Outbox(tmp_path)), router, cat,
                           say=lines.append)
        try:
            wrong = await router.handle("session/start", {"plan": {
                "captures": 1, "source": "serial", "port": "/dev/x", "release": "operator"}},
                None)
            assert not wrong["ok"] and "this daemon's rig is sim" in wrong["error"]
            started = await router.handle("session/start", {"plan": {
                "captures": 1, "poses_deg": [[0.0, 30.0]]}}, None)
            assert started["ok"], started
            sid = started["result"]["session_id"]
            await until(lambda: f"session {sid}: over; idle" in lines, 240, "the session to end")
            plan = SessionPlan.model_validate_json(cat.session(sid).plan_json)
            assert plan.source == "sim" and plan.paced is False  # the daemon's rig, unpaced
            assert cat.session(sid).status == "done"
            assert [c.status for c in cat.captures(sid)] == ["done"]
        finally:
            daemon.pool.shutdown()
