"""`hilrig serve`: a daemon idle between sessions, started and driven over MQTT."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid

import pytest

from daq._catalog import Catalog
from daq._commands import send_command
from daq._config import MqttConfig

URL = "mqtt://127.0.0.1:1883"


@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_a_session_started_by_command_runs_and_the_daemon_is_idle_again(tmp_path):
    rig_id = f"serve-{uuid.uuid4().hex[:8]}"
    root = tmp_path / "archive"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(root), HILRIG_MQTT__RIG_ID=rig_id,
               HILRIG_MQTT__URL=URL, HILRIG_MQTT__TELEMETRY_HZ="0")
    log = tmp_path / "serve.log"
    proc = subprocess.Popen([sys.executable, "-m", "daq.cli", "serve", "--sim", "--unpaced"],
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
        started = await send_command(cfg, "session/start", {"plan": {
            "captures": 2, "poses_deg": [[0.0, 30.0]], "paced": False}})
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
