"""A real Mosquitto started from deploy/mosquitto/ (users, ACL, TLS, websockets), shared
by the security tests and the dashboard's browser tests.

The broker's config, ACL and the way users are made are the deployed ones; only paths
and ports are the test's own.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "mosquitto"
USERS = {"hilrig": "s3rvice-pw", "worker1": "w0rker-pw", "worker2": "w0rker2-pw",
         "operator": "0perator-pw", "dashboard": "dashb0ard-pw"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _certs(d: Path) -> None:
    """A CA and a server certificate for 127.0.0.1, made with openssl."""
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True, timeout=60)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
        "-keyout", "ca.key", "-out", "ca.crt")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
        "server.key", "-out", "server.csr")
    (d / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-out", "server.crt", "-extfile", "san.ext")


@dataclass
class SecuredBroker:
    """Mosquitto from the deployed config: `plain` (127.0.0.1), `tls` and `ws` (wss) ports."""

    dir: Path
    plain: int = field(default_factory=free_port)
    tls: int = field(default_factory=free_port)
    ws: int = field(default_factory=free_port)
    proc: subprocess.Popen[str] | None = None
    users: dict[str, str] = field(default_factory=lambda: dict(USERS))

    def __getitem__(self, key: str) -> object:  # the security tests' broker["plain"]
        return getattr(self, key)

    def write_config(self) -> None:
        passwd = self.dir / "hilrig.passwd"
        passwd.touch()
        for user, pw in USERS.items():  # as deploy/mosquitto/hilrig.conf says to make them
            subprocess.run(["mosquitto_passwd", "-b", str(passwd), user, pw], check=True,
                           timeout=30)
        conf = (DEPLOY / "hilrig.conf").read_text()
        conf = (conf.replace("/etc/mosquitto/hilrig.passwd", str(passwd))
                .replace("/etc/mosquitto/hilrig.acl", str(DEPLOY / "hilrig.acl"))
                .replace("/etc/mosquitto/certs/", f"{self.dir}/")
                .replace("/var/lib/mosquitto/", f"{self.dir}/")
                .replace("listener 1883 127.0.0.1", f"listener {self.plain} 127.0.0.1")
                .replace("listener 8883", f"listener {self.tls} 127.0.0.1")
                .replace("listener 8081", f"listener {self.ws}"))
        if os.geteuid() == 0:  # as root Mosquitto would drop to its own user, who cannot read
            conf += "\nuser root\n"  # the test's private files; a deployment keeps the default
        (self.dir / "mosquitto.conf").write_text(conf)

    def start(self) -> None:
        exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        self.proc = subprocess.Popen([exe, "-c", str(self.dir / "mosquitto.conf")],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if all(_listening(p) for p in (self.plain, self.tls, self.ws)):
                return
            if self.proc.poll() is not None:
                out = self.proc.stdout.read() if self.proc.stdout else ""
                pytest.fail(f"the deployed Mosquitto config does not start: {out}")
            time.sleep(0.05)
        pytest.fail("the deployed Mosquitto did not open its listeners within 10 s")

    def kill(self) -> None:
        """A crash: SIGKILL, so nothing retained is saved to its persistence file."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def secured_broker(tmp_path_factory):
    for tool in ("mosquitto", "mosquitto_passwd", "openssl"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            pytest.fail(f"these tests need {tool} (Debian: mosquitto, openssl)")
    d = tmp_path_factory.mktemp("mosquitto")
    _certs(d)
    broker = SecuredBroker(d)
    broker.write_config()
    broker.start()
    yield broker
    broker.stop()
