"""The embedded broker's gate for browsers: only this service's page, with its role's topics."""

from __future__ import annotations

from pathlib import Path

import pytest

from hilrig.daq.mqtt import PageGate
from hilrig.daq.mqtt._page_gate import ROLE_RULES, filter_within, topic_matches

ACL = Path(__file__).resolve().parents[3] / "deploy" / "mosquitto" / "hilrig.acl"


def _deployed_rules(user: str) -> tuple[set[str], set[str]]:
    """(reads, writes) of one user of the deployed Mosquitto ACL."""
    reads: set[str] = set()
    writes: set[str] = set()
    current = None
    for line in ACL.read_text().splitlines():
        words = line.split("#", 1)[0].split() if not line.startswith("topic") else line.split()
        if not words:
            continue
        if words[0] == "user":
            current = words[1]
        elif words[0] == "topic" and current == user:
            access, topic = (words[1], words[2]) if len(words) == 3 else ("readwrite", words[1])
            if access in ("read", "readwrite"):
                reads.add(topic)
            if access in ("write", "readwrite"):
                writes.add(topic)
    return reads, writes


@pytest.mark.parametrize("role", ["dashboard", "operator"])
def test_a_page_role_has_exactly_the_deployed_acl_rules_of_that_user(role):
    reads, writes = ROLE_RULES[role]
    assert (set(reads), set(writes)) == _deployed_rules(role)


def test_topic_filters_match_as_a_broker_matches_them():
    assert topic_matches("hilrig/+/status", "hilrig/r1/status")
    assert topic_matches("hilrig/+/session/#", "hilrig/r1/session/S1/capture/c1")
    assert topic_matches("hilrig/+/session/#", "hilrig/r1/session")  # '#' includes the parent
    assert not topic_matches("hilrig/+/status", "hilrig/r1/status/x")
    assert not topic_matches("hilrig/+/cmd/#", "hilrig/r1/jobs/identify/w/c")


@pytest.mark.parametrize("sub, allowed", [
    ("hilrig/r1/status", True), ("hilrig/+/status", True), ("hilrig/r1/session/+", True),
    ("hilrig/r1/session/S1/capture/+", True), ("hilrig/r1/result/+/+/overlay", True),
    ("#", False), ("hilrig/#", False), ("hilrig/r1/#", False), ("hilrig/+/+", False),
    ("hilrig/r1/jobs/identify/+/+", False), ("hilrig/r1/cmd/#", False),
    ("hilrig-workers/ready/+", False), ("$SYS/#", False),
])
def test_a_dashboard_subscribes_only_within_what_it_may_read(sub, allowed):
    assert PageGate("dashboard").may("subscribe", sub) is allowed
    assert filter_within(sub, "#")  # everything lies within '#'


def test_an_operator_commands_and_reads_its_replies_a_dashboard_does_neither():
    op, dash = PageGate("operator"), PageGate("dashboard")
    assert op.may("publish", "hilrig/r1/cmd/session/stop")
    assert op.may("subscribe", "hilrig/r1/reply/hilrig-dash-01ab")
    assert not dash.may("publish", "hilrig/r1/cmd/session/stop")
    assert not dash.may("subscribe", "hilrig/r1/reply/+")
    for gate in (op, dash):  # nobody but the rig speaks for the rig
        assert not gate.may("publish", "hilrig/r1/status")
        assert not gate.may("publish", "hilrig/r1/result/c1/shooting")
        assert not gate.may("publish", "hilrig/r1/jobs/result/w/c1/shooting")
        assert not gate.may("receive", "hilrig/r1/jobs/identify/w/c1")
        assert not gate.may("delete", "hilrig/r1/status")  # an action it does not know


def test_only_the_page_of_this_service_passes_the_handshake_and_the_login():
    gate = PageGate("operator")
    gate.serve_from("http://127.0.0.1:8080")
    assert gate.refuses_handshake("http://127.0.0.1:8080", "127.0.0.1:9001") is None
    assert gate.refuses_handshake("HTTP://127.0.0.1:8080/", "localhost:9001") is None
    assert "origin" in gate.refuses_handshake("http://evil.example:18950", "127.0.0.1:9001")
    assert "origin" in gate.refuses_handshake(None, "127.0.0.1:9001")
    assert "origin" in gate.refuses_handshake("http://127.0.0.1:8081", "127.0.0.1:9001")
    # a name that resolves to 127.0.0.1 (DNS rebinding) is not a loopback address
    assert "host" in gate.refuses_handshake("http://127.0.0.1:8080", "evil.example:9001")
    gate.withdraw("http://127.0.0.1:8080")
    assert gate.refuses_handshake("http://127.0.0.1:8080", "127.0.0.1:9001") is not None

    login = gate.credentials
    assert login["username"] == "operator" and len(login["password"]) >= 32
    assert gate.admits("hilrig-dash-0a1b", login["username"], login["password"])
    assert not gate.admits("hilrig-dash-0a1b", "operator", "guess")
    assert not gate.admits("hilrig-dash-0a1b", None, None)
    assert not gate.admits("hilrig-dash-0a1b", "dashboard", login["password"])  # another role
    # a page may not take over the service's connection by its client id
    assert not gate.admits("hilrig-rig1-svc", login["username"], login["password"])
    assert PageGate().token != PageGate().token  # one per broker start
