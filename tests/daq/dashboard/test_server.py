"""The dashboard's page is served from the package: its files, config.json, nothing else."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from email.message import Message

import pytest

from hilrig.daq.config import load_settings
from hilrig.daq.dashboard import STATIC_DIR, DashboardServer, page_config, page_gate
from hilrig.daq.mqtt import EmbeddedBroker


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, method: str = "GET") -> tuple[int, Message, bytes]:
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


@pytest.fixture
def server():
    settings = load_settings(None, mqtt={"rig_id": "dash-rig"})
    with DashboardServer(page_config(settings), "127.0.0.1", 0) as s:
        yield s


def test_the_page_and_every_file_it_loads_are_served_with_a_strict_policy(server):
    status, headers, body = _get(server.url)
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    policy = headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "connect-src 'self' ws: wss:" in policy
    assert headers["X-Content-Type-Options"] == "nosniff"
    page = body.decode()
    assets = re.findall(r'(?:src|href)="([^"#:]+)"', page)
    assert any(a.endswith(".js") for a in assets) and any(a.endswith(".css") for a in assets)
    for asset in assets:  # nothing from a CDN: every file the page names is ours
        status, headers, _ = _get(server.url + asset.removeprefix("./").lstrip("/"))
        assert status == 200, asset
        if asset.endswith(".js"):  # a module script needs a JavaScript type
            assert headers["Content-Type"].startswith("text/javascript"), asset


def test_config_json_tells_the_page_its_rig_and_broker_and_no_secret():
    settings = load_settings(None, mqtt={"rig_id": "r2", "username": "hilrig",
                                         "password": "s3cret", "tls": True})
    with DashboardServer(page_config(settings), "127.0.0.1", 0) as s:
        status, _, body = _get(s.url + "config.json")
    config = json.loads(body)
    assert status == 200 and config["rig_id"] == "r2" and config["prefix"] == "hilrig/r2"
    # a secured broker: wss on the page's own host, and the page asks for a user
    assert config["broker"] == {"scheme": "wss", "host": None, "port": 8081, "path": "/",
                                "login": True, "protocol": None, "username": None,
                                "password": None}
    assert b"s3cret" not in body and b"hilrig\"" not in body.replace(b"hilrig/", b"")


def test_a_broker_with_users_is_reached_over_wss_as_the_shipped_mosquitto_serves_it():
    # deploy/mosquitto/hilrig.conf: users, and websockets on 8081 with TLS only; the page
    # never sends a password in clear, even when the service itself talks plain MQTT on
    # the lab PC's loopback
    settings = load_settings(None, mqtt={"username": "hilrig", "password": "pw"})
    broker = page_config(settings).broker
    assert (broker.scheme, broker.port, broker.login) == ("wss", 8081, True)
    anonymous = page_config(load_settings(None)).broker
    assert (anonymous.scheme, anonymous.port, anonymous.login) == ("ws", 9001, False)


async def test_the_embedded_broker_opens_websockets_on_localhost_for_the_page():
    async with EmbeddedBroker(port=None) as plain:  # not asked: no websocket to reach
        assert plain.ws_port is None
    settings = load_settings(None)
    async with EmbeddedBroker(port=None, websockets=True, ws_port=None) as broker:
        broker_cfg = page_config(settings, broker.url).broker
        assert broker.ws_url.startswith("ws://127.0.0.1:")
        assert (broker_cfg.scheme, broker_cfg.host, broker_cfg.port, broker_cfg.login,
                broker_cfg.protocol) == ("ws", "127.0.0.1", broker.ws_port, False, 4)


@pytest.mark.parametrize("path", ["../pyproject.toml", "%2e%2e/%2e%2e/pyproject.toml",
                                  "js/", "vendor/", "nothing.js"])
def test_nothing_outside_the_page_files_is_served(server, path):
    status, _, body = _get(server.url + path)
    assert status == 404 and b"[project]" not in body


def test_only_reading_is_allowed(server):
    for method in ("POST", "DELETE", "PUT"):
        status, headers, _ = _get(server.url, method=method)
        assert status == 405 and headers["Allow"] == "GET, HEAD", method
    status, headers, body = _get(server.url, method="HEAD")
    assert status == 200 and int(headers["Content-Length"]) > 0 and body == b""


def _raw(server, request: bytes) -> bytes:
    """What the server answers to `request`, sent as it is, until it closes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as s:
        s.sendall(request)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize("request_bytes, status", [
    (b"GET /index.html%00.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", b"404"),
    (b"GET /%2e%2e%2f%2e%2e%2fpyproject.toml HTTP/1.1\r\nConnection: close\r\n\r\n", b"404"),
    (b"GET / HTTP/1.1\r\nX: " + b"a" * 20_000 + b"\r\n\r\n", b"431"),
    (b"GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", b"400"),
    (b"NONSENSE\r\n\r\n", b"400"),
    (b"GET / HTTP/2.0\r\n\r\n", b"505"),
])
def test_a_malformed_or_hostile_request_gets_a_status_and_the_connection_closed(
        server, request_bytes, status):
    answer = _raw(server, request_bytes)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:100]
    assert b"[project]" not in answer


