"""Fault injection on storage and bad input: clear errors, nothing half-written, nothing lost."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

# the one step that makes a written file durable is where a full disk shows: the
# faults below are injected there, in the storage layer's private module
import hilrig.daq.storage._atomic as atomic
from hilrig.daq.config import ConfigError, load_settings
from hilrig.daq.mqtt import COMMANDS, CommandRouter, Courier
from hilrig.daq.runtime import (
    PlanError,
    RigDaemon,
    SessionPlan,
    SessionRun,
    SimReleaser,
    new_session_id,
    parse_plan,
)
from hilrig.daq.storage import Catalog, Outbox, read_capture, write_capture_h5
from hilrig.drivers.sim import SimulatedRig

POSE = (0.0, 30.0)
HILRIG = [sys.executable, "-m", "hilrig"]


def _simulated_session(root: Path, cat: Catalog, plan: SessionPlan) -> str:
    """Run a session of the simulated rig in this process; returns its id."""
    s = load_settings(None, storage={"directory": str(root)})
    sid = new_session_id()
    cat.add_session(sid, plan.model_dump_json())
    rig = SimulatedRig(rig=s.rig, friction=s.sim.friction, pose_deg=plan.pose(1),
                       paced=plan.paced, auto_release=False)
    asyncio.run(SessionRun(s, rig, None, plan=plan, catalog=cat, session_id=sid,
                              releaser=SimReleaser(rig, plan.hold_s)).run())
    return sid


@pytest.mark.fault(injected="storage: ENOSPC while the first capture file is written",
                   expected="that capture held in memory and written once there is room "
                            "(the session suspended meanwhile): both done, nothing "
                            "half-written, the catalog consistent")
@pytest.mark.timeout(300)
def test_a_full_disk_during_a_capture_write_holds_that_capture_until_there_is_room(
        tmp_path, monkeypatch):
    real = atomic._fsync_path
    calls = {"n": 0}

    def full_disk_once(path: Path) -> None:
        calls["n"] += 1
        if calls["n"] == 1:  # where a delayed-allocation file system reports it
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path)

    monkeypatch.setattr(atomic, "_fsync_path", full_disk_once)
    with Catalog.open(tmp_path) as cat:
        sid = _simulated_session(tmp_path, cat, SessionPlan(captures=2, poses_deg=[POSE],
                                                            paced=False, settle_s=0.5))
        caps = cat.captures(sid)
        assert [(c.seq, c.status) for c in caps] == [(1, "done"), (2, "done")]
        assert all(read_capture(c.path).capture_id == c.capture_id for c in caps)
        assert len(cat.results(session_id=sid)) == 2  # one each, none twice
        assert cat.integrity_ok()
    assert list(tmp_path.rglob("*.partial-*")) == []  # nothing half-written left behind


@pytest.mark.fault(injected="storage: the archive's disk (a 20 MB tmpfs, min_free_mb = 0) "
                            "fills during an 8-capture session, then is freed",
                   expected="the session suspends with the reason and the event, holds the "
                            "captures taken, and resumes by itself when space returns: all 8 "
                            "done, one result each, no traceback")
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_a_disk_that_fills_mid_session_suspends_it_and_space_returning_resumes_it(
        small_disk, tmp_path, wait_until):
    import threading

    filler = small_disk / "filler"
    with open(filler, "wb") as f:  # about 1 MB left: two captures, then it is full
        f.truncate(19_400 * 1024)
        os.posix_fallocate(f.fileno(), 0, 19_400 * 1024)
    plan = tmp_path / "plan.toml"
    plan.write_text('[session]\ncaptures = 8\npaced = false\nposes_deg = [[0.0, 30.0]]\n'
                    'min_free_mb = 0\nmethods = ["regression"]\nsettle_s = 1.0\n')
    rig = f"full-{uuid.uuid4().hex[:6]}"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(small_disk), HILRIG_MQTT__RIG_ID=rig,
               HILRIG_MQTT__URL="mqtt://127.0.0.1:1883", HILRIG_MQTT__TELEMETRY_HZ="0")
    events: list[dict] = []
    listening, stop = threading.Event(), threading.Event()

    async def listen() -> None:
        import aiomqtt

        async def collect(client: aiomqtt.Client) -> None:
            async for message in client.messages:  # never cancelled mid-message
                events.append(json.loads(message.payload))

        async with aiomqtt.Client("127.0.0.1", 1883) as client:
            await client.subscribe(f"hilrig/{rig}/events", qos=1)
            listening.set()
            reader = asyncio.create_task(collect(client))
            while not stop.is_set():
                await asyncio.sleep(0.1)
            reader.cancel()

    listener = threading.Thread(target=lambda: asyncio.run(listen()), daemon=True)
    listener.start()
    assert listening.wait(10), "the test's MQTT listener did not subscribe"
    proc = subprocess.Popen([*HILRIG, "session", "start", str(plan)], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True).start()
    try:
        try:
            wait_until(lambda: any("suspended: disk: full" in line for line in lines), 120,
                       "the session to suspend on the full disk")
        except AssertionError as exc:
            raise AssertionError(f"{exc}: {''.join(lines)[-6000:]}") from None
        time.sleep(3.0)  # suspended: nothing more is released, and nothing ends it
        asked = sum("release from" in line for line in lines)
        time.sleep(3.0)
        assert sum("release from" in line for line in lines) == asked
        assert proc.poll() is None, "".join(lines)[-12000:]
        # a dashboard is told while the disk is full, not once the lab has found out
        suspended = [e for e in events if e.get("code") == "session.suspended.disk"]
        assert suspended and "disk: full" in suspended[0]["message"], events
        filler.unlink()  # the lab frees space
        assert proc.wait(timeout=240) == 0, "".join(lines)[-3000:]
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
        listener.join(timeout=10)
    text = "".join(lines)
    assert "Traceback" not in text and "never retrieved" not in text, text[-3000:]
    assert "disk cleared; resuming" in text and "room again" in text
    assert [e["code"] for e in events] == ["session.suspended.disk"], events
    with Catalog.open(small_disk, create=False) as cat:
        sid = cat.latest_session().session_id
        assert cat.session(sid).status == "done"
        caps = cat.captures(sid)
        assert sorted(c.seq for c in caps) == list(range(1, 9))
        assert {c.status for c in caps} == {"done"}
        results = cat.results(session_id=sid)
        assert sorted(r.capture_id for r in results) == sorted(c.capture_id for c in caps)
        assert all(r.path is not None and r.queued_utc is not None for r in results)
        assert cat.integrity_ok()
    assert list(small_disk.rglob("*.partial-*")) == []


@pytest.mark.fault(injected="service: kill -9 at 5 moments around capture writes",
                   expected="every file under a final name opens, the catalog stays "
                            "consistent, resume completes each capture exactly once")
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_kill_9_around_capture_writes_never_leaves_a_corrupt_file(tmp_path):
    root = tmp_path / "archive"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(root),
               HILRIG_MQTT__RIG_ID=f"kill-{uuid.uuid4().hex[:6]}",
               HILRIG_MQTT__URL="mqtt://127.0.0.1:1883", HILRIG_MQTT__TELEMETRY_HZ="0")
    first = [*HILRIG, "session", "start", "--captures", "6", "--sim", "--unpaced",
             "--pose", *map(str, POSE)]
    kills = 0
    for delay in (0.4, 0.9, 1.3, 1.7, 2.4):  # after a release: recording, writing, identifying
        log = tmp_path / f"run-{kills}.log"
        proc = subprocess.Popen(first if kills == 0 else [*HILRIG, "session", "resume"],
                                env=env, stdout=open(log, "w"), stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while "release detected" not in log.read_text():
            assert proc.poll() is None or kills > 0, log.read_text()[-2000:]
            if proc.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=30)
        for path in root.rglob("*.h5"):  # a final name always holds a whole capture
            read_capture(path)
    assert kills >= 3
    done = subprocess.run([*HILRIG, "session", "resume"], env=env, capture_output=True,
                          text=True, timeout=600)
    # An unpaced run can finish more than one capture between a release and its kill, so
    # the session may already be complete: resume then says so and changes nothing.
    assert done.returncode == 0 or "is complete; nothing to resume" in done.stderr, \
        done.stdout[-3000:] + done.stderr[-2000:]
    with Catalog.open(root, create=False) as cat:
        sid = cat.latest_session().session_id
        caps = cat.captures(sid)
        assert sorted(c.seq for c in caps if c.status == "done") == [1, 2, 3, 4, 5, 6]
        assert {c.status for c in caps} <= {"done", "interrupted"}
        for c in caps:
            if c.status == "done":
                assert read_capture(c.path).capture_id == c.capture_id
        assert sorted(cat.capture(r.capture_id).seq for r in cat.results(session_id=sid)) \
            == [1, 2, 3, 4, 5, 6]
        assert cat.integrity_ok()


# -- parsers: any input is either accepted or one clear line, never a crash ---------------

def _json_containers(inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)


# a named function, not a lambda: a draw past max_leaves makes hypothesis describe the
# strategy, and describing a lambda parses its source with ast.parse, which Python 3.11.7
# can fail deep in a stack ("AST constructor recursion depth mismatch"): a flaky failure
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats()
                           | st.text(max_size=20), _json_containers, max_leaves=8)


@pytest.mark.fault(injected="bad input: arbitrary MQTT command topics and payloads",
                   expected="an ok or error reply, never an exception, nothing run when "
                            "malformed")
@settings(max_examples=3 * settings.default.max_examples, deadline=None)
@given(verb=st.sampled_from([*COMMANDS, "fly", "", "session/x", "identify/../x"]),
       payload=st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
@example(verb="arm", payload=b'{"\\n": null}')  # a field name holding a newline (found by CI)
@example(verb="identify", payload=b'{"method": "uas", "x\\u2028\\ry": 1}')
def test_any_command_gets_a_reply_and_malformed_ones_run_nothing(verb, payload):
    router = CommandRouter("rig1")
    ran: list[str] = []

    async def handler(request):
        ran.append(verb)
        return {}

    for v in COMMANDS:
        router.register(v, handler)
    parsed_verb, data, error = router.parse(f"hilrig/rig1/cmd/{verb}", payload)
    reply = asyncio.run(router.handle(parsed_verb, data, error))
    assert set(reply) >= {"verb", "ok", "correlation_id"}
    if not reply["ok"]:
        assert ran == [] and len(reply["error"].splitlines()) == 1


@pytest.mark.fault(injected="bad input: arbitrary session plans",
                   expected="a valid plan or a one-line PlanError naming the key")
@settings(max_examples=3 * settings.default.max_examples, deadline=None)
@given(plan=st.dictionaries(st.sampled_from([*SessionPlan.model_fields, "nonsense", "two\nlines"]),
                            json_values, max_size=5))
def test_any_plan_is_valid_or_one_line_naming_the_problem(plan):
    try:
        parse_plan(plan, "plan.toml")
    except PlanError as exc:
        assert str(exc).startswith("plan.toml: ") and len(str(exc).splitlines()) == 1


@pytest.mark.fault(injected="bad input: arbitrary config files (TOML text, wrong types, "
                            "unknown keys, out-of-range values)",
                   expected="settings or a one-line ConfigError naming the file")
@settings(max_examples=2 * settings.default.max_examples, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200) | st.sampled_from([
    "sample_rate_hz = -5", "[mqtt]\nkeepalive_s = 'x'", "unknown = 1", "[ring]\nseconds = 1",
    "[trigger]\nhold_s = inf", "[mqtt]\nurl = 5", "[storage]\ndirectory = []"]))
@example(text='"two\\nlines" = 1')  # TOML keys may hold any character
@example(text='[mqtt]\n"a\\u2028b" = 1')
def test_any_config_file_loads_or_is_one_line_naming_the_file(tmp_path, text):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    try:
        load_settings(path)
    except ConfigError as exc:
        assert str(exc).startswith(f"{path}: ") and len(str(exc).splitlines()) == 1


@pytest.mark.fault(injected="storage: a read-only archive (every capture write fails, EROFS)",
                   expected="each capture failed with the reason, the session stopped after "
                            "max_consecutive_failures, nothing under a final name")
@pytest.mark.timeout(300)
def test_a_read_only_archive_stops_the_session_instead_of_failing_all_night(tmp_path,
                                                                            monkeypatch):
    def read_only(path: Path) -> None:
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(atomic, "_fsync_path", read_only)
    with Catalog.open(tmp_path) as cat:
        sid = _simulated_session(tmp_path, cat, SessionPlan(
            captures=20, poses_deg=[POSE], paced=False, max_consecutive_failures=2))
        row = cat.session(sid)
        assert row.status == "stopped" and row.reason.startswith("2 captures failed in a row")
        assert "Read-only file system" in row.reason
        caps = cat.captures(sid)
        assert 2 <= len(caps) <= 3 and {c.status for c in caps} == {"failed"}
    assert list(tmp_path.rglob("*.h5")) == [] and list(tmp_path.rglob("*.partial-*")) == []


@pytest.mark.fault(injected="bad input: plans with Infinity, NaN and poses of +-1e308 degrees "
                            "(file, command line, cmd/session/start)",
                   expected="refused in one line naming the key; no session is created")
@pytest.mark.parametrize("text", [
    '{"captures": 1, "min_free_mb": Infinity}',
    '{"captures": 1, "max_link_errors_per_s": NaN}',
    '{"captures": 1, "poses_deg": [[1e308, -1e308]]}',
    '{"captures": 1, "poses_deg": [[0, 400]]}',
    '{"captures": 1, "capture_timeout_s": -Infinity}',
])
async def test_a_plan_with_a_non_finite_or_out_of_range_number_is_refused(tmp_path, text):
    key = json.loads(text).keys() - {"captures"}
    with pytest.raises(PlanError) as refused:
        parse_plan(json.loads(text), "plan")
    assert str(refused.value).split(":")[1].strip().split(".")[0] in key
    assert len(str(refused.value).splitlines()) == 1
    settings = load_settings(None, storage={"directory": str(tmp_path)},
                             mqtt={"url": "mqtt://127.0.0.1:9", "telemetry_hz": 0})
    router = CommandRouter(settings.mqtt.rig_id)
    rig = SimulatedRig(paced=False, auto_release=False)
    with Catalog.open(tmp_path) as cat:
        RigDaemon(settings, rig, Courier(settings.mqtt, Outbox(tmp_path)), router, cat)
        verb, data, error = router.parse(f"hilrig/{settings.mqtt.rig_id}/cmd/session/start",
                                         f'{{"plan": {text}}}'.encode())
        reply = await router.handle(verb, data, error)
        assert not reply["ok"] and "session/start: plan" in reply["error"], reply
        assert cat.sessions() == []


class _BrokenReleaser(SimReleaser):
    """Lets the rig go once, then fails as no step of a session foresees."""

    def release(self, pose_deg, label):
        if self.rig.release_index is not None:
            raise OverflowError("cannot convert float infinity to integer")
        return super().release(pose_deg, label)


@pytest.mark.fault(injected="runtime: an exception no step of a session foresaw "
                            "(the releaser fails at the second release)",
                   expected="the session ends 'failed' with the reason in the catalog, on "
                            "the terminal and in its last progress; what it did is kept")
@pytest.mark.timeout(300)
async def test_a_session_that_crashes_ends_failed_with_its_reason(tmp_path):
    settings = load_settings(None, storage={"directory": str(tmp_path)})
    plan = SessionPlan(captures=3, poses_deg=[POSE], paced=False)
    lines: list[str] = []
    progress: list[dict] = []
    with Catalog.open(tmp_path) as cat:
        sid = new_session_id()
        cat.add_session(sid, plan.model_dump_json())
        rig = SimulatedRig(pose_deg=POSE, paced=False, auto_release=False)
        run = SessionRun(settings, rig, None, plan=plan, catalog=cat, session_id=sid,
                         releaser=_BrokenReleaser(rig, plan.hold_s), say=lines.append,
                         on_progress=progress.append)
        assert await run.run() == "failed"
        row = cat.session(sid)
        assert row.status == "failed" and row.reason.startswith("OverflowError: cannot")
        assert [c.status for c in cat.captures(sid)] == ["done"]  # the first one is kept
        assert progress[-1]["state"] == "failed" and progress[-1]["reason"] == row.reason
    assert any("FAILED: OverflowError" in line for line in lines)


@pytest.mark.fault(injected="storage: a session whose stored plan no longer holds "
                            "(a null where a number belongs)",
                   expected="session resume: exit 2, one line naming the session and the key")
def test_resuming_a_session_whose_stored_plan_is_broken_is_one_line(tmp_path):
    with Catalog.open(tmp_path) as cat:
        plan = json.loads(SessionPlan(captures=2).model_dump_json())
        cat.add_session("S-broken", json.dumps({**plan, "min_free_mb": None}))
        cat.set_session_status("S-broken", "running")
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path))
    done = subprocess.run([*HILRIG, "session", "resume", "S-broken"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [
        "hilrig: error: session S-broken: its stored plan: min_free_mb: Input should be a "
        "valid number"]


def _children(pid: int) -> dict[int, str]:
    """Processes whose parent is `pid`: pid -> command line."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found[int(stat.parent.name)] = cmdline
    return found


