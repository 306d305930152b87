"""Scale-out: `hilrig worker` processes share offloaded captures through Mosquitto."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import uuid

import pytest

from hilrig.daq.storage import Catalog
from hilrig.identify import DEFAULT_METHOD

HILRIG = [sys.executable, "-m", "hilrig"]


def _jobs_in(log) -> tuple[list[str], list[str]]:
    """The captures a worker's log says it started identifying, and those it finished."""
    text = log.read_text()
    return (re.findall(r"^job (\S+) \(attempt \d+\): identifying", text, re.M),
            re.findall(rf"^job (\S+): {DEFAULT_METHOD} done", text, re.M))


@contextlib.contextmanager
def _two_workers_and_a_session(tmp_path, wait_until, rig: str, captures: int, in_flight: int,
                               job_timeout_s: float):
    """Workers a and b, then an unpaced offloaded session of `captures` on their rig;
    yields (worker processes, their log files, the session process). Every process is
    killed on the way out (a stopped one woken first)."""
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "archive"),
               HILRIG_MQTT__RIG_ID=f"{rig}-{uuid.uuid4().hex[:8]}",
               HILRIG_MQTT__URL="mqtt://127.0.0.1:1883", HILRIG_IDENTIFY__OFFLOAD="true",
               HILRIG_IDENTIFY__JOB_TIMEOUT_S=f"{job_timeout_s:g}",
               HILRIG_MQTT__TELEMETRY_HZ="0")
    logs = {k: tmp_path / f"worker-{k}.log" for k in "ab"}
    workers = {k: subprocess.Popen([*HILRIG, "worker"], env=env, stdout=open(logs[k], "w"),
                                   stderr=subprocess.STDOUT) for k in "ab"}
    plan = tmp_path / "plan.toml"
    plan.write_text(f"[session]\ncaptures = {captures}\npaced = false\n"
                    f"poses_deg = [[0.0, 30.0]]\nmax_in_flight = {in_flight}\n")
    session = None
    try:
        for k in "ab":
            wait_until(lambda k=k: "waiting for jobs" in logs[k].read_text(), 60, f"worker {k}")
        session = subprocess.Popen([*HILRIG, "session", "start", str(plan)], env=env,
                                   stdout=open(tmp_path / "session.log", "w"),
                                   stderr=subprocess.STDOUT)
        yield workers, logs, session
    finally:
        for proc in [*workers.values(), session]:
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()


@pytest.mark.fault(injected="workers: one of two workers killed mid-job",
                   expected="its job goes to the other worker when its last will comes, not "
                            "after the job timeout; all 20 results, once each")
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_two_workers_share_twenty_captures_and_a_killed_one_loses_nothing(tmp_path, wait_until):
    root = tmp_path / "archive"
    with _two_workers_and_a_session(tmp_path, wait_until, "workers", captures=20, in_flight=4,
                                    job_timeout_s=300) as (workers, logs, session):
        def a_mid_job():
            started, finished = _jobs_in(logs["a"])
            if finished and len(started) > len(finished):
                return started[-1]
            return None

        victim = wait_until(a_mid_job, 300, "worker a to be in the middle of its second job")
        workers["a"].send_signal(signal.SIGKILL)
        workers["a"].wait(timeout=30)
        # the broker publishes the killed worker's last will at once: its job moves on then,
        # and the session ends long before the 300 s job timeout could have moved it
        assert session.wait(timeout=120) == 0, (tmp_path / "session.log").read_text()[-3000:]
    with Catalog.open(root, create=False) as cat:
        sid = cat.latest_session().session_id
        caps = cat.captures(sid)
        assert sorted(c.seq for c in caps) == list(range(1, 21))
        assert {c.status for c in caps} == {"done"}
        results = cat.results(session_id=sid)
        # exactly one result per capture and method, each from a worker's job
        assert sorted(r.capture_id for r in results) == sorted(c.capture_id for c in caps)
        assert all(r.result_key == f"job/{r.capture_id}/{DEFAULT_METHOD}" for r in results)
    done = {k: len(re.findall(rf": {DEFAULT_METHOD} done", logs[k].read_text())) for k in "ab"}
    assert done["a"] >= 1 and done["b"] >= 1, done  # each did some
    # the job the killed worker held went to the other, and the rig said why
    assert re.search(rf"^job {victim} \(attempt [2-9]\): identifying", logs["b"].read_text(),
                     re.M), logs["b"].read_text()[-2000:]
    assert f"capture {victim}: worker " in (tmp_path / "session.log").read_text()
    assert "left without answering" in (tmp_path / "session.log").read_text()


