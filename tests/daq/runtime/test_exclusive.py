"""One process drives a rig and writes its archive; a second is refused, naming the first.

Before: a second `session start` on the same rig was accepted, and the two processes took
turns kicking each other off the broker (one client id), dropping publishes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest

from hilrig.daq.cli import main
from hilrig.daq.runtime import Held, holding
from hilrig.daq.storage import Catalog

HILRIG = [sys.executable, "-m", "hilrig"]


def test_a_second_holder_of_the_archive_the_rig_or_the_port_is_refused(tmp_path):
    rig = f"rig-{uuid.uuid4().hex[:6]}"
    with holding(tmp_path / "a", rig, "/dev/ttyACM9", "session start"):
        for archive, other_rig, port, what in [
                (tmp_path / "a", f"{rig}-other", None, "the archive"),
                (tmp_path / "b", rig, None, f"rig {rig!r}"),
                (tmp_path / "b", f"{rig}-other", "/dev/ttyACM9", "the port /dev/ttyACM9")]:
            with pytest.raises(Held, match=rf"{what}.* is held by process {os.getpid()} "
                                           r"\(session start, since \d{4}-"):
                with holding(archive, other_rig, port, "run"):
                    pass
    with holding(tmp_path / "a", rig, "/dev/ttyACM9", "run"):  # let go when it ended
        pass


def test_a_killed_holder_leaves_nothing_that_refuses_the_next(tmp_path):
    rig = f"rig-{uuid.uuid4().hex[:6]}"
    code = ("import sys, time\nfrom pathlib import Path\n"
            "from hilrig.daq.runtime import holding\n"
            "with holding(Path(sys.argv[1]), sys.argv[2], None, 'run'):\n"
            "    print('held', flush=True)\n    time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, str(tmp_path), rig],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        with pytest.raises(Held, match=f"process {proc.pid} "):
            with holding(tmp_path, rig, None, "run"):
                pass
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    with holding(tmp_path, rig, None, "run"):
        pass


@pytest.mark.timeout(300)
def test_a_session_on_a_rig_another_process_serves_is_refused_and_creates_nothing(
        tmp_path, capfd, monkeypatch, wait_until):
    rig = f"held-{uuid.uuid4().hex[:6]}"
    root = tmp_path / "archive"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(root), HILRIG_MQTT__RIG_ID=rig,
               HILRIG_MQTT__URL="mqtt://127.0.0.1:1883")
    log = tmp_path / "serve.log"
    serve = subprocess.Popen([*HILRIG, "serve", "--sim", "--unpaced"], env=env,
                             stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: "idle" in log.read_text(), 120, "serve to be idle")
        for name, value in env.items():
            if name.startswith("HILRIG_"):
                monkeypatch.setenv(name, value)
        capfd.readouterr()
        assert main(["session", "start", "--sim", "--captures", "1", "--unpaced"]) == 2
        err = capfd.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("hilrig: error: "), err
        assert "is held by process" in err[0] and f"{serve.pid} (serve" in err[0], err
        with Catalog.open(root, create=False) as cat:
            assert cat.sessions() == []
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(timeout=60)
