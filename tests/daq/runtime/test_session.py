"""Unattended sessions: capture after capture, archived, cataloged, published, resumable."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import aiomqtt
import numpy as np
import pytest

from hilrig.daq.config import load_settings
from hilrig.daq.mqtt import Courier
from hilrig.daq.runtime import (
    PlanError,
    SessionPlan,
    SessionRun,
    SimReleaser,
    load_plan,
    new_session_id,
)
from hilrig.daq.storage import Catalog, Outbox, read_capture
from hilrig.drivers.sim import SimulatedRig
from hilrig.identify import DEFAULT_METHOD, PARAM_NAMES

BROKER = "mqtt://127.0.0.1:1883"
POSE = (0.0, 30.0)  # a 20 s decay: short captures keep the 20-capture session quick
HILRIG = [sys.executable, "-m", "hilrig"]


def _runner(settings, catalog, plan, publisher=None, events=None, progress=None):
    session_id = new_session_id()
    catalog.add_session(session_id, plan.model_dump_json())
    rig = SimulatedRig(rig=settings.rig, friction=settings.sim.friction, pose_deg=plan.pose(1),
                       paced=plan.paced, auto_release=False, realism=settings.sim.realism)
    return SessionRun(settings, rig, publisher, plan=plan, catalog=catalog,
                         session_id=session_id, releaser=SimReleaser(rig, plan.hold_s),
                         say=(events.append if events is not None else None),
                         on_progress=(progress.append if progress is not None else None))


async def _session_with_subscriber(settings, catalog, plan, rig_id):
    """Run the session while a separate MQTT client collects every result published, the
    session's progress and its answer (session/<id>/result)."""
    got: dict[str, dict] = {}
    sessions: list[dict] = []
    answers: list[dict] = []
    ready = asyncio.Event()

    async def listen() -> None:
        async with aiomqtt.Client("127.0.0.1", 1883, identifier=f"sub-{rig_id}") as sub:
            await sub.subscribe(f"hilrig/{rig_id}/#", qos=1)
            ready.set()
            async for msg in sub.messages:
                body = json.loads(msg.payload)
                parts = msg.topic.value.split("/")
                if parts[2] == "result" and parts[3] != "latest" and len(parts) == 5:
                    got[msg.topic.value] = body  # not result/<id>/<method>/overlay
                elif parts[2] == "session" and len(parts) == 4:
                    sessions.append(body)  # not session/<id>/capture/<capture id>
                elif parts[2] == "session" and parts[4:] == ["result"]:
                    answers.append(body)

    listener = asyncio.create_task(listen())
    await asyncio.wait_for(ready.wait(), 10)
    events: list[str] = []
    outbox = Outbox(Path(settings.storage.directory))
    async with Courier(settings.mqtt, outbox, url=BROKER) as pub:
        runner = _runner(settings, catalog, plan, pub, events)
        await runner.run()
    assert len(outbox) == 0  # every result acknowledged by the broker
    await asyncio.sleep(1.0)  # QoS 1 deliveries still in flight to the subscriber
    listener.cancel()
    return runner, events, got, sessions, answers


