"""MQTT publication against the real Mosquitto on 127.0.0.1:1883 and the embedded broker.

Tests that need Mosquitto FAIL (never skip) when it is not reachable: CI runs one.
Each test uses its own rig_id, so retained messages of other tests (and of other
people using the same broker) are never seen; retained topics are cleared at the end.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import re
import signal
import socket
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiomqtt
import numpy as np
import pytest

from hilrig.daq.config import MqttConfig
from hilrig.daq.mqtt import (
    EmbeddedBroker,
    Publisher,
    Topics,
    monitor,
    parse_mqtt_url,
    probe_broker,
    resolve_broker,
)
from hilrig.drivers import SourceInfo
from hilrig.identify import PARAM_NAMES, TABLE_III_TRUTH, IdentificationResult, ParameterEstimate

MOSQUITTO_URL = "mqtt://127.0.0.1:1883"
REPO = Path(__file__).resolve().parents[3]
TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
SOURCE = SourceInfo(kind="simulated", identity="sim:tilt=10.0", sample_rate_hz=10_000.0,
                    counts_per_rev=(40_000, 40_000))
def identification_result(capture_id: str | None, method: str) -> IdentificationResult:
    """What the service publishes (identify's hilrig.result/1 shape)."""
    return IdentificationResult(
        method=method, capture_id=capture_id, fit_percent={"arm": 98.97, "pendulum": 99.53},
        parameters={n: ParameterEstimate(value=getattr(TABLE_III_TRUTH, n), identifiable=True)
                    for n in PARAM_NAMES},
        compute_seconds=1.5, normalized_compute_time=1.5e-6, capture_seconds=10.0,
        sample_rate_hz=10_000.0, samples=100_000, tilt_deg=10.0)

Message = tuple[str, dict[str, Any] | None, bool]  # topic, JSON payload (None if empty), retain


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def mosquitto() -> str:
    if not await probe_broker("127.0.0.1", 1883, 3.0):
        pytest.fail(f"no MQTT broker answers at {MOSQUITTO_URL}: these tests need Mosquitto")
    return MOSQUITTO_URL


@pytest.fixture
async def rig_id(mosquitto: str) -> AsyncIterator[str]:
    """A rig_id of its own; its retained topics on Mosquitto are cleared afterwards."""
    rig = f"test-{uuid.uuid4().hex[:12]}"
    yield rig
    topics = Topics(rig)
    async with aiomqtt.Client("127.0.0.1", 1883) as client:
        for topic in (topics.status, topics.result_latest):
            await client.publish(topic, b"", qos=1, retain=True)


@asynccontextmanager
async def subscribed(url: str, topic_filter: str
                     ) -> AsyncIterator[Callable[[float], Awaitable[Message]]]:
    """A separate aiomqtt client subscribed to topic_filter; yields `get(timeout)`."""
    host, port = parse_mqtt_url(url)
    async with aiomqtt.Client(host, port, identifier=f"test-sub-{uuid.uuid4().hex[:8]}") as c:
        await c.subscribe(topic_filter, qos=1)
        messages = aiter(c.messages)

        async def get(timeout: float = 5.0) -> Message:
            async with asyncio.timeout(timeout):
                m = await anext(messages)
                while not m.topic.matches(topic_filter):  # amqtt sends some unasked
                    m = await anext(messages)
            payload = bytes(m.payload) if isinstance(m.payload, (bytes, bytearray)) else b""
            return m.topic.value, (json.loads(payload) if payload else None), m.retain

        yield get


async def retained(url: str, topic: str) -> dict[str, Any] | None:
    """The retained message on topic, as a fresh subscriber sees it (None if none)."""
    async with subscribed(url, topic) as get:
        try:
            return (await get(1.5))[1]
        except TimeoutError:
            return None


async def wait_state(url: str, topic: str, state: str, timeout: float) -> dict[str, Any]:
    async with subscribed(url, topic) as get:
        async with asyncio.timeout(timeout):
            while True:
                _, msg, _ = await get(timeout)
                if msg is not None and msg["state"] == state:
                    return msg


def check_envelope(msg: dict[str, Any] | None, schema: str, rig: str) -> dict[str, Any]:
    assert msg is not None
    assert msg["schema"] == schema
    assert msg["rig_id"] == rig
    assert TIME_RE.match(msg["time"]), msg["time"]
    assert msg["software_version"]
    return msg


# --- the main path on Mosquitto ------------------------------------------------------------

@pytest.mark.timeout(30)
async def test_subscriber_sees_status_capture_and_result(mosquitto: str, rig_id: str) -> None:
    cfg = MqttConfig(url=mosquitto, rig_id=rig_id)
    topics = Topics(rig_id)
    async with subscribed(mosquitto, topics.all) as get:
        async with Publisher(cfg, source=SOURCE) as pub:
            topic, msg, _ = await get(5)
            assert topic == topics.status
            status = check_envelope(msg, "hilrig.status/1", rig_id)
            assert status["state"] == "online"
            assert status["source"]["identity"] == "sim:tilt=10.0"

            assert await pub.publish_capture("c-001", {"samples": 12_345, "trigger": "motion"})
            topic, msg, _ = await get(5)
            assert topic == f"hilrig/{rig_id}/capture/c-001"
            capture = check_envelope(msg, "hilrig.capture/1", rig_id)
            assert capture["capture_id"] == "c-001"
            assert (capture["samples"], capture["trigger"]) == (12_345, "motion")

            result_model = identification_result("c-001", "regression-oe")
            assert await pub.publish_result("c-001", "regression-oe", result_model)
            got = {t: m for t, m, _ in [await get(5), await get(5)]}
            assert set(got) == {f"hilrig/{rig_id}/result/c-001/regression-oe",
                                f"hilrig/{rig_id}/result/latest"}
            for msg in got.values():
                result = check_envelope(msg, "hilrig.result/1", rig_id)
                assert (result["capture_id"], result["method"]) == ("c-001", "regression-oe")
                assert result["parameters"]["mu_d0"]["value"] == pytest.approx(5e-4)
                assert result["fit_percent"]["pendulum"] == pytest.approx(99.53)
                # the body is identify's own result shape, envelope keys added
                parsed = IdentificationResult.model_validate(
                    {k: v for k, v in result.items() if k not in ("rig_id", "time", "msg_id")})
                assert parsed.parameters == result_model.parameters

            assert await pub.publish_result("c-002", "uas", identification_result("c-002", "uas"))
            await get(5), await get(5)

            # a dashboard connecting now sees retained status and latest result
            assert (await retained(mosquitto, topics.status) or {}).get("state") == "online"
            latest = await retained(mosquitto, topics.result_latest)
            assert latest is not None
            assert (latest["capture_id"], latest["method"]) == ("c-002", "uas")
            assert latest["parameters"]["mu_s1"]["value"] == pytest.approx(7e-4)

            assert await pub.publish_status("capturing", capture_id="c-003")
            _, msg, _ = await get(5)
            assert msg is not None and (msg["state"], msg["capture_id"]) == ("capturing", "c-003")
            assert msg["source"]["identity"] == "sim:tilt=10.0"  # remembered

    status = await retained(mosquitto, topics.status)
    assert status is not None and status["state"] == "offline"  # clean exit


@pytest.mark.timeout(30)
async def test_mosquitto_sub_sees_messages(mosquitto: str, rig_id: str) -> None:
    cfg = MqttConfig(url=mosquitto, rig_id=rig_id)
    async with Publisher(cfg) as pub:
        proc = await asyncio.create_subprocess_exec(
            "mosquitto_sub", "-h", "127.0.0.1", "-p", "1883", "-q", "1", "-v",
            "-t", f"hilrig/{rig_id}/#", "-C", "4", "-W", "20",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        try:
            assert proc.stdout is not None
            lines = [await asyncio.wait_for(proc.stdout.readline(), 10)]  # retained status
            assert await pub.publish_capture("cap-7", {
                "samples": np.int64(7), "max_abs_counts": np.array([3, 4], dtype=np.int32),
                "pre_trigger_s": float("nan")})
            assert await pub.publish_result("cap-7", "uas", identification_result("cap-7", "uas"))
            lines += [await asyncio.wait_for(proc.stdout.readline(), 10) for _ in range(3)]
            assert await asyncio.wait_for(proc.wait(), 10) == 0
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    got = {}
    for line in lines:
        topic, payload = line.decode().rstrip("\n").split(" ", 1)
        got[topic] = json.loads(payload)
    prefix = f"hilrig/{rig_id}"
    assert set(got) == {f"{prefix}/status", f"{prefix}/capture/cap-7",
                        f"{prefix}/result/cap-7/uas", f"{prefix}/result/latest"}
    assert check_envelope(got[f"{prefix}/status"], "hilrig.status/1", rig_id)["state"] == "online"
    capture = check_envelope(got[f"{prefix}/capture/cap-7"], "hilrig.capture/1", rig_id)
    assert capture["capture_id"] == "cap-7"
    assert (capture["samples"], capture["max_abs_counts"]) == (7, [3, 4])
    assert "pre_trigger_s" not in capture  # NaN is not JSON: a key without a value is left out
    for topic in (f"{prefix}/result/cap-7/uas", f"{prefix}/result/latest"):
        assert check_envelope(got[topic], "hilrig.result/1", rig_id)["method"] == "uas"


CHILD = """
import asyncio, sys
from hilrig.daq.config import MqttConfig
from hilrig.daq.mqtt import Publisher

async def main() -> None:
    cfg = MqttConfig(url=sys.argv[1], rig_id=sys.argv[2], keepalive_s=2)
    async with Publisher(cfg):
        print("ready", flush=True)
        await asyncio.sleep(3600)

asyncio.run(main())
"""


async def run_will_check(url: str, rig: str, sig: signal.Signals, within_s: float) -> None:
    """Start a Publisher in a subprocess, see it online, signal it, see the will."""
    topic = Topics(rig).status
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, url, rig, cwd=REPO, stdout=asyncio.subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert await asyncio.wait_for(proc.stdout.readline(), 15) == b"ready\n"
        await wait_state(url, topic, "online", 5)
        os.kill(proc.pid, sig)
        will = await wait_state(url, topic, "offline", within_s)
        check_envelope(will, "hilrig.status/1", rig)
        # and it is retained for whoever connects later
        assert (await retained(url, topic) or {}).get("state") == "offline"
    finally:
        if proc.returncode is None:
            proc.kill()  # also ends a stopped process
        await proc.wait()


@pytest.mark.fault(injected="MQTT: the service is killed (SIGKILL)",
                   expected="the retained status reads offline through the last will")
@pytest.mark.timeout(30)
async def test_last_will_leaves_offline_when_killed(mosquitto: str, rig_id: str) -> None:
    await run_will_check(mosquitto, rig_id, signal.SIGKILL, within_s=5)


@pytest.mark.timeout(40)
async def test_last_will_after_keepalive_when_hung(mosquitto: str, rig_id: str) -> None:
    # SIGSTOP keeps the TCP connection open: only the keepalive (2 s) reveals it.
    # Mosquitto 2.0.11 measured 5.5-6.5 s for keepalive 2 s.
    await run_will_check(mosquitto, rig_id, signal.SIGSTOP, within_s=20)


@pytest.mark.timeout(30)
async def test_last_will_on_embedded_broker() -> None:
    # amqtt does not enforce keepalive (a hung client is never dropped), so only a kill
    async with EmbeddedBroker() as broker:
        await run_will_check(broker.url, f"test-{uuid.uuid4().hex[:12]}", signal.SIGKILL, 5)


@pytest.mark.timeout(30)
async def test_the_embedded_broker_is_asked_for_3_1_1_straight_away(
        caplog: pytest.LogCaptureFixture) -> None:
    # The embedded broker speaks 3.1.1 only; a v5 attempt would cost connect_timeout_s and
    # leave amqtt a cancelled handler to report: no connection to it tries v5.
    caplog.set_level(logging.INFO, logger="hilrig.mqtt")
    async with EmbeddedBroker() as broker:
        cfg = MqttConfig(url=broker.url, rig_id=f"test-{uuid.uuid4().hex[:12]}",
                         connect_timeout_s=1.0)
        for _ in range(3):
            async with Publisher(cfg, announce=False) as pub:
                assert not pub.is_v5
    assert not any("did not take MQTT v5" in r.message for r in caplog.records)


@pytest.mark.timeout(30)
async def test_monitor_prints_status_capture_and_result(mosquitto: str, rig_id: str) -> None:
    cfg = MqttConfig(url=mosquitto, rig_id=rig_id)
    out = io.StringIO()
    async with Publisher(cfg, source=SOURCE) as pub:
        task = asyncio.create_task(monitor(cfg, out=out, max_messages=4, timeout_s=20))
        async with asyncio.timeout(10):
            while not out.getvalue():  # the retained status: monitor is subscribed
                await asyncio.sleep(0.05)
        await pub.publish_capture("c-9", {"samples": 500, "duration_s": 0.05})
        await pub.publish_result("c-9", "regression-oe",
                                 identification_result(None, "regression-oe"))
        assert await asyncio.wait_for(task, 10) == 4
    lines = out.getvalue().splitlines()
    assert len(lines) == 4, lines
    prefix = f"hilrig/{rig_id}"
    # what each message means, then where it came from
    assert " rig online, source sim:tilt=10.0" in lines[0]
    assert lines[0].endswith(f"[{prefix}/status [retained]]")
    assert " capture c-9 done: 0.05 s, 500 samples" in lines[1]
    assert lines[1].endswith(f"[{prefix}/capture/c-9]")
    results = sorted(lines[2:], key=lambda line: "latest" in line)
    assert " result method=regression-oe capture=c-9" in results[0]
    assert results[0].endswith(f"[{prefix}/result/c-9/regression-oe]")
    assert results[1].endswith(f"[{prefix}/result/latest]")
    for line in results:
        assert "fit[arm=98.97 pendulum=99.53]" in line
        assert "mu_d0=0.0005" in line and "mu_v1=0.00025" in line


@pytest.mark.timeout(30)
async def test_monitor_shows_a_sessions_state_and_counts_and_an_events_code_and_message(
        mosquitto: str, rig_id: str) -> None:
    from hilrig.daq.mqtt import EventPayload, SessionPayload

    cfg = MqttConfig(url=mosquitto, rig_id=rig_id)
    out = io.StringIO()
    session = SessionPayload(rig_id=rig_id, session_id="S1", state="waiting_for_release",
                             planned=20, done=7, failed=1, in_flight=1, current_seq=8,
                             eta_s=754.0, prompt="hold the pendulum at 30 deg and let go")
    event = EventPayload(rig_id=rig_id, level="warning", code="job.no_worker",
                         message="capture c-1: no worker has taken its job in 5 s")
    async with Publisher(cfg, announce=False) as pub:
        task = asyncio.create_task(monitor(cfg, out=out, max_messages=2, timeout_s=20))
        await asyncio.sleep(0.5)
        for topic, body in ((f"hilrig/{rig_id}/session/S1", session),
                            (f"hilrig/{rig_id}/events", event)):
            await pub.client.publish(topic, body.model_dump_json(by_alias=True), qos=1)
        assert await asyncio.wait_for(task, 10) == 2
    session_line, event_line = out.getvalue().splitlines()
    assert ("session S1 waiting_for_release: 7/20 done, 1 failed, 1 identifying, capture #8, "
            "ETA 12m34s; hold the pendulum at 30 deg and let go") in session_line
    assert ("WARNING job.no_worker: capture c-1: no worker has taken its job in 5 s"
            in event_line)
    raw = io.StringIO()
    async with Publisher(cfg, announce=False) as pub:
        task = asyncio.create_task(monitor(cfg, out=raw, max_messages=1, timeout_s=20,
                                           raw=True))
        await asyncio.sleep(0.5)
        await pub.client.publish(f"hilrig/{rig_id}/events", event.model_dump_json(by_alias=True))
        await asyncio.wait_for(task, 10)
    topic, payload = raw.getvalue().split(" ", 1)
    assert topic == f"hilrig/{rig_id}/events" and '"code":"job.no_worker"' in payload


@pytest.mark.timeout(30)
async def test_monitor_stops_after_timeout(mosquitto: str, rig_id: str) -> None:
    out = io.StringIO()
    assert await monitor(MqttConfig(url=mosquitto, rig_id=rig_id), out=out, timeout_s=0.5) == 0
    assert out.getvalue() == ""


# --- broker resolution and the embedded fallback ------------------------------------------

@pytest.mark.timeout(30)
async def test_resolve_broker_uses_configured_broker(mosquitto: str,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    async with resolve_broker(MqttConfig(url=mosquitto)) as url:
        assert url == mosquitto
    assert "embedded" not in caplog.text


@pytest.mark.timeout(30)
async def test_resolve_broker_starts_embedded_broker(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    rig = f"test-{uuid.uuid4().hex[:12]}"
    cfg = MqttConfig(url=f"mqtt://127.0.0.1:{port}", rig_id=rig, connect_timeout_s=0.5)
    with caplog.at_level(logging.WARNING, logger="hilrig.mqtt"):
        async with resolve_broker(cfg) as url:
            assert url == f"mqtt://127.0.0.1:{port}"  # the configured port, as it was free
            assert [r.levelno for r in caplog.records if "embedded broker" in r.message] \
                == [logging.WARNING]
            assert url in caplog.text
            async with Publisher(cfg, url=url) as pub:
                assert (await retained(url, Topics(rig).status) or {}).get("state") == "online"
                async with subscribed(url, Topics(rig).all) as get:
                    assert (await get(5))[0] == Topics(rig).status  # retained
                    assert await pub.publish_capture("c1", {"samples": 3})
                    # amqtt 0.12.1 may deliver a retained message twice to a new client
                    # (it replays retained messages for every filter anyone subscribed)
                    while (got := await get(5))[0] == Topics(rig).status:
                        pass
                    topic, msg, _ = got
                    assert topic == f"hilrig/{rig}/capture/c1"
                    check_envelope(msg, "hilrig.capture/1", rig)
                assert await pub.publish_result("c1", "uas", identification_result("c1", "uas"))
                latest = await retained(url, Topics(rig).result_latest)
                assert latest is not None and latest["capture_id"] == "c1"
            assert (await retained(url, Topics(rig).status) or {}).get("state") == "offline"
    with pytest.raises(OSError):  # shut down on exit
        await asyncio.open_connection("127.0.0.1", port)


@pytest.mark.timeout(30)
async def test_embedded_broker_listens_on_loopback_only() -> None:
    async with EmbeddedBroker() as broker:
        assert broker.port is not None
        assert await probe_broker("127.0.0.1", broker.port, 2.0)
        # bound to 0.0.0.0 it would answer on all of 127/8 and on the host's addresses
        others = ["127.0.0.2"]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            try:
                s.connect(("192.0.2.1", 9))  # no packet is sent: just picks the route
                others.append(s.getsockname()[0])
            except OSError:
                pass
        for host in others:
            if not host.startswith("127.0.0.1"):
                with pytest.raises(OSError):
                    await asyncio.open_connection(host, broker.port)


@pytest.mark.timeout(30)
async def test_embedded_broker_takes_free_port_when_configured_port_busy() -> None:
    with socket.socket() as busy:  # listens, never answers MQTT
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        cfg = MqttConfig(url=f"mqtt://127.0.0.1:{port}", connect_timeout_s=0.5)
        async with resolve_broker(cfg) as url:
            host, got_port = parse_mqtt_url(url)
            assert host == "127.0.0.1" and got_port != port
            assert await probe_broker(host, got_port, 2.0)


@pytest.mark.timeout(30)
async def test_no_broker_and_no_fallback_is_a_clear_error() -> None:
    url = f"mqtt://127.0.0.1:{free_port()}"
    cfg = MqttConfig(url=url, embedded_fallback=False, connect_timeout_s=0.5)
    with pytest.raises(ConnectionError, match=re.escape(url)):
        async with resolve_broker(cfg):
            pass
    with pytest.raises(ConnectionError, match=re.escape(url)):
        async with Publisher(cfg):
            pass


@pytest.mark.timeout(30)
async def test_publishing_when_broker_gone_logs_and_returns(caplog: pytest.LogCaptureFixture
                                                            ) -> None:
    rig = f"test-{uuid.uuid4().hex[:12]}"
    broker = EmbeddedBroker()
    await broker.__aenter__()
    try:
        pub = Publisher(MqttConfig(url=broker.url, rig_id=rig), publish_timeout_s=1.0)
        await pub.__aenter__()
    finally:
        await broker.__aexit__(None, None, None)
    await asyncio.sleep(0.2)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with caplog.at_level(logging.WARNING, logger="hilrig.mqtt"):
        assert await pub.publish_capture("c1", {"samples": 1}) is False
        assert await pub.publish_result("c1", "uas", identification_result("c1", "uas")) is False
        await pub.__aexit__(None, None, None)
    assert loop.time() - t0 < 5.0
    assert "capture/c1" in caplog.text


@pytest.mark.timeout(30)
async def test_publish_times_out_when_broker_stops_answering(caplog: pytest.LogCaptureFixture
                                                             ) -> None:
    async def mute_broker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(1024)  # CONNECT
        writer.write(b"\x20\x02\x00\x00")  # CONNACK accepted, then never a PUBACK
        await writer.drain()
        while await reader.read(1024):
            pass
        writer.close()

    server = await asyncio.start_server(mute_broker, "127.0.0.1", 0)
    async with server:
        port = server.sockets[0].getsockname()[1]
        cfg = MqttConfig(url=f"mqtt://127.0.0.1:{port}", rig_id="mute", connect_timeout_s=2)
        loop = asyncio.get_running_loop()
        with caplog.at_level(logging.WARNING, logger="hilrig.mqtt"):
            async with Publisher(cfg, publish_timeout_s=0.3) as pub:  # "online" times out
                t0 = loop.time()
                assert await pub.publish_capture("c1", {"samples": 1}) is False
                late = identification_result("c1", "uas")
                assert await pub.publish_result("c1", "uas", late) is False
                assert loop.time() - t0 < 1.5  # two calls, each bounded by the timeout
        assert "capture/c1" in caplog.text and "result/latest" in caplog.text


# --- validation -----------------------------------------------------------------------------

def test_parse_mqtt_url() -> None:
    assert parse_mqtt_url("mqtt://broker.lan") == ("broker.lan", 1883)
    assert parse_mqtt_url("mqtt://127.0.0.1:11883") == ("127.0.0.1", 11883)
    assert parse_mqtt_url("mqtt://[::1]:1884") == ("::1", 1884)
    assert parse_mqtt_url("mqtts://broker.lan") == ("broker.lan", 8883)  # TLS


@pytest.mark.parametrize("url", ["mqtts://user:pw@broker", "ws://broker:80", "tcp://h:1883",
                                 "127.0.0.1:1883", "mqtt://", "mqtt://h:99999",
                                 "mqtt://h:1883/topic", ""])
async def test_invalid_url_is_a_clear_error(url: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_mqtt_url(url)
    assert repr(url) in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ValueError, match="mqtt://host"):
        Publisher(MqttConfig(), url=url)
    with pytest.raises(ValueError, match="mqtt://host"):
        async with resolve_broker(MqttConfig(url=url)):
            pass


@pytest.mark.parametrize("bad", ["", "a/b", "c+", "#"])
def test_ids_must_be_topic_levels(bad: str) -> None:
    with pytest.raises(ValueError, match="topic level"):
        Topics("rig1").capture(bad)
    with pytest.raises(ValueError, match="topic level"):
        Topics("rig1").result("c1", bad)


async def test_payload_ids_must_agree_with_the_topic() -> None:
    pub = Publisher(MqttConfig(rig_id="rig1"))  # not entered: checks come first
    with pytest.raises(ValueError, match="capture_id 'c-2'"):
        await pub.publish_result("c-1", "uas", identification_result("c-2", "uas"))
    with pytest.raises(ValueError, match="method 'uas'"):
        await pub.publish_result("c-1", "grey-box", identification_result("c-1", "uas"))
    with pytest.raises(ValueError, match="schema"):
        await pub.publish_capture("c-1", {"schema": "other/1"})
    with pytest.raises(TypeError, match="object"):
        await pub.publish_capture("c-1", {"x": object()})


@pytest.mark.timeout(30)
async def test_monitor_topic_shows_only_what_matches_under_the_rig(mosquitto: str,
                                                                   rig_id: str) -> None:
    # a 13 s session printed 2,020 lines, mostly telemetry, with no way to choose
    cfg = MqttConfig(url=mosquitto, rig_id=rig_id)
    out = io.StringIO()
    async with Publisher(cfg, announce=False) as pub:
        task = asyncio.create_task(monitor(cfg, out=out, max_messages=1, timeout_s=20,
                                           raw=True, topics=["events"]))
        await asyncio.sleep(0.5)
        for level in ("telemetry", "capture/c-1", "events"):
            await pub.client.publish(f"hilrig/{rig_id}/{level}", b"{}", qos=1)
        assert await asyncio.wait_for(task, 10) == 1
    assert out.getvalue().split(" ", 1)[0] == f"hilrig/{rig_id}/events"


@pytest.mark.parametrize("pattern", ["/events", "result/#/x", "res+ult", ""])
def test_a_topic_pattern_that_is_no_filter_is_refused(pattern: str) -> None:
    from hilrig.daq.mqtt import topic_filters

    with pytest.raises(ValueError, match="not a topic filter under hilrig/r1/"):
        topic_filters("r1", [pattern])
    assert topic_filters("r1", ["result/+/shooting", "events"]) == [
        "hilrig/r1/result/+/shooting", "hilrig/r1/events"]


@pytest.mark.timeout(60)
async def test_monitor_waits_for_a_broker_that_goes_away_and_goes_on_when_it_is_back() -> None:
    # it ended with the broker: a session's embedded broker ends with the session
    from hilrig.daq.mqtt import EmbeddedBroker

    rig = f"gone-{uuid.uuid4().hex[:8]}"
    out, err = io.StringIO(), io.StringIO()
    async with EmbeddedBroker() as first:
        port, url = first.port, first.url
        cfg = MqttConfig(url=url, rig_id=rig, connect_timeout_s=2.0, keepalive_s=2)
        task = asyncio.create_task(monitor(cfg, out=out, err=err, max_messages=1,
                                           timeout_s=50, raw=True))
        await asyncio.sleep(1.0)
    async with asyncio.timeout(20):
        while "went away" not in err.getvalue():
            await asyncio.sleep(0.1)
    assert not task.done()
    async with EmbeddedBroker(port) as again:
        assert again.port == port
        async with asyncio.timeout(20):
            while "is back" not in err.getvalue():
                await asyncio.sleep(0.1)
        async with Publisher(cfg, announce=False) as pub:
            await pub.client.publish(f"hilrig/{rig}/events", b"{}", qos=1)
        assert await asyncio.wait_for(task, 10) == 1
    assert out.getvalue().startswith(f"hilrig/{rig}/events")
