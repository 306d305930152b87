"""The MQTT contract (docs/mqtt.md): topics, payloads, one connection, the durable courier,
commands in and replies out, identification jobs for workers, the embedded broker.

A run never awaits the broker: it hands messages to the `Courier`, which owns one
connection at a time, reconnects, and keeps what must not be lost in the outbox.
"""

from ._bounds import ConnectionBound
from ._broker import (
    client_options,
    parse_mqtt_url,
    probe_broker,
    resolve_broker,
    uses_tls,
)
from ._client_version import connected, enter_client
from ._command_client import send_command
from ._commands import (
    COMMANDS,
    CommandRefused,
    CommandRouter,
    IdentifyRequest,
    Request,
    SessionStartRequest,
)
from ._courier import Courier
from ._embedded_broker import WEBSOCKETS, EmbeddedBroker
from ._jobs import (
    MAX_RESULT_BYTES,
    Job,
    JobPayload,
    PendingJobs,
    WorkerPayload,
    result_from_message,
)
from ._messages import Message, MessageBuilder
from ._monitor import monitor, topic_filters
from ._page_gate import PageGate, Role, loopback_host
from ._payloads import (
    PAYLOADS,
    CampaignPayload,
    CapturePayload,
    CaptureRecordPayload,
    CommandReply,
    Envelope,
    EventPayload,
    OverlayPayload,
    ResultPayload,
    SessionPayload,
    State,
    StatusPayload,
    TelemetryPayload,
    dump_json,
    jsonable,
)
from ._publisher import Publisher
from ._topics import (
    ROOT,
    WORKERS_READY,
    Topics,
    check_level,
    check_worker,
    worker_id,
    worker_jobs,
    worker_ready,
)

__all__ = [
    "COMMANDS", "MAX_RESULT_BYTES", "PAYLOADS", "ROOT", "WEBSOCKETS", "WORKERS_READY",
    "WorkerPayload",
    "CaptureRecordPayload", "ConnectionBound", "OverlayPayload", "check_worker",
    "loopback_host", "worker_id", "worker_jobs",
    "worker_ready", "CapturePayload", "CommandRefused", "CommandReply", "CommandRouter",
    "Courier", "EmbeddedBroker", "Envelope", "EventPayload", "IdentifyRequest", "Job",
    "JobPayload", "Message", "MessageBuilder", "PageGate", "PendingJobs", "Publisher",
    "Request", "Role",
    "CampaignPayload", "ResultPayload", "SessionPayload", "SessionStartRequest", "State",
    "StatusPayload",
    "TelemetryPayload", "Topics", "check_level", "client_options", "dump_json", "jsonable",
    "monitor", "parse_mqtt_url", "probe_broker", "resolve_broker", "result_from_message",
    "send_command", "topic_filters", "uses_tls", "connected", "enter_client",
]