@pytest.fixture(scope="module")
def twenty(tmp_path_factory):
    """A simulated session of 20 captures, unpaced, publishing to the real broker."""
    root = tmp_path_factory.mktemp("archive")
    rig_id = f"sess-{uuid.uuid4().hex[:8]}"
    # the lab warms 10 degC an hour of the device's clock: 20 short captures span degrees
    settings = load_settings(None, storage={"directory": str(root)},
                             mqtt={"rig_id": rig_id, "url": BROKER},
                             sim={"realism": {"temperature_c": 21.0, "warming_c_per_hour": 10.0}})
    plan = SessionPlan(captures=20, poses_deg=[POSE], paced=False, name="twenty",
                       pooled_covariate="temperature_c")
    catalog = Catalog.open(root)
    runner, events, got, sessions, answers = asyncio.run(
        _session_with_subscriber(settings, catalog, plan, rig_id))
    return root, catalog, runner, events, got, sessions, answers


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_twenty_captures_are_archived_identified_cataloged_and_published(twenty):
    root, catalog, runner, events, got, sessions, _ = twenty
    sid = runner.session_id
    caps = catalog.captures(sid)
    assert [c.seq for c in caps] == list(range(1, 21))
    assert {c.status for c in caps} == {"done"}
    assert catalog.session(sid).status == "done"
    results = catalog.results(session_id=sid)
    assert sorted(r.capture_id for r in results) == sorted(c.capture_id for c in caps)
    for c in caps:  # laid out by date / session / capture id, and every file opens
        path = Path(c.path)
        assert path.parent.parent == root / catalog.session(sid).created_utc[:10] / sid
        assert path.parent.name == c.capture_id
        assert read_capture(path).capture_id == c.capture_id
    for r in results:  # the result JSON sits beside its capture
        assert json.loads(Path(r.path).read_text())["capture_id"] == r.capture_id
    assert sorted(got) == sorted(f"hilrig/{runner.settings.mqtt.rig_id}/result/"
                                 f"{c.capture_id}/{DEFAULT_METHOD}" for c in caps)
    assert sessions[-1]["state"] == "done" and sessions[-1]["done"] == 20
    assert any(e.endswith("capture 20/20: release from (0.0, 30.0) deg requested")
               for e in events)


@pytest.mark.slow
def test_at_its_end_the_session_puts_its_captures_together_keeps_and_publishes_it(twenty):
    _, catalog, runner, events, _, _, answers = twenty
    sid = runner.session_id
    (kept,) = catalog.session_results(sid)
    assert kept.captures == 20 and kept.verdict == "no drift"  # one rig, one friction
    # in the temperature each capture recorded as its rig was let go (plan.pooled_covariate)
    x = [c.x for c in kept.result().captures]
    assert kept.result().covariate == "temperature_c"
    assert x[0] == pytest.approx(21.0, abs=0.2) and all(np.diff(x) > 0) and x[-1] > x[0] + 0.5
    (answer,) = answers  # retained on session/<id>/result, validated by its schema
    assert answer["schema"] == "hilrig.session-result/1" and answer["session_id"] == sid
    assert answer["verdict"] == "no drift" and answer["rig_id"] == runner.settings.mqtt.rig_id
    assert any(e == f"session {sid}: no drift over 20 captures" for e in events)


@pytest.mark.slow
def test_memory_does_not_grow_from_capture_5_to_capture_20(twenty):
    _, catalog, runner, *_ = twenty
    rss = {c.seq: c.summary["rss_mb"] for c in catalog.captures(runner.session_id)}
    later = max(rss[s] for s in range(5, 21))
    print(f"rss at capture 5: {rss[5]:.1f} MB, 20: {rss[20]:.1f} MB, max 5-20: {later:.1f} MB")
    assert later - rss[5] < 15.0  # MB: the ring, trigger and buffers are preallocated


@pytest.mark.slow
def test_each_capture_starts_at_the_release_with_its_pre_trigger_window(twenty):
    _, catalog, runner, *_ = twenty
    settings = runner.settings
    rate = 10_000.0
    W = round(settings.trigger.still_window_s * rate)
    for c in catalog.captures(runner.session_id):
        s = c.summary
        assert abs(s["release_error_ms"]) <= 5.0  # trigger's release within 5 ms
        assert s["pre_trigger_s"] == pytest.approx(0.5)  # the window before it is kept
        assert s["lost_samples"] == 0 and s["effective_rate_hz"] == pytest.approx(rate)
        capture = read_capture(c.path)
        counts = capture.counts.astype(np.int64)
        at_rest = counts[: int(s["onset_index"] - s["start_index"])]
        assert (at_rest == at_rest[0]).all()
        # ends within the hold time (plus the still window) of the last motion
        moved = (np.abs(counts[W:] - counts[:-W]) > settings.trigger.still_band_counts).any(1)
        ceased = int(np.flatnonzero(moved)[-1]) + W
        assert (len(counts) - ceased) / rate <= settings.trigger.hold_s + \
            settings.trigger.still_window_s + 1e-3


