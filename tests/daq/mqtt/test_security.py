"""Security against a real Mosquitto started from deploy/mosquitto/: users, ACL and TLS.

The broker's config, ACL and the way users are made are the deployed ones; only paths
and ports are the test's own.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import uuid

import aiomqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from hilrig.daq.config import MqttConfig
from hilrig.daq.mqtt import CommandRouter, Courier, Publisher
from hilrig.daq.storage import Outbox

#: the broker's users and passwords (tests/daq/conftest.py makes them)
USERS: dict[str, str] = {}


@pytest.fixture(scope="module")
def broker(secured_broker):
    USERS.update(secured_broker.users)
    return secured_broker


def _cfg(broker, user: str | None, rig: str, tls: bool = False, **more) -> MqttConfig:
    port = broker["tls"] if tls else broker["plain"]
    scheme = "mqtts" if tls else "mqtt"
    extra = {"tls_ca_file": broker["dir"] / "ca.crt"} if tls else {}
    if user is not None:
        extra.update(username=user, password=USERS[user])
    return MqttConfig(url=f"{scheme}://127.0.0.1:{port}", rig_id=rig, **extra, **more)


def _client(broker, user: str | None, tls: bool = False, **kw) -> aiomqtt.Client:
    port = broker["tls"] if tls else broker["plain"]
    auth = {} if user is None else {"username": user, "password": USERS[user]}
    if tls:
        auth["tls_context"] = ssl.create_default_context(cafile=str(broker["dir"] / "ca.crt"))
    return aiomqtt.Client("127.0.0.1", port, identifier=f"{user}-{uuid.uuid4().hex[:6]}",
                          **auth, **kw)


async def test_an_unauthenticated_client_or_a_wrong_password_is_refused(broker):
    with pytest.raises(aiomqtt.MqttError):
        async with _client(broker, None):
            pass
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client("127.0.0.1", broker["plain"], username="dashboard",
                                  password="guess"):
            pass


@pytest.mark.timeout(60)
async def test_a_dashboard_reads_but_can_neither_command_nor_publish_a_status(broker, tmp_path):
    rig = f"sec-{uuid.uuid4().hex[:6]}"
    called: list[str] = []
    router = CommandRouter(rig)

    async def arm(request):
        called.append("arm")
        return {"armed": True}

    router.register("arm", arm)
    async with Courier(_cfg(broker, "hilrig", rig), Outbox(tmp_path), commands=router) as svc:
        await svc.publish_status("idle")
        async with _client(broker, "dashboard", protocol=aiomqtt.ProtocolVersion.V5) as dash, \
                _client(broker, "operator", protocol=aiomqtt.ProtocolVersion.V5) as op:
            await dash.subscribe(f"hilrig/{rig}/status", qos=1)
            async with asyncio.timeout(10):  # the dashboard reads the service's status
                while True:
                    m = await anext(aiter(dash.messages))
                    if json.loads(m.payload)["state"] == "idle":
                        break
            for client in (dash, op):
                props = Properties(PacketTypes.PUBLISH)
                props.ResponseTopic = f"replies/{uuid.uuid4().hex[:6]}"
                props.CorrelationData = b"1"
                await client.subscribe(props.ResponseTopic, qos=1)
                await client.publish(f"hilrig/{rig}/cmd/arm", b"{}", qos=1, properties=props)
            await asyncio.sleep(2.0)
            assert called == ["arm"]  # the operator's, not the dashboard's
            await dash.publish(f"hilrig/{rig}/status", json.dumps({"state": "offline"}),
                               qos=1, retain=True)
            await asyncio.sleep(0.5)
        async with _client(broker, "dashboard") as fresh:
            await fresh.subscribe(f"hilrig/{rig}/status", qos=1)
            async with asyncio.timeout(5):
                m = await anext(aiter(fresh.messages))
            assert json.loads(m.payload)["schema"] == "hilrig.status/1"  # still the service's


@pytest.mark.timeout(60)
async def test_over_tls_the_service_publishes_and_an_unknown_ca_is_refused(broker, tmp_path):
    rig = f"tls-{uuid.uuid4().hex[:6]}"
    async with _client(broker, "dashboard", tls=True) as dash:
        await dash.subscribe(f"hilrig/{rig}/capture/+", qos=1)
        async with Publisher(_cfg(broker, "hilrig", rig, tls=True)) as pub:
            assert await pub.publish_capture("c1", {"samples": 10})
        async with asyncio.timeout(10):
            m = await anext(aiter(dash.messages))
        assert json.loads(m.payload)["capture_id"] == "c1"
    with pytest.raises(ConnectionError):  # the system CAs do not know the lab's
        async with Publisher(MqttConfig(url=f"mqtts://127.0.0.1:{broker['tls']}", rig_id=rig,
                                        username="hilrig", password=USERS["hilrig"],
                                        connect_timeout_s=3)):
            pass


@pytest.mark.timeout(60)
def test_the_password_is_never_logged(broker, tmp_path):
    pw_file = tmp_path / "mqtt-password"
    pw_file.write_text(USERS["operator"] + "\n")
    env = dict(os.environ, HILRIG_MQTT__URL=f"mqtt://127.0.0.1:{broker['plain']}",
               HILRIG_MQTT__USERNAME="operator", HILRIG_MQTT__PASSWORD_FILE=str(pw_file),
               HILRIG_MQTT__RIG_ID="nobody")
    run = subprocess.run([sys.executable, "-m", "hilrig", "-v", "monitor", "--timeout", "1"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert USERS["operator"] not in run.stdout + run.stderr
    env["HILRIG_MQTT__PASSWORD"] = USERS["operator"]
    env["HILRIG_MQTT__KEEPALIVE_S"] = "not a number"
    bad = subprocess.run([sys.executable, "-m", "hilrig", "monitor", "--timeout", "1"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "keepalive_s" in bad.stderr
    assert USERS["operator"] not in bad.stdout + bad.stderr


# what each role may read (r) and write (w) (deploy/mosquitto/hilrig.acl); {p}: hilrig/<rig>/;
# worker1 is one worker's user: it may not read worker2's jobs nor answer or announce as it
ROLE_TABLE = {
    "{p}status":             {"hilrig": "rw", "worker1": "", "operator": "r", "dashboard": "r"},
    "{p}telemetry":          {"hilrig": "rw", "worker1": "", "operator": "r", "dashboard": "r"},
    "{p}events":             {"hilrig": "rw", "worker1": "", "operator": "r", "dashboard": "r"},
    "{p}capture/c1":         {"hilrig": "rw", "worker1": "", "operator": "r", "dashboard": "r"},
    "{p}session/s1":         {"hilrig": "rw", "worker1": "", "operator": "r", "dashboard": "r"},
    "{p}result/c1/uas":      {"hilrig": "rw", "worker1": "", "operator": "r", "dashboard": "r"},
    "{p}result/latest":      {"hilrig": "rw", "worker1": "", "operator": "r", "dashboard": "r"},
    "{p}cmd/arm":            {"hilrig": "rw", "worker1": "", "operator": "w", "dashboard": ""},
    "{p}reply/cli-1":        {"hilrig": "rw", "worker1": "", "operator": "r", "dashboard": ""},
    "{p}jobs/identify/worker1/h-1/c1": {"hilrig": "rw", "worker1": "r", "operator": "",
                                        "dashboard": ""},
    "{p}jobs/identify/worker2/h-1/c1": {"hilrig": "rw", "worker1": "", "operator": "",
                                        "dashboard": ""},
    "{p}jobs/result/worker1/h-1/c1/uas": {"hilrig": "rw", "worker1": "w", "operator": "",
                                          "dashboard": ""},
    "{p}jobs/result/worker2/h-1/c1/uas": {"hilrig": "rw", "worker1": "", "operator": "",
                                          "dashboard": ""},
    "hilrig-workers/ready/worker1/{rig}": {"hilrig": "r", "worker1": "w", "operator": "",
                                           "dashboard": ""},
    "hilrig-workers/ready/worker2/{rig}": {"hilrig": "r", "worker1": "", "operator": "",
                                           "dashboard": ""},
}
ROLES = ("worker1", "operator", "dashboard")


@pytest.mark.fault(injected="security: every role reads and writes every topic kind",
                   expected="exactly what the role table allows; nothing else arrives")
@pytest.mark.timeout(120)
async def test_each_role_reads_and_writes_what_the_role_table_says_and_nothing_more(broker):
    rig = f"roles-{uuid.uuid4().hex[:6]}"
    topics = {key: key.format(p=f"hilrig/{rig}/", rig=rig) for key in ROLE_TABLE}
    key_of = {topic: key for key, topic in topics.items()}
    heard: dict[str, set[str]] = {role: set() for role in ROLES}
    async with _client(broker, "hilrig", protocol=aiomqtt.ProtocolVersion.V5) as svc, \
            _client(broker, "worker1", protocol=aiomqtt.ProtocolVersion.V5) as worker, \
            _client(broker, "operator", protocol=aiomqtt.ProtocolVersion.V5) as operator, \
            _client(broker, "dashboard", protocol=aiomqtt.ProtocolVersion.V5) as dashboard:
        clients = {"worker1": worker, "operator": operator, "dashboard": dashboard}

        async def listen(client: aiomqtt.Client, into: set[str]) -> None:
            async for m in client.messages:
                into.add(key_of.get(m.topic.value, m.topic.value))

        for client in clients.values():  # each role tries to read every topic
            for topic in topics.values():
                await client.subscribe(topic, qos=1)
        readers = [asyncio.create_task(listen(c, heard[r])) for r, c in clients.items()]
        for key, topic in topics.items():  # what may be written is written once
            writer = svc if "w" in ROLE_TABLE[key]["hilrig"] else worker
            await writer.publish(topic, b'{"from": "test"}', qos=1)
        await asyncio.sleep(2.0)  # what was allowed has arrived; nothing else will
        for task in readers:
            task.cancel()
        written: set[tuple[str, str]] = set()

        async def witness_all(client: aiomqtt.Client) -> None:
            async for m in client.messages:
                body = json.loads(m.payload)
                if body.get("from") in ROLES:
                    written.add((body["from"], key_of[m.topic.value]))

        await svc.subscribe(f"hilrig/{rig}/#", qos=1)
        await svc.subscribe("hilrig-workers/#", qos=1)
        watchers = [asyncio.create_task(witness_all(svc))]
        for role, client in clients.items():  # each role writes every topic once
            for topic in topics.values():
                await client.publish(topic, json.dumps({"from": role}), qos=1)
        await asyncio.sleep(2.0)
        for task in watchers:
            task.cancel()
    for role in ROLES:
        may_read = {k for k, rule in ROLE_TABLE.items() if "r" in rule[role]}
        may_write = {k for k, rule in ROLE_TABLE.items() if "w" in rule[role]}
        assert heard[role] == may_read, role
        assert {k for r, k in written if r == role} == may_write, role


@pytest.mark.fault(injected="security: a dashboard listens for jobs (also as a shared "
                            "subscription) and announces itself as a ready worker during "
                            "an offloaded session",
                   expected="it gets no job and no job goes to it; the worker answers every "
                            "capture at once (none waits for job_timeout_s)")
@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_a_dashboard_cannot_take_jobs_and_stall_an_offloaded_session(broker, tmp_path):
    rig = f"steal-{uuid.uuid4().hex[:6]}"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "archive"),
               HILRIG_MQTT__RIG_ID=rig, HILRIG_MQTT__URL=f"mqtt://127.0.0.1:{broker['plain']}",
               HILRIG_MQTT__TELEMETRY_HZ="0", HILRIG_IDENTIFY__OFFLOAD="true",
               HILRIG_IDENTIFY__JOB_TIMEOUT_S="300")
    pw = {}
    for user in ("hilrig", "worker1"):
        pw[user] = tmp_path / f"{user}.pw"
        pw[user].write_text(USERS[user] + "\n")
    worker_log = tmp_path / "worker.log"
    worker = subprocess.Popen(
        [sys.executable, "-m", "hilrig", "worker"], stdout=open(worker_log, "w"),
        stderr=subprocess.STDOUT,
        env=dict(env, HILRIG_MQTT__USERNAME="worker1",
                 HILRIG_MQTT__PASSWORD_FILE=str(pw["worker1"])))
    stolen: list[str] = []
    try:
        async with asyncio.timeout(60):
            while "waiting for jobs" not in worker_log.read_text():
                await asyncio.sleep(0.1)
        async with _client(broker, "dashboard", protocol=aiomqtt.ProtocolVersion.V5) as thief:
            await thief.subscribe("$share/hilrig-identify/hilrig/+/jobs/identify/#", qos=1)
            await thief.subscribe("hilrig/+/jobs/#", qos=1)
            await thief.publish("hilrig-workers/ready/thief/x", json.dumps(
                {"schema": "hilrig.worker/1", "worker": "thief/x", "state": "ready"}),
                qos=1, retain=True)

            async def count() -> None:
                async for m in thief.messages:
                    stolen.append(m.topic.value)

            counter = asyncio.create_task(count())
            t0 = time.monotonic()
            session = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hilrig", "session", "start", "--captures", "3",
                "--sim", "--unpaced", "--pose", "0", "30",
                env=dict(env, HILRIG_MQTT__USERNAME="hilrig",
                         HILRIG_MQTT__PASSWORD_FILE=str(pw["hilrig"])),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            out, _ = await asyncio.wait_for(session.communicate(), 200)
            elapsed = time.monotonic() - t0
            counter.cancel()
        text = out.decode()
        assert session.returncode == 0, text[-3000:]
        assert stolen == []
        assert elapsed < 150  # no job waited for its 300 s timeout
        assert text.count("(worker)") == 3 and "worker thief" not in text
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def _forged_result(capture_id: str, method: str, **changes) -> dict:
    """A result as a worker sends it: plausible on its face, `changes` applied."""
    from hilrig.identify import PARAM_NAMES

    params = {n: {"value": 1e-3, "ci95": [0.9e-3, 1.1e-3], "identifiable": True}
              for n in PARAM_NAMES}
    body = {"schema": "hilrig.result/1", "method": method, "capture_id": capture_id,
            "parameters": params, "fit_percent": {"arm": 99.0, "pendulum": 99.0},
            "compute_seconds": 0.5, "normalized_compute_time": 1e-6, "capture_seconds": 30.0,
            "sample_rate_hz": 10000.0, "samples": 300001, "tilt_deg": 10.0,
            "job_id": capture_id, "rig_id": "x"}
    for name, value in changes.pop("values", {}).items():
        finite = value == value and abs(value) != float("inf")
        params[name] = {"value": value, "ci95": [value - 0.01, value + 0.01] if finite
                        else None, "identifiable": True}
    body.update(changes)
    return body


@pytest.mark.fault(injected="security: a rogue worker (its own broker user) answers a job "
                            "given to another worker first, as itself and in the other's "
                            "name, and answers its own jobs with a 5 MB result, mu_d0 = -5, "
                            "NaN and inf, and another capture's result",
                   expected="each answer refused before anything is stored or published "
                            "(one line each), the job goes to the real worker: every capture "
                            "one result, the real worker's")
@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_the_rig_keeps_only_answers_of_the_worker_it_gave_the_job_to(broker, tmp_path):
    rig = f"rogue-{uuid.uuid4().hex[:6]}"
    root = tmp_path / "archive"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(root), HILRIG_MQTT__RIG_ID=rig,
               HILRIG_MQTT__URL=f"mqtt://127.0.0.1:{broker['plain']}",
               HILRIG_MQTT__TELEMETRY_HZ="0", HILRIG_IDENTIFY__OFFLOAD="true",
               HILRIG_IDENTIFY__METHOD="regression", HILRIG_IDENTIFY__JOB_TIMEOUT_S="300")
    pw = {}
    for user in ("hilrig", "worker1"):
        pw[user] = tmp_path / f"{user}.pw"
        pw[user].write_text(USERS[user] + "\n")
    prefix = f"hilrig/{rig}"
    answers: list[str] = []  # what the rogue sent, by kind
    events: list[dict] = []
    worker_log = tmp_path / "worker.log"
    worker = None
    async with _client(broker, "worker2", protocol=aiomqtt.ProtocolVersion.V5) as rogue, \
            _client(broker, "hilrig", protocol=aiomqtt.ProtocolVersion.V5) as watch:
        # the rogue is ready first: the first job goes to it
        await rogue.subscribe("hilrig/+/jobs/identify/worker2/rogue/+", qos=1)
        ready = json.dumps({"schema": "hilrig.worker/1", "worker": "worker2/rogue",
                            "state": "ready"})
        await rogue.publish("hilrig-workers/ready/worker2/rogue", ready, qos=1, retain=True)
        worker = subprocess.Popen(
            [sys.executable, "-m", "hilrig", "worker"], stdout=open(worker_log, "w"),
            stderr=subprocess.STDOUT, env=dict(env, HILRIG_MQTT__USERNAME="worker1",
                                               HILRIG_MQTT__PASSWORD_FILE=str(pw["worker1"])))
        async with asyncio.timeout(60):
            while "waiting for jobs" not in worker_log.read_text():
                await asyncio.sleep(0.1)
        # the harness sees the real worker's jobs (as the rig's user) and tells the rogue
        await watch.subscribe(f"{prefix}/jobs/identify/worker1/+/+", qos=1)
        await watch.subscribe(f"{prefix}/events", qos=1)

        async def answer(capture_id: str, method: str, name: str, body: bytes, kind: str):
            await rogue.publish(f"{prefix}/jobs/result/{name}/{capture_id}/{method}", body,
                                qos=1)
            answers.append(kind)

        async def rogue_jobs() -> None:
            async for m in rogue.messages:
                job = json.loads(m.payload)
                c, method = job["capture_id"], job["methods"][0]
                me = "worker2/rogue"
                big = _forged_result(c, method, values={"mu_d0": -5.0},
                                     diagnostics={"pad": "x" * 5_000_000})
                await answer(c, method, me, json.dumps(big).encode(), "5 MB")
                await answer(c, method, me, json.dumps(_forged_result(
                    c, method, values={"mu_d0": -5.0})).encode(), "negative")
                await answer(c, method, me, json.dumps(_forged_result(
                    c, method, values={"mu_d1": float("nan"), "mu_v0": float("inf")})).encode(),
                    "nan")
                await answer(c, method, me, json.dumps(_forged_result(
                    "C-other", method)).encode(), "other capture")
                # and says it is not ready again: the other jobs go to the real worker only

        async def watched() -> None:
            async for m in watch.messages:
                if "/jobs/identify/" in m.topic.value:  # a job of the real worker: first!
                    job = json.loads(m.payload)
                    c, method = job["capture_id"], job["methods"][0]
                    forged = json.dumps(_forged_result(c, method, values={"mu_d0": 0.4242}))
                    await answer(c, method, "worker2/rogue", forged.encode(), "not given")
                    await answer(c, method, job["worker"], forged.encode(), "in its name")
                else:
                    events.append(json.loads(m.payload))

        tasks = [asyncio.create_task(rogue_jobs()), asyncio.create_task(watched())]
        try:
            run = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "hilrig", "run", "--sim", "--unpaced", "--captures",
                "3", env=dict(env, HILRIG_MQTT__USERNAME="hilrig",
                              HILRIG_MQTT__PASSWORD_FILE=str(pw["hilrig"])),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
            out, _ = await asyncio.wait_for(run.communicate(), 300)
            await asyncio.sleep(1.0)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await rogue.publish("hilrig-workers/ready/worker2/rogue", b"", qos=1, retain=True)
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=30)
    text = out.decode()
    assert run.returncode == 0, text[-3000:]
    assert {"5 MB", "negative", "nan", "other capture", "not given", "in its name"} <= set(
        answers), answers
    refused = [e for e in events if e.get("code") == "job.refused"]
    # every answer the rig received for a job still open was refused, each in one line
    # (the one sent in the real worker's name never reached it: the broker's ACL dropped
    # it; one that came after its job was done is not even read)
    assert 0 < len(refused) <= len(answers) - answers.count("in its name"), (answers, refused)
    assert all("\n" not in e["message"] and len(e["message"]) < 400 for e in refused)
    for why in ("more than 1048576", "mu_d0 = -5 is below zero", "mu_d1 is not a finite",
                "result of capture 'C-other'", "not given this job"):
        assert any(why in e["message"] for e in refused), (why, "\n".join(
            e["message"] for e in refused))
    assert text.count("(worker)") == 3  # each capture: one result, the real worker's
    from hilrig.daq.storage import Catalog

    with Catalog.open(root, create=False) as cat:
        results = cat.results()
        assert len(results) == 3 and len({r.capture_id for r in results}) == 3
        for row in results:
            mu = row.result().parameters["mu_d0"].value
            assert mu is not None and mu > 0 and mu != 0.4242
    listing = subprocess.run([sys.executable, "-m", "hilrig", "results", "list"], env=env,
                             capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert listing.returncode == 0 and "0.4242" not in listing.stdout, listing.stderr