def _alive(pid: int) -> bool:
    """Running (not gone, not a zombie waiting to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.fault(injected="service: kill -9 of `session start` while its identification "
                            "process runs",
                   expected="the identification process (and its resource tracker) is gone "
                            "within seconds: nothing left adopted by PID 1")
@pytest.mark.timeout(300)
def test_killing_the_service_takes_its_identification_process_with_it(tmp_path, wait_until):
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path),
               HILRIG_MQTT__RIG_ID=f"orphan-{uuid.uuid4().hex[:6]}",
               HILRIG_MQTT__URL="mqtt://127.0.0.1:1883", HILRIG_MQTT__TELEMETRY_HZ="0")
    proc = subprocess.Popen([*HILRIG, "session", "start", "--captures", "20", "--sim",
                             "--unpaced", "--pose", "0", "30"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        pool = wait_until(lambda: {p: c for p, c in _children(proc.pid).items()
                                   if "multiprocessing" in c}, 120,
                          "the identification process to start")
        # it has started and imported: wait for the first capture it identifies
        with Catalog.open(tmp_path, create=True) as cat:
            wait_until(lambda: cat.captures(status="done"), 200, "a first identified capture")
        helpers = {p for p in pool} | {c for p in pool for c in _children(p)}
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        wait_until(lambda: not any(_alive(p) for p in helpers), 30,
                   f"the service's helpers {sorted(helpers)} to end")
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.fault(injected="service: the states a kill -9 leaves: a result kept with its "
                            "JSON written but no path and never published; a capture whose "
                            "file reached its final name while marked recording; one "
                            "recording with no file",
                   expected="resume: the JSON referenced, every result of the catalog in the "
                            "outbox, every capture's documents ending with a stop "
                            "(interrupted where so)")
@pytest.mark.timeout(300)
def test_resume_publishes_what_a_kill_kept_from_mqtt_and_ends_every_document_stream(tmp_path):
    settings = load_settings(None, storage={"directory": str(tmp_path)},
                             mqtt={"url": "mqtt://127.0.0.1:9", "telemetry_hz": 0})
    with Catalog.open(tmp_path) as cat:
        # an earlier run: capture 1 done and its result kept, but the run was killed
        # right after writing the result's JSON: no path, nothing in the outbox
        sid = _simulated_session(tmp_path, cat, SessionPlan(captures=1, poses_deg=[POSE],
                                                            paced=False))
        (first,) = cat.captures(sid)
        (result,) = cat.results(session_id=sid)
        orphan = Path(result.path)
        raw = sqlite3.connect(tmp_path / "catalog.sqlite")
        plan = SessionPlan(captures=3, poses_deg=[POSE], paced=False)
        with raw:
            raw.execute("UPDATE results SET path = NULL, queued_utc = NULL")
            raw.execute("UPDATE sessions SET status = 'running', plan_json = ?",
                        (plan.model_dump_json(),))
        # capture 2's file had reached its final name; capture 3 had none
        kept = first.path.replace(first.capture_id, "C2-kept")
        Path(kept).parent.mkdir(parents=True)
        write_capture_h5(kept, replace(read_capture(first.path), capture_id="C2-kept"))
        cat.add_capture("C2-kept", session_id=sid, seq=2, pose=list(POSE), status="recording",
                        path=kept)
        cat.add_capture("C3-cut", session_id=sid, seq=3, pose=list(POSE), status="recording",
                        path=kept.replace("C2-kept", "C3-cut"))
        outbox = Outbox(tmp_path)
        rig = SimulatedRig(pose_deg=POSE, paced=False, auto_release=False)
        resumed = SessionRun(settings, rig, Courier(settings.mqtt, outbox), plan=plan,
                             catalog=cat, session_id=sid, releaser=SimReleaser(rig, 1.0))
        assert asyncio.run(resumed.run()) == "done"
        assert cat.result(result.result_id).path == str(orphan)  # the JSON found its row
        assert all(r.queued_utc for r in cat.results(session_id=sid))
        status = {c.capture_id: c.status for c in cat.captures(sid)}
        assert status["C2-kept"] == "done" and status["C3-cut"] == "interrupted"
        assert sorted(c.seq for c in cat.captures(sid, status="done")) == [1, 2, 3]
        messages = [json.loads(row.payload) for row in outbox.pending(10_000)]
        results = {m["capture_id"] for m in messages if m["schema"] == "hilrig.result/1"}
        assert results == {c.capture_id for c in cat.captures(sid, status="done")}
        documents: dict[str, list[dict]] = {}
        for m in messages:
            if m["schema"] == "hilrig.capture/1":
                documents.setdefault(m["capture_id"], []).append(m)
        assert documents["C3-cut"][-1]["exit_status"] == "interrupted"
        assert documents["C2-kept"][-1]["exit_status"] == "success"
        for capture_id in status:
            if capture_id != first.capture_id:  # its documents went with the killed run
                assert documents[capture_id][-1]["document"] == "stop", capture_id
        outbox.close()