def _env(root: Path, rig_id: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(HILRIG_STORAGE__DIRECTORY=str(root), HILRIG_MQTT__RIG_ID=rig_id,
               HILRIG_MQTT__URL=BROKER)
    return env


def _hilrig(args: list[str], env: dict[str, str], timeout: float = 300
            ) -> subprocess.CompletedProcess:
    return subprocess.run([*HILRIG, *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.fault(injected="service: kill -9 while capture 3 is recording",
                   expected="resume: the capture marked interrupted, every planned capture "
                            "done once, every file opens")
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_kill_9_mid_capture_then_resume_completes_every_capture_exactly_once(tmp_path, wait_until):
    root, env = tmp_path / "archive", _env(tmp_path / "archive", f"kill-{uuid.uuid4().hex[:6]}")
    proc = subprocess.Popen([*HILRIG, "session", "start", "--captures", "4", "--sim",
                             "--unpaced", "--pose", *map(str, POSE)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        def recording_third():
            if not (root / "catalog.sqlite").exists():
                return None
            with Catalog.open(root, create=False) as cat:
                return [c for c in cat.captures() if c.seq == 3 and c.status == "recording"]

        victim = wait_until(recording_third, 240, "capture 3 to be recording")[0]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    with Catalog.open(root, create=False) as cat:
        sid = cat.latest_session().session_id
        before = {c.capture_id: c.status for c in cat.captures(sid)}
        results_before = {r.result_id for r in cat.results(session_id=sid)}
    assert before[victim.capture_id] == "recording"
    status = _hilrig(["session", "status", "--json"], env)
    assert json.loads(status.stdout)["status"] == "running (no process: resume it)"

    resumed = _hilrig(["session", "resume"], env)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert f"capture {victim.capture_id}: interrupted" in resumed.stdout
    with Catalog.open(root, create=False) as cat:
        caps = cat.captures(sid)
        done = sorted(c.seq for c in caps if c.status == "done")
        assert done == [1, 2, 3, 4]  # every planned capture done exactly once
        assert [c.capture_id for c in caps if c.status == "interrupted"] == [victim.capture_id]
        assert {c.status for c in caps} == {"done", "interrupted"}
        for c in caps:
            if c.status == "done":
                assert read_capture(c.path).capture_id == c.capture_id
        results = cat.results(session_id=sid)
        assert results_before <= {r.result_id for r in results}  # nothing lost
        assert sorted(cat.capture(r.capture_id).seq for r in results) == [1, 2, 3, 4]
        assert cat.session(sid).status == "done"
        assert cat.integrity_ok()
    # no partial file under a final name, whatever the kill interrupted
    for path in root.rglob("*.h5"):
        read_capture(path)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_results_list_csv_has_every_result_with_parameters_fit_and_compute_time(tmp_path):
    root, env = tmp_path / "archive", _env(tmp_path / "archive", f"csv-{uuid.uuid4().hex[:6]}")
    run = _hilrig(["session", "start", "--captures", "2", "--sim", "--unpaced", "--pose",
                   *map(str, POSE), "--method", "grey-box", "--method", "regression"], env)
    assert run.returncode == 0, run.stdout + run.stderr
    with Catalog.open(root, create=False) as cat:
        sid = cat.latest_session().session_id
        first = cat.captures(sid)[0].capture_id
    again = _hilrig(["reidentify", first, "--method", "grey-box"], env)
    assert again.returncode == 0, again.stderr
    listed = _hilrig(["results", "list", "--session", sid, "--format", "csv"], env)
    rows = list(csv.DictReader(io.StringIO(listed.stdout)))
    assert len(rows) == 5  # 2 captures x 2 methods, plus the re-identification
    assert sorted(r["method"] for r in rows if r["capture_id"] == first) == [
        "grey-box", "grey-box", "regression"]
    for r in rows:
        assert float(r["compute_seconds"]) > 0 and float(r["fit_pendulum"]) > 90
        assert float(r["mu_d1"]) == pytest.approx(6e-4, rel=0.05)
        assert set(PARAM_NAMES) <= set(r)
    grey = [r for r in rows if r["method"] == "grey-box"]
    assert all(float(r["mu_d1_ci95_lo"]) <= float(r["mu_d1"]) <= float(r["mu_d1_ci95_hi"])
               for r in grey)
    as_json = json.loads(_hilrig(["results", "list", "--session", sid, "--format", "json"],
                                 env).stdout)
    assert [r["result_id"] for r in as_json] == [int(r["result_id"]) for r in rows]
    shown = json.loads(_hilrig(["captures", "show", first], env).stdout)
    assert len(shown["results"]) == 3 and shown["status"] == "done"


@pytest.mark.timeout(300)
def test_a_session_whose_plan_names_no_method_runs_the_configs(tmp_path):
    # it ran the default method whatever [identify] method said
    root = tmp_path / "archive"
    env = dict(_env(root, f"cfg-{uuid.uuid4().hex[:6]}"), HILRIG_IDENTIFY__METHOD="regression")
    run = _hilrig(["session", "start", "--captures", "1", "--sim", "--unpaced", "--pose",
                   *map(str, POSE)], env)
    assert run.returncode == 0, run.stdout + run.stderr
    with Catalog.open(root, create=False) as cat:
        assert [r.method for r in cat.results()] == ["regression"]


@pytest.mark.timeout(300)
def test_session_stop_from_another_terminal_ends_it_cleanly(tmp_path, wait_until):
    root, env = tmp_path / "archive", _env(tmp_path / "archive", f"stop-{uuid.uuid4().hex[:6]}")
    proc = subprocess.Popen([*HILRIG, "session", "start", "--captures", "50", "--sim",
                             "--unpaced", "--pose", *map(str, POSE)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        def one_done():
            if not (root / "catalog.sqlite").exists():
                return False
            with Catalog.open(root, create=False) as cat:
                return bool(cat.captures(status="done"))

        wait_until(one_done, 240, "a first capture")
        stop = _hilrig(["session", "stop"], env)
        assert stop.returncode == 0 and "stop requested" in stop.stdout
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    with Catalog.open(root, create=False) as cat:
        row = cat.latest_session()
        assert (row.status, row.reason) == ("stopped", "stop requested")
        caps = cat.captures(row.session_id)
        assert 1 <= len(caps) < 50
        assert {c.status for c in caps} == {"done"}  # what was under way was finished


@pytest.mark.fault(injected="storage: less free space than the plan needs",
                   expected="suspended, then stopped with the reason; nothing written")
def test_a_full_disk_suspends_then_stops_the_session_with_a_clear_reason(tmp_path):
    root = tmp_path / "archive"
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text("[session]\ncaptures = 3\npaced = false\nmin_free_mb = 1e12\n"
                         "suspend_limit_s = 1.0\n")
    run = _hilrig(["session", "start", str(plan_file)], _env(root, "disk"))
    assert run.returncode == 1
    assert "suspended: disk:" in run.stdout and "min_free_mb" in run.stdout
    with Catalog.open(root, create=False) as cat:
        row = cat.latest_session()
        assert row.status == "stopped" and row.reason.startswith("disk:")
        assert cat.captures(row.session_id) == []


@pytest.mark.timeout(300)
def test_an_operator_who_never_releases_times_out_and_the_plan_decides(tmp_path):
    settings = load_settings(None, storage={"directory": str(tmp_path)})
    plan = SessionPlan(captures=2, paced=False, release="operator", capture_timeout_s=2.0,
                       max_consecutive_timeouts=2)
    events: list[str] = []
    progress: list[dict] = []
    with Catalog.open(tmp_path) as cat:
        session_id = new_session_id()
        cat.add_session(session_id, plan.model_dump_json())
        rig = SimulatedRig(paced=False, auto_release=False)  # nobody lets go
        from hilrig.daq.runtime import OperatorReleaser
        runner = SessionRun(settings, rig, None, plan=plan, catalog=cat,
                               session_id=session_id, releaser=OperatorReleaser(),
                               say=events.append, on_progress=progress.append)
        asyncio.run(runner.run())
        caps = cat.captures(session_id)
        assert [c.status for c in caps] == ["timeout", "timeout"]
        assert all(c.seq == 1 for c in caps)  # the same capture asked for again
        row = cat.session(session_id)
        assert row.status == "stopped" and "2 timeouts in a row" in row.reason
    assert any(e.startswith("ready for release: session") for e in events)
    assert any(p["state"] == "waiting_for_release" and p["prompt"] for p in progress)


@pytest.mark.fault(injected="bad input: a plan with a wrong value",
                   expected="exit 2, one line naming the key, nothing created")
def test_a_bad_plan_is_one_line_naming_the_key_and_nothing_is_created(tmp_path):
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text("[session]\ncaptures = -1\n")
    with pytest.raises(PlanError, match=r"plan.toml: captures: Input should be greater"):
        load_plan(plan_file)
    env = _env(tmp_path / "archive", "badplan")
    run = _hilrig(["session", "start", str(plan_file)], env)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1
    assert "captures" in run.stderr
    assert not (tmp_path / "archive" / "catalog.sqlite").exists()
    run = _hilrig(["session", "start", "--captures", "2", "--method", "nope"], env)
    assert run.returncode == 2
    nothing = _hilrig(["captures", "list"], env)
    assert nothing.returncode == 2 and "no catalog here" in nothing.stderr


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_a_latch_on_the_bridge_releases_each_capture_at_a_known_sample(tmp_path):
    # the real serial driver on a pty against the firmware emulator with a release output
    from hilrig.daq.runtime import LatchReleaser
    from hilrig.drivers.emulator import EmulatorConfig, FirmwareEmulator
    from hilrig.drivers.serial import SerialBridge

    settings = load_settings(None, storage={"directory": str(tmp_path)})
    cfg = EmulatorConfig(seed=21, latch=True, pose_deg=POSE, paced=False)
    async with FirmwareEmulator(cfg) as emu:
        plan = SessionPlan(captures=2, poses_deg=[POSE], source="serial", port=emu.port,
                           release="latch", hold_s=0.5)
        with Catalog.open(tmp_path) as cat:
            session_id = new_session_id()
            cat.add_session(session_id, plan.model_dump_json())
            async with SerialBridge(emu.port) as bridge:
                runner = SessionRun(settings, bridge, None, plan=plan, catalog=cat,
                                       session_id=session_id,
                                       releaser=LatchReleaser(bridge, plan.hold_s))
                await runner.run()
            caps = cat.captures(session_id)
            assert [(c.seq, c.status) for c in caps] == [(1, "done"), (2, "done")]
            for c in caps:
                s = c.summary
                # the device told the release sample; the trigger's own estimate agrees
                assert s["release_index"] >= s["start_index"]
                assert abs(s["release_error_ms"]) <= 5.0
                # unpaced, a loaded host may drop a frame: never silently (gaps in the file)
                gaps = read_capture(c.path).gaps()
                assert s["lost_samples"] == sum(n for _, n in gaps)
    assert len(emu.record.releases) == 2


def test_the_example_plan_is_valid_and_documents_every_key():
    from hilrig.daq.runtime import SessionPlan as Plan

    path = Path(__file__).resolve().parents[3] / "deploy" / "session.example.toml"
    plan = load_plan(path)
    assert plan.captures == 20 and plan.pose(4) == plan.pose(1)
    text = path.read_text()
    missing = [k for k in Plan.model_fields if f"{k} =" not in text]
    assert missing == []


def test_a_plan_is_its_fields_or_a_session_table_of_them_and_the_command_line_wins(tmp_path):
    from hilrig.daq.runtime import parse_plan

    fields = {"captures": 3, "poses_deg": [[0.0, 30.0]], "paced": False}
    assert parse_plan({"session": fields}, "cmd") == parse_plan(fields, "cmd")
    path = tmp_path / "plan.toml"
    path.write_text("[session]\ncaptures = 3\npaced = false\n")
    assert load_plan(path, {"captures": 5}).captures == 5
    with pytest.raises(PlanError, match="cmd: session must be a table"):
        parse_plan({"session": 3}, "cmd")
