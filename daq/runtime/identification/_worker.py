"""`hilrig worker`: identification only, for any rig on the broker (see mqtt/_jobs.py).

Any number of workers, on any machines, use the same broker. A worker is named
``<principal>/<instance>``: its broker user (mqtt.username; ``anonymous`` on a broker
without users) and its host and process. An idle worker says so on
``hilrig-workers/ready/<worker>`` (retained; its last will empties it), and rigs send it
jobs on ``hilrig/<rig>/jobs/identify/<worker>/<capture_id>``. It takes one job at a time
(MQTT v5 receive maximum 1, acknowledged only when its results are sent; on a 3.1.1-only
broker, such as another hilrig process's embedded one, acknowledged on receipt and held
to one because a rig sends a job only to a worker that says it is ready, which it says
again only once the job is answered), identifies the
capture with each method in a process of its own, and sends every result back to the rig
on ``hilrig/<rig_id>/jobs/result/<worker>/<capture_id>/<method>`` (QoS 1) with the job's id; the
rig keeps it and publishes it on ``result/`` as its own. A worker that dies mid-job loses
nothing: the rig sends the job to another after its timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from hilrig.identify import METHODS, SOFTWARE_VERSION, IdentificationResult

from ...config import MqttConfig
from ...mqtt import (
    JobPayload,
    MessageBuilder,
    WorkerPayload,
    client_options,
    connected,
    parse_mqtt_url,
    worker_id,
    worker_jobs,
    worker_ready,
)
from ._local import LocalExecutor
from ._task import IdentifyTask

__all__ = ["run_worker"]

log = logging.getLogger("hilrig.worker")


async def run_worker(cfg: MqttConfig, *, url: str | None = None, max_jobs: int | None = None,
                     say: Callable[[str], None] = print) -> int:
    """Take and answer jobs until cancelled (or max_jobs done); returns the jobs done."""
    host, port = parse_mqtt_url(url or cfg.url)
    # the principal is the broker user: the deployed ACL lets it write under that name only
    name = worker_id(cfg.username or "anonymous",
                     re.sub(r"[/+#\x00]", "-", f"{socket.gethostname()}-{os.getpid()}"))
    connect = Properties(PacketTypes.CONNECT)
    connect.ReceiveMaximum = 1  # one job in flight: the others stay with the broker
    ready = WorkerPayload(worker=name).to_json()
    gone = aiomqtt.Will(worker_ready(name), b"", qos=1, retain=True)  # empties "ready"

    def make(version: aiomqtt.ProtocolVersion) -> aiomqtt.Client:
        v5 = version is aiomqtt.ProtocolVersion.V5
        made = aiomqtt.Client(host, port, identifier=f"hilrig-worker-{name}", protocol=version,
                              properties=connect if v5 else None, will=gone,
                              keepalive=cfg.keepalive_s, timeout=cfg.connect_timeout_s,
                              **client_options(cfg, url))
        # v5: acknowledged when answered, not on receipt (paho's manual ack; aiomqtt < 3
        # keeps its paho client as _client). 3.1.1 has no receive maximum to hold the rest
        # back, and the embedded broker drops a delivery unacknowledged after 5 s (and
        # logs an error): there, on receipt; a job lost with the worker is the rig's to
        # send again after its timeout, as it is for a v5 worker that dies
        made._client.manual_ack_set(v5)  # noqa: SLF001
        return made

    done = 0
    pool = LocalExecutor()
    pool.start()
    try:
        async with connected(url or cfg.url, make) as (client, version):
            manual = version is aiomqtt.ProtocolVersion.V5

            def ack(mid: int) -> None:
                if manual:
                    client._client.ack(mid, 1)  # noqa: SLF001

            await client.subscribe(worker_jobs(name), qos=1)
            await client.publish(worker_ready(name), ready, qos=1, retain=True)
            try:
                say(f"hilrig worker {name}: waiting for jobs on {host}:{port} "
                    f"({worker_jobs(name)})")
                async for message in client.messages:
                    try:
                        job = JobPayload.model_validate_json(bytes(message.payload))
                        data = job.file_bytes()
                    except ValueError as exc:
                        first = str(exc).splitlines()[0]
                        say(f"worker: bad job on {message.topic.value}: {first}")
                        ack(message.mid)  # never retried
                        continue
                    say(f"job {job.capture_id} (attempt {job.attempt}): identifying "
                        f"{', '.join(job.methods)}")
                    with tempfile.TemporaryDirectory(prefix="hilrig-job-") as tmp:
                        path = Path(tmp) / "capture.h5"
                        path.write_bytes(data)
                        for method in job.methods:
                            if method not in METHODS:
                                say(f"job {job.capture_id}: unknown method {method!r}, skipped")
                                continue
                            result = (await pool.submit(IdentifyTask.of_file(
                                job.capture_id, path, method))).result_or_raise()
                            await _publish(client, job, result, name)
                            say(f"job {job.capture_id}: {method} done "
                                f"({result.compute_seconds:.2f} s)")
                    ack(message.mid)
                    done += 1
                    if max_jobs is not None and done >= max_jobs:
                        break
                    await client.publish(worker_ready(name), ready, qos=1, retain=True)
            finally:
                # leaving, however (the end of max_jobs, Ctrl-C, a service manager's stop):
                # a clean disconnect sends no last will, so "ready" is emptied here, or rigs
                # would keep sending jobs to a worker that is gone
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(client.publish(
                        worker_ready(name), b"", qos=1, retain=True)), 2.0)
    except aiomqtt.MqttError as exc:
        raise ConnectionError(f"worker: MQTT broker at {host}:{port}: {exc}") from None
    finally:
        pool.shutdown()
    return done


async def _publish(client: aiomqtt.Client, job: JobPayload, result: IdentificationResult,
                   worker: str) -> None:
    """The result to the rig that sent the job (jobs/result/...), with the job's id; the
    rig publishes it as its own result once it has kept it (a worker speaks to the rig,
    never for it)."""
    messages = MessageBuilder(job.rig_id, SOFTWARE_VERSION)
    msg_id = f"result/{job.capture_id}/{result.method}/job/{job.job_id}"
    _, payload = messages.result(job.capture_id, result.method, result,
                                 with_response=job.with_response, msg_id=msg_id,
                                 job_id=job.job_id, worker=worker)
    await client.publish(messages.topics.job_result(worker, job.capture_id, result.method),
                         payload, qos=1)