@pytest.mark.fault(injected="workers: one of two workers hangs mid-job (SIGSTOP: its "
                            "connection stays open, so no last will)",
                   expected="its job goes to the other worker after identify.job_timeout_s; "
                            "all 6 results, once each")
@pytest.mark.timeout(300)
def test_a_job_a_hung_worker_holds_goes_to_the_other_after_the_job_timeout(tmp_path,
                                                                           wait_until):
    root = tmp_path / "archive"
    with _two_workers_and_a_session(tmp_path, wait_until, "hung", captures=6, in_flight=2,
                                    job_timeout_s=8) as (workers, logs, session):
        def unfinished() -> set[str]:
            started, finished = _jobs_in(logs["a"])
            return set(started) - set(finished)

        wait_until(unfinished, 120, "worker a to be in the middle of a job")
        workers["a"].send_signal(signal.SIGSTOP)
        assert session.wait(timeout=180) == 0, (tmp_path / "session.log").read_text()[-3000:]
    with Catalog.open(root, create=False) as cat:
        sid = cat.latest_session().session_id
        results = cat.results(session_id=sid)
        assert sorted(c.seq for c in cat.captures(sid) if c.status == "done") == list(range(1, 7))
        assert sorted(r.capture_id for r in results) == sorted({r.capture_id for r in results})
        assert len(results) == 6
    # what the hung worker held (the job it was in, or one sent to it as it stopped) was
    # sent again, to the other, once its time was up
    again = set(re.findall(r"^job (\S+) \(attempt [2-9]\): identifying",
                           logs["b"].read_text(), re.M))
    assert again and unfinished() <= again, (unfinished(), logs["b"].read_text()[-2000:])


@pytest.mark.fault(injected="workers: offload on, no worker running",
                   expected="an event within 10 s, then identified here after worker_wait_s")