def test_an_idle_connection_is_closed_and_one_beyond_the_bound_is_turned_away():
    settings = load_settings(None)
    with DashboardServer(page_config(settings), "127.0.0.1", 0, max_connections=3,
                         idle_timeout_s=0.5) as s:
        idle = [socket.create_connection(("127.0.0.1", s.port), timeout=5) for _ in range(3)]
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", s.port), timeout=5) as extra:
            assert extra.recv(100).startswith(b"HTTP/1.1 503")  # at once, not after a wait
        for conn in idle:  # closed by the server after its idle timeout: recv sees the end
            assert conn.recv(100) == b""
            conn.close()
        assert _get(s.url)[0] == 200  # served again once the idle ones are gone
        assert s.refused == 1


async def test_config_json_gives_the_embedded_brokers_login_to_a_page_of_this_machine_only():
    settings = load_settings(None)
    async with EmbeddedBroker(port=None, websockets=True, ws_port=None) as broker:
        gate = page_gate(broker.url)
        assert gate is broker.gate
        with DashboardServer(page_config(settings, broker.url), "127.0.0.1", 0,
                             gate=gate) as s:
            for host in (f"127.0.0.1:{s.port}", f"localhost:{s.port}"):
                answer = _raw(s, f"GET /config.json HTTP/1.1\r\nHost: {host}\r\n"
                                 "Connection: close\r\n\r\n".encode())
                body = json.loads(answer.split(b"\r\n\r\n", 1)[1])
                assert body["broker"]["username"] == "operator"
                assert body["broker"]["password"] == gate.token
            # a name resolving to 127.0.0.1 (DNS rebinding), or the lab network: no login
            for host in (f"evil.example:{s.port}", f"192.168.1.20:{s.port}", ""):
                answer = _raw(s, f"GET /config.json HTTP/1.1\r\nHost: {host}\r\n"
                                 "Connection: close\r\n\r\n".encode())
                assert gate.token.encode() not in answer
                assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["broker"]["username"] \
                    is None
            assert gate.refuses_handshake(f"http://127.0.0.1:{s.port}", "127.0.0.1:1") is None
        # the server gone, its page's origin is no longer let in
        assert gate.refuses_handshake(f"http://127.0.0.1:{s.port}", "127.0.0.1:1") is not None


def test_vendored_libraries_carry_their_licences_and_match_their_recorded_digests():
    vendor = STATIC_DIR / "vendor"
    versions = (vendor / "VERSIONS.txt").read_text()
    recorded = [line.split()[-2:] for line in versions.splitlines()
                if line.strip() and not line.startswith("#")]  # package version file sha256
    assert recorded, "VERSIONS.txt lists no file"
    for name, digest in recorded:
        assert hashlib.sha256((vendor / name).read_bytes()).hexdigest() == digest, name
    licences = sorted(p.name for p in vendor.iterdir() if "LICENSE" in p.name.upper())
    assert len(licences) >= 2, licences  # MQTT.js and uPlot


