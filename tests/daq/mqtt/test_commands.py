"""Commands over MQTT against the real Mosquitto: replies by correlation data, clear refusals."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid

import aiomqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from hilrig.daq.config import load_settings
from hilrig.daq.mqtt import CommandRouter, Courier, send_command
from hilrig.daq.runtime import SessionPlan, SessionRun, SimReleaser, new_session_id
from hilrig.daq.storage import Catalog, Outbox
from hilrig.drivers.sim import SimulatedRig

URL = "mqtt://127.0.0.1:1883"


class V5Client:
    """A lab script: MQTT v5, its own response topic, a correlation id per request."""

    def __init__(self, client: aiomqtt.Client, rig_id: str) -> None:
        self.client, self.rig_id = client, rig_id
        self.response = f"replies/{uuid.uuid4().hex[:8]}"
        self.replies: dict[bytes, dict] = {}

    async def start(self) -> None:
        await self.client.subscribe(self.response, qos=1)
        self._task = asyncio.create_task(self._read())

    def stop(self) -> None:
        self._task.cancel()

    async def _read(self) -> None:
        async for m in self.client.messages:
            if m.topic.value == self.response:
                self.replies[m.properties.CorrelationData] = json.loads(m.payload)

    async def ask(self, verb: str, payload: bytes | str, timeout: float = 60.0) -> dict:
        token = uuid.uuid4().hex.encode()
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = self.response
        props.CorrelationData = token
        await self.client.publish(f"hilrig/{self.rig_id}/cmd/{verb}", payload, qos=1,
                                  properties=props)
        async with asyncio.timeout(timeout):
            while token not in self.replies:
                await asyncio.sleep(0.02)
        return self.replies.pop(token)


@pytest.mark.fault(injected="bad input: malformed MQTT commands (bad JSON, wrong types, "
                            "unknown verbs, paths)",
                   expected="an error reply each, nothing changed")
@pytest.mark.slow
@pytest.mark.timeout(600)
async def test_each_command_gets_its_reply_and_malformed_ones_change_nothing(tmp_path, until):
    rig_id = f"cmd-{uuid.uuid4().hex[:8]}"
    settings = load_settings(None, storage={"directory": str(tmp_path)},
                             mqtt={"rig_id": rig_id, "url": URL, "telemetry_hz": 0})
    plan = SessionPlan(captures=3, poses_deg=[(0.0, 30.0)], paced=False)
    cat = Catalog.open(tmp_path)
    sid = new_session_id()
    cat.add_session(sid, plan.model_dump_json())
    rig = SimulatedRig(rig=settings.rig, friction=settings.sim.friction, pose_deg=(0.0, 30.0),
                       paced=False, auto_release=False)
    router = CommandRouter(rig_id)
    async with Courier(settings.mqtt, Outbox(tmp_path), commands=router) as courier, \
            aiomqtt.Client("127.0.0.1", 1883, protocol=aiomqtt.ProtocolVersion.V5) as c:
        runner = SessionRun(settings, rig, courier, plan=plan, catalog=cat, session_id=sid,
                               releaser=SimReleaser(rig, plan.hold_s))
        runner.register_commands(router)
        lab = V5Client(c, rig_id)
        await lab.start()
        await until(lambda: courier.connected, 10, "the courier to connect")
        session = asyncio.create_task(runner.run())

        paused = await lab.ask("session/pause", "{}")
        assert paused["ok"] and paused["result"]["state"] == "suspended"
        assert paused["schema"] == "hilrig.reply/1" and paused["rig_id"] == rig_id
        await until(lambda: len(cat.captures(sid, status="done")) >= 1, 240, "a first capture")
        await asyncio.sleep(2.0)  # paused: no further release while it holds
        assert len(cat.captures(sid)) == 1

        before = len(cat.results(session_id=sid))
        malformed = [("identify", b"{not json", "not valid JSON"),
                     ("identify", b'{"capture_id": 5}', "capture_id"),
                     ("identify", b'{"capture_id": "../../etc/passwd"}', "capture_id"),
                     ("identify", b'{"capture_id": "x", "method": "magic"}', "unknown method"),
                     ("identify", b'{"capture_id": "nope"}', "no capture 'nope'"),
                     ("identify", b'[1, 2]', "JSON object"),
                     ("fly", b"{}", "unknown verb 'fly'"),
                     ("abort", b"{}", "no capture is recording"),
                     ("arm", b"{}", "the session arms the trigger"),
                     ("release", b"{}", "no release is awaited"),
                     ("session/start", b'{"plan": {"captures": 1}}', "is running"),
                     ("session/stop", b'{"force": true}', "force")]
        for verb, payload, error in malformed:
            reply = await lab.ask(verb, payload)
            assert reply["ok"] is False and error in reply["error"], (verb, reply)
            assert "\n" not in reply["error"]
        assert len(cat.results(session_id=sid)) == before  # nothing changed
        assert len(cat.captures(sid)) == 1 and cat.session(sid).status == "running"

        first = cat.captures(sid, status="done")[0].capture_id
        again = await lab.ask("identify", json.dumps({"capture_id": first,
                                                     "method": "regression"}))
        assert again["ok"] and again["result"]["method"] == "regression"
        assert len(cat.results(capture_id=first)) == 2  # added, not replaced

        # an MQTT 3.1.1 client names its reply topic and correlation id in the request
        async with aiomqtt.Client("127.0.0.1", 1883,
                                  protocol=aiomqtt.ProtocolVersion.V311) as old:
            topic = f"hilrig/{rig_id}/reply/dash-1"
            await old.subscribe(topic, qos=1)
            await old.publish(f"hilrig/{rig_id}/cmd/session/resume", json.dumps(
                {"reply_to": topic, "correlation_id": "r-42"}), qos=1)
            async with asyncio.timeout(30):
                message = await anext(aiter(old.messages))
            reply = json.loads(message.payload)
            assert reply["ok"] and reply["correlation_id"] == "r-42"

        stop = await send_command(settings.mqtt, "session/stop", {})  # hilrig cmd's client
        assert stop["ok"] and stop["result"]["session_id"] == sid
        await asyncio.wait_for(session, 300)
    row = cat.session(sid)
    assert row.status == "stopped" and row.reason == "stop requested"
    assert {c.status for c in cat.captures(sid)} == {"done"}


def test_hilrig_cmd_says_what_is_wrong_before_sending(tmp_path):
    env = dict(os.environ, HILRIG_MQTT__URL=URL)
    bad = subprocess.run([sys.executable, "-m", "hilrig", "cmd", "fly"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown verb 'fly'" in bad.stderr
    bad = subprocess.run([sys.executable, "-m", "hilrig", "cmd", "identify", "{oops"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr
    nobody = subprocess.run([sys.executable, "-m", "hilrig", "cmd", "arm", "--timeout", "1"],
                            env=dict(env, HILRIG_MQTT__RIG_ID=f"nobody-{uuid.uuid4().hex[:6]}"),
                            capture_output=True, text=True, timeout=60)
    assert nobody.returncode == 1 and "no reply" in nobody.stderr


@pytest.mark.fault(injected="bad input: commands nested 40, 2,000 and 100,000 levels deep",
                   expected="a one-line refusal each; the command reader goes on")
@pytest.mark.timeout(120)
async def test_a_deeply_nested_command_is_refused_and_the_reader_survives(tmp_path, until):
    rig_id = f"deep-{uuid.uuid4().hex[:8]}"
    settings = load_settings(None, mqtt={"rig_id": rig_id, "url": URL})
    router = CommandRouter(rig_id)
    async with Courier(settings.mqtt, Outbox(tmp_path), commands=router) as courier, \
            aiomqtt.Client("127.0.0.1", 1883, protocol=aiomqtt.ProtocolVersion.V5) as c:
        lab = V5Client(c, rig_id)
        await lab.start()
        await until(lambda: courier.listening.is_set(), 20, "the courier to listen")
        for depth, why in ((40, "nested too deeply"), (2_000, "nested too deeply"),
                           (100_000, "larger than 65536 bytes")):
            for verb, payload in (("arm", "[" * depth + "]" * depth),
                                  ("session/start",
                                   '{"plan": ' + '{"a": ' * depth + "1" + "}" * depth + "}")):
                reply = await lab.ask(verb, payload, timeout=30)
                assert reply["ok"] is False and why in reply["error"], reply
        alive = await lab.ask("arm", "{}", timeout=30)
        assert alive["ok"] is False and "not available" in alive["error"]
        lab.stop()


@pytest.mark.fault(injected="bad input: a result message and a monitored message nested "
                            "100,000 deep (a foreign or broken worker)",
                   expected="refused as not a result (ValueError), shown as not JSON; no "
                            "RecursionError reaches the rig's handlers or the monitor")
def test_messages_from_others_nested_too_deeply_are_refused_not_parsed():
    from hilrig.daq.mqtt import result_from_message
    from hilrig.daq.mqtt._monitor import _summary_line

    deep = b'{"job_id": "j", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(ValueError, match="nested too deeply"):
        result_from_message(deep)
    assert "(not JSON)" in _summary_line("hilrig/r/result/c/m", deep, False)


async def test_ping_answers_whoever_may_command_and_changes_nothing():
    # a dashboard asks with ping whether its user may command: any service answers it
    router = CommandRouter("ping-rig")
    reply = await router.handle("ping", {"correlation_id": "c1"}, None)
    assert reply == {"verb": "ping", "ok": True, "correlation_id": "c1",
                     "result": {"pong": True}}
    refused = await router.handle("ping", {"force": 1}, None)
    assert not refused["ok"] and "force" in refused["error"]


async def test_a_command_that_comes_again_gets_the_first_reply_and_runs_once():
    router = CommandRouter("dup-rig")
    runs: list[str] = []

    async def identify(request):
        runs.append(request.capture_id)
        await asyncio.sleep(0.05)  # a duplicate arriving meanwhile waits for this reply
        return {"capture_id": request.capture_id, "n": len(runs)}

    router.register("identify", identify)
    body = {"capture_id": "c1", "command_id": "op-7", "correlation_id": "a"}
    first, again = await asyncio.gather(router.handle("identify", dict(body), None),
                                        router.handle("identify", dict(body), None))
    later = await router.handle("identify", dict(body), None)
    assert runs == ["c1"] and first == again == later and first["command_id"] == "op-7"
    reused = await router.handle("identify", {**body, "capture_id": "c2"}, None)
    assert not reused["ok"] and "command_id 'op-7' was used for another request" in \
        reused["error"] and runs == ["c1"]
    # without a command_id: the same correlation and body is the same request (a QoS 1
    # redelivery); another body, or another correlation, is another request
    v5 = {"capture_id": "c3"}
    await router.handle("identify", dict(v5), None, correlation=b"\x01\x02")
    await router.handle("identify", dict(v5), None, correlation=b"\x01\x02")
    await router.handle("identify", dict(v5), None, correlation=b"\x01\x03")
    await router.handle("identify", {"capture_id": "c3", "correlation_id": "r-1"}, None)
    await router.handle("identify", {"capture_id": "c3", "correlation_id": "r-1"}, None)
    await router.handle("identify", {"capture_id": "c4", "correlation_id": "r-1"}, None)
    assert runs == ["c1", "c3", "c3", "c3", "c4"]
    # nothing to tell it by: each one runs
    await router.handle("identify", {"capture_id": "c5"}, None)
    await router.handle("identify", {"capture_id": "c5"}, None)
    assert runs[-2:] == ["c5", "c5"]


@pytest.mark.fault(injected="MQTT: a retained command (mosquitto_pub -r cmd/arm), and the "
                            "same command sent twice with one correlation id",
                   expected="the retained one never runs (a warning event, deleted from the "
                            "broker), the duplicate gets the first reply; each runs once")
@pytest.mark.timeout(60)
async def test_a_retained_command_never_runs_and_a_duplicate_runs_once(tmp_path, until):
    rig_id = f"ret-{uuid.uuid4().hex[:8]}"
    settings = load_settings(None, mqtt={"rig_id": rig_id, "url": URL})
    runs: list[str] = []

    async def arm(request):
        runs.append("arm")
        return {"armed": True}

    async with aiomqtt.Client("127.0.0.1", 1883, protocol=aiomqtt.ProtocolVersion.V5) as c:
        # left on the broker before the service starts, as by `mosquitto_pub -r`
        await c.publish(f"hilrig/{rig_id}/cmd/arm", b"{}", qos=1, retain=True)
        await c.subscribe(f"hilrig/{rig_id}/events", qos=1)
        for start in range(2):  # the service started twice: it runs at neither start
            router = CommandRouter(rig_id)
            router.register("arm", arm)
            async with Courier(settings.mqtt, Outbox(tmp_path / str(start)),
                               commands=router) as courier:
                await until(lambda: courier.listening.is_set(), 20, "the courier to listen")
                await asyncio.sleep(1.0)
                if start == 0:
                    async with asyncio.timeout(10):
                        async for m in c.messages:
                            event = json.loads(m.payload)
                            if event["code"] == "command.retained":
                                break
                    assert "cmd/arm ignored" in event["message"]
                    assert "\n" not in event["message"]
                lab = V5Client(c, rig_id)
                await lab.start()
                props_token = uuid.uuid4().hex.encode()
                replies = []
                for _ in range(2):  # sent twice, as a client that retries would
                    props = Properties(PacketTypes.PUBLISH)
                    props.ResponseTopic = lab.response
                    props.CorrelationData = props_token
                    await c.publish(f"hilrig/{rig_id}/cmd/arm", b"{}", qos=1,
                                    properties=props)
                    async with asyncio.timeout(10):
                        while props_token not in lab.replies:
                            await asyncio.sleep(0.02)
                    replies.append(lab.replies.pop(props_token))
                lab.stop()
                await asyncio.gather(lab._task, return_exceptions=True)
                for reply in replies:
                    reply.pop("time")  # when each was published
                assert replies[0] == replies[1] and replies[0]["ok"]
        assert runs == ["arm", "arm"]  # once per start, for the live command; never retained
    async with aiomqtt.Client("127.0.0.1", 1883) as fresh:  # nothing left on the broker
        await fresh.subscribe(f"hilrig/{rig_id}/cmd/#", qos=1)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(1.0):
                await anext(aiter(fresh.messages))


def test_the_nesting_scan_takes_no_memory_that_grows_with_the_message():
    import tracemalloc

    from hilrig.daq.config import json_nesting, loads_bounded

    # 20 MB of short strings: a copy with its strings replaced took 2.4 GB
    doc = b'{"a": [' + b'"x[y]", 1.5, {"k": "v"}, ' * 800_000 + b'0]}'
    tracemalloc.start()
    try:
        assert json_nesting(doc) == 3
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak
    assert json_nesting(b'{"a": "[[[[", "b": [[1]], "c": "\\\\\\"["}') == 3
    with pytest.raises(ValueError, match="bytes, more than"):  # refused before the scan
        loads_bounded(doc)