@pytest.mark.timeout(300)
async def test_a_job_no_worker_takes_is_reported_then_identified_here(tmp_path):
    import asyncio
    import json
    import time

    import aiomqtt

    rig_id = f"noworker-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "archive"),
               HILRIG_MQTT__RIG_ID=rig_id, HILRIG_MQTT__URL="mqtt://127.0.0.1:1883",
               HILRIG_IDENTIFY__OFFLOAD="true", HILRIG_IDENTIFY__WORKER_WAIT_S="8",
               HILRIG_IDENTIFY__METHOD="regression")
    events: list[tuple[float, dict]] = []
    await _no_worker_ready()  # the precondition: none announced (a dead one's word included)
    async with aiomqtt.Client("127.0.0.1", 1883) as client:
        await client.subscribe(f"hilrig/{rig_id}/events", qos=1)

        async def listen() -> None:
            async for message in client.messages:
                events.append((time.monotonic(), json.loads(bytes(message.payload))))

        listener = asyncio.create_task(listen())
        proc = await asyncio.create_subprocess_exec(
            *HILRIG, "run", "--sim", "--unpaced", "--captures", "1", env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        out_lines: list[tuple[float, str]] = []
        assert proc.stdout is not None
        async for raw in proc.stdout:
            out_lines.append((time.monotonic(), raw.decode()))
        assert await proc.wait() == 0, "".join(t for _, t in out_lines)[-3000:]
        await asyncio.sleep(0.5)
        listener.cancel()
    text = "".join(t for _, t in out_lines)
    written = next(t for t, line in out_lines if " -> " in line and "capture " in line)
    notice = [(t, e) for t, e in events if e.get("code") == "job.no_worker"]
    assert notice and notice[0][0] - written < 10.0, text[-2000:]
    assert "no worker has taken its job" in text and "identifying it here" in text
    assert "result " in text.split("identifying it here")[1]  # identified here after all


async def _ready_workers() -> dict[str, bytes]:
    """The retained ready announcements on the broker now."""
    import asyncio

    import aiomqtt

    found: dict[str, bytes] = {}
    async with aiomqtt.Client("127.0.0.1", 1883) as client:
        await client.subscribe("hilrig-workers/ready/#", qos=1)
        try:
            async with asyncio.timeout(1.0):
                async for message in client.messages:
                    if message.payload:
                        found[message.topic.value] = bytes(message.payload)
        except TimeoutError:
            pass
    return found


async def _no_worker_ready() -> None:
    import aiomqtt

    stale = await _ready_workers()
    async with aiomqtt.Client("127.0.0.1", 1883) as client:
        for topic in stale:
            await client.publish(topic, b"", qos=1, retain=True)


@pytest.mark.fault(injected="workers: a worker stopped by SIGTERM or Ctrl-C",
                   expected="its ready announcement emptied: no job goes to a worker that is gone")
@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_worker_that_is_stopped_takes_back_its_ready_announcement(tmp_path, sig):
    import asyncio

    env = dict(os.environ, HILRIG_MQTT__URL="mqtt://127.0.0.1:1883")
    log = tmp_path / "worker.log"
    worker = subprocess.Popen([*HILRIG, "worker"], env=env, stdout=open(log, "w"),
                              stderr=subprocess.STDOUT)
    try:
        async with asyncio.timeout(60):
            while "waiting for jobs" not in log.read_text():
                await asyncio.sleep(0.1)
        name = re.search(r"hilrig worker (\S+):", log.read_text()).group(1)
        assert f"hilrig-workers/ready/{name}" in await _ready_workers()
        worker.send_signal(sig)
        assert worker.wait(timeout=30) == (143 if sig == signal.SIGTERM else 130)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert f"hilrig-workers/ready/{name}" not in await _ready_workers(), log.read_text()


METHODS_OF_THE_JOB = [DEFAULT_METHOD, "output-error", "grey-box"]


@pytest.mark.fault(injected="no broker on a laptop: `hilrig serve` starts the embedded one "
                            "(MQTT 3.1.1 only); `hilrig cmd` and `hilrig worker` in other "
                            "processes, which ask for MQTT 5 first",
                   expected="a v5 CONNECT is refused with CONNACK 0x84 and the clients go on "
                            "in 3.1.1: the ping answered, the offloaded capture identified "
                            "by the worker; amqtt warns nothing")
@pytest.mark.timeout(240)
def test_cmd_and_a_worker_use_the_embedded_broker_of_another_process(tmp_path, wait_until):
    # `hilrig cmd ping` said `[code:132] Unsupported protocol version`, a worker timed out,
    # and amqtt warned `Will flag set, but will topic/message not present`
    import json
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there: serve starts the embedded one
    root = tmp_path / "archive"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(root),
               HILRIG_MQTT__RIG_ID=f"laptop-{uuid.uuid4().hex[:8]}",
               HILRIG_MQTT__URL=f"mqtt://127.0.0.1:{port}", HILRIG_IDENTIFY__OFFLOAD="true",
               HILRIG_MQTT__TELEMETRY_HZ="0", HILRIG_MQTT__CONNECT_TIMEOUT_S="3")
    serve_log, worker_log = tmp_path / "serve.log", tmp_path / "worker.log"
    serve = subprocess.Popen([*HILRIG, "serve", "--sim", "--unpaced"], env=env,
                             stdout=open(serve_log, "w"), stderr=subprocess.STDOUT)
    worker = None
    try:
        wait_until(lambda: f"embedded broker at mqtt://127.0.0.1:{port}" in
                   serve_log.read_text(), 60, "the embedded broker")
        ping = subprocess.run([*HILRIG, "cmd", "ping", "--timeout", "20"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert ping.returncode == 0, ping.stdout + ping.stderr
        assert json.loads(ping.stdout)["result"] == {"pong": True}
        worker = subprocess.Popen([*HILRIG, "worker", "--max-jobs", "1"], env=env,
                                  stdout=open(worker_log, "w"), stderr=subprocess.STDOUT)
        wait_until(lambda: "waiting for jobs" in worker_log.read_text(), 60, "the worker")
        # three methods: the job takes the worker longer than the 5 s the embedded broker
        # waits for an acknowledgement (it logged an error and dropped the delivery)
        plan = {"captures": 1, "paced": False, "methods": METHODS_OF_THE_JOB}
        start = subprocess.run([*HILRIG, "cmd", "session/start", json.dumps({"plan": plan}),
                                "--timeout", "20"], env=env, capture_output=True, text=True,
                               timeout=60)
        assert start.returncode == 0, start.stdout + start.stderr
        assert worker.wait(timeout=150) == 0, worker_log.read_text()[-2000:]
        with Catalog.open(root, create=False) as cat:
            wait_until(lambda: len(cat.results()) == 3, 30, "the worker's results")
            results = cat.results()
        assert sorted(r.result_key.rsplit("/", 1)[1] for r in results) == \
            sorted(METHODS_OF_THE_JOB)
        assert all(r.result_key.startswith("job/") for r in results)
    finally:
        for p in (worker, serve):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGINT)
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
    text = serve_log.read_text()
    warned = [ln for ln in text.splitlines() if "Will flag" in ln or "amqtt" in ln]
    assert not warned, "\n".join(warned)
    assert "Traceback" not in text + worker_log.read_text()