def test_hilrig_dashboard_serves_the_page_and_says_where(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "hilrig", "dashboard", "--http",
                             "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line
        assert _get(url.group(0))[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_hilrig_dashboard_says_when_nothing_answers_at_the_brokers_websockets(tmp_path):
    # the page said `broker connection lost since ...` though it never connected, naming
    # no url; the command said nothing
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # nothing listens once the socket is closed
    env = dict(os.environ, HILRIG_DASHBOARD__WS_URL=f"ws://127.0.0.1:{closed}")
    proc = subprocess.Popen([sys.executable, "-m", "hilrig", "dashboard", "--http",
                             "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path, env=env)
    try:
        proc.stdout.readline()
        warning = proc.stdout.readline()
        assert f"nothing answers at ws://127.0.0.1:{closed}/" in warning, warning
        assert "refused" in warning and "keeps trying" in warning
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_a_bad_http_address_is_one_line_naming_it(tmp_path):
    run = subprocess.run([sys.executable, "-m", "hilrig", "dashboard", "--http", "8080"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and "'8080'" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.fault(injected="resources: 1,100 idle connections held open to the dashboard "
                            "of `hilrig serve` under prlimit --nofile=1024, then a "
                            "10-capture session started over MQTT",
                   expected="the server holds at most its bound and turns the rest away; "
                            "every capture written and identified, no 'Too many open files'")
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_idle_connections_cannot_take_the_descriptors_captures_need(tmp_path):
    import json
    import os
    import resource
    import shutil
    import threading
    import uuid

    prlimit = shutil.which("prlimit")
    assert prlimit, "this test needs prlimit (util-linux)"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1400:  # the test itself holds 1,100 connections
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    port = free_port()
    rig = f"fd-{uuid.uuid4().hex[:6]}"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "archive"),
               HILRIG_MQTT__URL="mqtt://127.0.0.1:1883", HILRIG_MQTT__RIG_ID=rig)
    proc = subprocess.Popen([prlimit, "--nofile=1024:1024", sys.executable, "-m", "hilrig",
                             "serve", "--sim", "--unpaced", "--http", f"127.0.0.1:{port}"],
                            env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True).start()
    held: list[socket.socket] = []
    opened: list[int] = []  # every connection the server took (held, or closed by it)
    stop = threading.Event()

    def hold_open() -> None:
        """Keep 1,100 connections open: as fast as the server accepts them, and those it
        closes (at its bound, or idle) opened again."""
        import select

        while not stop.is_set():
            poller = select.poll()
            for s in held:
                poller.register(s, select.POLLIN)
            closed = {fd for fd, _ in poller.poll(0)}  # readable: EOF, the server hung up
            for s in [s for s in held if s.fileno() in closed]:
                held.remove(s)
                s.close()
            while len(held) < 1100 and not stop.is_set():
                try:
                    held.append(socket.create_connection(("127.0.0.1", port), timeout=2))
                    opened.append(1)
                except OSError:  # its backlog is full: a moment, then on
                    stop.wait(0.02)
                    break
            stop.wait(0.05)

    def wait_for(pattern: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not any(pattern in line for line in lines):
            assert time.monotonic() < deadline and proc.poll() is None, "".join(lines)[-3000:]
            time.sleep(0.1)

    try:
        wait_for("idle; rig", 60)
        holder = threading.Thread(target=hold_open, daemon=True)
        holder.start()
        deadline = time.monotonic() + 60  # 1,100 taken (held, or turned away) first
        while len(opened) < 1100:
            assert time.monotonic() < deadline, f"the server took only {len(opened)}"
            time.sleep(0.1)
        plan = {"plan": {"captures": 10, "paced": False, "poses_deg": [[0.0, 30.0]],
                         "methods": ["regression"]}}
        cmd = subprocess.run([sys.executable, "-m", "hilrig", "cmd", "session/start",
                              json.dumps(plan), "--timeout", "30"], env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
        assert cmd.returncode == 0, cmd.stdout + cmd.stderr
        wait_for(": over; idle", 300)
    finally:
        stop.set()
        for s in held:
            s.close()
        proc.terminate()
        proc.wait(timeout=30)
    text = "".join(lines)
    assert "Too many open files" not in text and "Errno 24" not in text, text[-3000:]
    assert len(text.splitlines()) < 400, text[-3000:]  # no flood of accept errors
    from hilrig.daq.storage import Catalog

    with Catalog.open(tmp_path / "archive", create=False) as cat:
        sid = cat.latest_session().session_id
        caps = cat.captures(sid)
        assert len(caps) == 10 and {c.status for c in caps} == {"done"}


@pytest.mark.timeout(240)
def test_session_start_linger_keeps_the_page_after_the_session_until_ctrl_c(tmp_path,
                                                                           wait_until):
    # the page and the embedded broker's retained state ended with the session: a laptop
    # user came back to "connection refused"
    import signal
    import threading
    import uuid

    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "archive"),
               HILRIG_MQTT__URL=f"mqtt://127.0.0.1:{free_port()}",  # no broker: embedded
               HILRIG_MQTT__RIG_ID=f"linger-{uuid.uuid4().hex[:6]}")
    http = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen([sys.executable, "-m", "hilrig", "session", "start", "--sim",
                             "--captures", "1", "--unpaced", "--http", http, "--linger"],
                            env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True).start()
    try:
        wait_until(lambda: any("stay until Ctrl-C" in ln for ln in lines), 180,
                   "the session's end")
        said = next(ln for ln in lines if "stay until Ctrl-C" in ln)
        assert "is done" in said, lines
        time.sleep(1.0)
        assert proc.poll() is None  # still serving
        assert _get(f"http://{http}/")[0] == 200
        assert _get(f"http://{http}/config.json")[0] == 200
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    text = "".join(lines)
    assert "Traceback" not in text and "continues it" not in text, text  # not "interrupted"


def test_linger_without_the_page_is_one_line(tmp_path):
    run = subprocess.run([sys.executable, "-m", "hilrig", "session", "start", "--sim",
                          "--captures", "1", "--linger"], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60,
                         env=dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "a")))
    assert run.returncode == 2 and "--linger" in run.stderr and "--http" in run.stderr
    assert not (tmp_path / "a").exists()  # no session made
