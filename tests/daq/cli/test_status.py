"""The terminal as a status display: a live line redrawn in place on a terminal, lines
that stay above it, and nothing of the live line in a pipe or a file."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys

import pytest

from hilrig.daq.cli._status import StatusLine


def test_on_a_terminal_lines_stay_above_a_live_line_redrawn_in_place():
    out = io.StringIO()
    status = StatusLine(out, tty=True)
    status.show("rig", "recording c1: 1.0 s, 10,000 samples")
    status.say("capture c0: 42.8 s")
    status.show("session", "1/3 done")
    status.close()
    text = out.getvalue()
    # the live line is cleared before a line that stays, then drawn again under it
    assert text.index("\r\x1b[Kcapture c0: 42.8 s\n") < text.rindex("recording c1")
    assert text.endswith("\r\x1b[K")  # nothing of it left behind
    assert "capture c0: 42.8 s\n" in text


def test_in_a_pipe_only_the_lines_that_stay_are_written():
    out = io.StringIO()
    status = StatusLine(out, tty=False)
    status.show("rig", "recording c1: 1.0 s")
    status.say("capture c0: 42.8 s")
    status.close()
    assert out.getvalue() == "capture c0: 42.8 s\n"


@pytest.mark.timeout(240)
def test_a_run_on_a_terminal_shows_the_capture_recording_live(tmp_path):
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "archive"),
               HILRIG_MQTT__RIG_ID=f"status-{os.getpid()}", HILRIG_IDENTIFY__METHOD="regression")
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "hilrig", "run", "--sim", "--unpaced",
                             "--captures", "1"], stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the other side closed
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=200) == 0
    text = out.decode(errors="replace")
    assert "\r\x1b[Krecording " in text and " samples" in text
    assert "result " in text.split("recording ")[-1]  # the result stays, after the live line


@pytest.mark.timeout(240)
def test_each_command_run_in_one_process_writes_to_its_own_output(tmp_path, monkeypatch):
    from .test_cli import run_main

    monkeypatch.setenv("HILRIG_STORAGE__DIRECTORY", str(tmp_path / "archive"))
    monkeypatch.setenv("HILRIG_MQTT__RIG_ID", f"status-inproc-{os.getpid()}")
    monkeypatch.setenv("HILRIG_IDENTIFY__METHOD", "regression")
    outputs = [run_main("run", "--sim", "--unpaced", "--captures", "1") for _ in range(2)]
    for rc, out in outputs:
        assert rc == 0 and out.count("result ") == 1, out
