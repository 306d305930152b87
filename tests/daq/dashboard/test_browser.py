"""The dashboard in a real browser: headless Chromium (Debian's) against the deployed
Mosquitto (users, ACL, wss listener) during a 3-capture simulated session.

The page is a plain MQTT subscriber over WebSockets; the service serves it (--http) and
publishes the contract. What a lab engineer relies on: the live angles move, every
capture's outcome shows, each result has its intervals, the trend has a point per
capture, a broker crash loses nothing on the page, a read-only user cannot command.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# as root, without a sandbox; nothing may reach out (this machine has no network)
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--enable-precise-memory-info",
                 # a hostile site for the cross-origin test, on this machine
                 "--host-resolver-rules=MAP evil.example 127.0.0.1"]
CAPTURES = 3


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("the browser tests need Chromium (Debian: chromium); .ci/run installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class Service:
    """A `hilrig` command as a subprocess for the rig `rig` on the broker, its output
    collected: the service user's credentials, the page told the broker's wss listener."""

    def __init__(self, broker, tmp: Path, rig: str, *args: str, **settings: str) -> None:
        env = dict(os.environ, **settings, HILRIG_STORAGE__DIRECTORY=str(tmp / "archive"),
                   HILRIG_MQTT__RIG_ID=rig, HILRIG_MQTT__URL=f"mqtt://127.0.0.1:{broker.plain}",
                   HILRIG_MQTT__USERNAME="hilrig", HILRIG_MQTT__PASSWORD=broker.users["hilrig"],
                   HILRIG_DASHBOARD__WS_URL=f"wss://127.0.0.1:{broker.ws}/")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hilrig", *args], env=env, cwd=tmp,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip())

    def wait_for(self, pattern: str, timeout_s: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in self.lines:
                if m := re.search(pattern, line):
                    return m
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        raise AssertionError(f"the service never said {pattern!r}:\n" + "\n".join(self.lines))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def _open(browser, url: str, user: str, password: str, errors: list[str]):
    """A new page logged in as `user`; console errors and page errors go to `errors`."""
    context = browser.new_context(ignore_https_errors=True,  # the test's own CA
                                  viewport={"width": 1400, "height": 1800})
    page = context.new_page()
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error"
            else None)
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.goto(url)
    page.fill("#login-username", user)
    page.fill("#login-password", password)
    page.click("#login-submit")
    page.wait_for_selector('#broker-state[data-state="connected"]', timeout=15_000)
    return page


def _rows(page) -> dict[str, str]:
    return page.eval_on_selector_all(
        "#captures tr[data-capture-id]",
        "rows => Object.fromEntries(rows.map(r => [r.dataset.captureId, r.dataset.status]))")


def _confirm(page, button: str, wait_until) -> str:
    """Click an operator button, confirm, and return the one-line reply the page shows."""
    before = page.inner_text("#command-line")
    page.click(button)
    page.click("#confirm-yes")
    def reply() -> str | None:
        text = page.inner_text("#command-line")
        return text if text != before and "waiting" not in text else None

    return wait_until(reply, 15, f"the reply to {button}")


@pytest.mark.timeout(400)
def test_a_session_watched_in_a_browser_through_a_broker_crash(secured_broker, browser,
                                                               tmp_path, wait_until):
    from .test_server import free_port

    broker, users = secured_broker, secured_broker.users
    rig = f"web-{uuid.uuid4().hex[:6]}"
    # paced (the live angles move in real time); small swings, each capture ended after
    # 8 s (a capture the trigger's limit ends is a capture like any other): about 10 s a
    # capture; the session serves the page, and so does a dashboard of its own for the lab
    # (it outlives the session)
    service = Service(broker, tmp_path, rig, "session", "start", "--sim", "--captures",
                      str(CAPTURES), "--pose", "0", "30", "--name", "browser test", "--http",
                      f"127.0.0.1:{free_port()}", HILRIG_TRIGGER__MAX_DURATION_S="8")
    dashboard = Service(broker, tmp_path, rig, "dashboard", "--http", f"127.0.0.1:{free_port()}")
    errors: list[str] = []
    try:
        url = service.wait_for(r"dashboard: (http://\S+)", 60).group(1)
        lab_url = dashboard.wait_for(r"dashboard: (http://\S+)", 60).group(1)
        page = _open(browser, url, "operator", users["operator"], errors)
        page.wait_for_selector('#role[data-role="operator"]', timeout=20_000)

        # the live angles move: telemetry arrives and the arm's angle changes
        first = int(page.get_attribute("#live", "data-samples") or 0)
        thetas = set()
        wait_until(lambda: thetas.add(page.get_attribute("#live", "data-theta0"))
                   or len(thetas) > 3, 60, "the arm's angle to change")
        assert int(page.get_attribute("#live", "data-samples") or 0) > first

        # capture 1 done: the broker crashes, and comes back having kept nothing retained
        wait_until(lambda: "done" in _rows(page).values(), 120, "capture 1 to be done")
        n_errors = len(errors)
        published = page.get_attribute("#service-state", "title")
        broker.kill()
        page.wait_for_selector('#broker-state:not([data-state="connected"])', timeout=20_000)
        time.sleep(1.0)
        broker.start()
        page.wait_for_selector('#broker-state[data-state="connected"]', timeout=30_000)
        # Chromium itself logs each refused websocket while the broker is away: those lines,
        # and only those, are expected
        assert all("WebSocket connection to" in e for e in errors[n_errors:]), errors[n_errors:]
        del errors[n_errors:]
        # the page is back before the service: commands wait for its fresh status, and for
        # the page's probe to find the service answering (on a loaded machine the page's
        # first probe may go unanswered while the service is still reconnecting)
        wait_until(lambda: page.get_attribute("#service-state", "title") != published, 60,
                   "the service's status after the broker came back")
        page.wait_for_selector('#role[data-role="operator"]', timeout=30_000)

        # the operator pauses and resumes the session: each reply in one line
        for verb in ("session/pause", "session/resume"):
            reply = _confirm(page, f"#controls [data-verb='{verb}']", wait_until)
            assert re.search(rf"{verb}\W.*ok", reply), reply

        service.wait_for(r"session \S+: done", 240)
        wait_until(lambda: list(_rows(page).values()) == ["done"] * CAPTURES, 60,
                   "every capture done on the page")

        # a page opened after the crash reads the whole session from retained messages
        fresh_errors: list[str] = []
        fresh = _open(browser, lab_url, "operator", users["operator"], fresh_errors)
        rows = wait_until(lambda: len(_rows(fresh)) == CAPTURES and _rows(fresh), 30,
                          "the fresh page to show every capture")
        assert list(rows.values()) == ["done"] * CAPTURES
        for capture_id in rows:  # each result with its parameters' intervals, and overlay
            fresh.click(f'#captures tr[data-capture-id="{capture_id}"]')
            fresh.wait_for_selector(f'#capture-detail[data-capture-id="{capture_id}"]')
            mu = fresh.wait_for_selector('#capture-detail tr[data-parameter="mu_d1"]')
            assert re.search(r"\[\s*[0-9.e-]+\s*,\s*[0-9.e-]+\s*\]", mu.inner_text())
            assert fresh.locator("#capture-detail tr.not-identifiable").count() >= 2  # Fn_t
            wait_until(lambda: int(fresh.get_attribute("#overlay-plot", "data-points") or 0)
                       > 200, 20, "the overlay")
        points = fresh.eval_on_selector_all(
            ".trend-plot", "ps => Object.fromEntries(ps.map(p => [p.dataset.parameter, "
                           "Number(p.dataset.points)]))")
        assert {"mu_d0", "mu_v0", "mu_d1", "mu_v1"} <= set(points)
        assert set(points.values()) == {CAPTURES}, points
        # the session put together as it ended: its verdict in words above the trend, the
        # session's estimate a band behind each friction plot's points
        fresh.wait_for_selector("#trend-verdict:not([hidden])", timeout=30_000)
        verdict = fresh.inner_text("#trend-verdict")
        assert re.match(rf"Session: (no drift|drift|captures disagree).* {CAPTURES} captures",
                        verdict), verdict
        bands = fresh.eval_on_selector_all(
            ".trend-plot", "ps => Object.fromEntries(ps.map(p => [p.dataset.parameter, "
                           "p.dataset.band]))")
        assert all(bands[n] in ("flat", "trend") for n in ("mu_d0", "mu_v0", "mu_d1", "mu_v1")), \
            bands
        # a trend's band is the session's line through the level's values: 3.6 %/h of the
        # level at the mean time is +36 % ten hours after it, -36 % ten hours before
        scale = fresh.evaluate(
            "async () => { const m = await import('./js/trend.js'); const b = {perHour: 0.036, "
            "mid: 0}; return [m.bandScale(b, 36000), m.bandScale(b, -36000), "
            "m.bandScale({perHour: 0, mid: 0}, 36000)]; }")
        assert scale == pytest.approx([1.36, 0.64, 1.0])
        # the trend leaves as a CSV (a row per capture and parameter) and as a PNG
        with fresh.expect_download() as csv_download:
            fresh.click("#export-csv")
        table = list(csv.DictReader(open(csv_download.value.path(), newline="")))
        assert {r["capture_id"] for r in table} == set(rows)
        mu_d1 = [r for r in table if r["parameter"] == "mu_d1"]
        assert len(mu_d1) == CAPTURES
        assert all(float(r["ci_low"]) < float(r["value"]) < float(r["ci_high"]) for r in mu_d1)
        with fresh.expect_download() as png_download:
            fresh.click("#export-png")
        assert Path(png_download.value.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        fresh.evaluate("window.scrollTo(0, 0)")
        fresh.screenshot(path=str(tmp_path / "dashboard.png"), full_page=True)
        assert (tmp_path / "dashboard.png").stat().st_size > 20_000

        # the service has ended: its last status marks what the first page shows as stale
        page.wait_for_selector('body[data-stale="true"]', timeout=20_000)
        assert page.get_attribute("#service-state", "data-state") == "offline"

        # a read-only user: the broker refuses its command, the page says so, no buttons
        ro_errors: list[str] = []
        ro = _open(browser, lab_url, "dashboard", users["dashboard"], ro_errors)
        ro.wait_for_selector('#role[data-role="read-only"]', timeout=20_000)
        assert "not authorized" in ro.inner_text("#command-line").lower()
        assert ro.locator("#controls button:visible").count() == 0
        assert not errors and not fresh_errors and not ro_errors, (errors, fresh_errors,
                                                                    ro_errors)
    finally:
        service.stop()
        dashboard.stop()
        print("\n".join(service.lines + dashboard.lines))  # shown when the test fails


@pytest.mark.timeout(180)
def test_on_a_bare_laptop_the_page_reads_the_embedded_broker(browser, tmp_path, wait_until):
    # `make run` with no broker: the service starts the embedded one, whose websockets
    # listener (127.0.0.1 only, MQTT 3.1.1, no users) the page uses without a login
    from .test_server import free_port

    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "archive"),
               HILRIG_MQTT__URL=f"mqtt://127.0.0.1:{free_port()}",  # nothing listens there
               HILRIG_MQTT__RIG_ID=f"bare-{uuid.uuid4().hex[:6]}")
    proc = subprocess.Popen(
        [sys.executable, "-m", "hilrig", "run", "--sim", "--captures", "1", "--http",
         f"127.0.0.1:{free_port()}"], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True).start()
    errors: list[str] = []
    try:
        url = wait_until(lambda: next((m.group(1) for line in lines
                                       if (m := re.search(r"dashboard: (http://\S+)", line))),
                                      None), 60, "the dashboard's address")
        assert any(re.search(r"websockets for this process's dashboard at "
                             r"ws://127\.0\.0\.1:\d+/", line)
                   for line in lines), lines  # said where, on localhost only
        page = browser.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        assert page.locator("#login:visible").count() == 0  # no users on the embedded broker
        page.wait_for_selector('#broker-state[data-state="connected"]', timeout=15_000)
        page.wait_for_selector('#role[data-role="operator"]', timeout=20_000)
        wait_until(lambda: int(page.get_attribute("#live", "data-samples") or 0) > 200, 30,
                   "telemetry on the page")
        assert not errors, errors
    finally:
        proc.terminate()
        proc.wait(timeout=30)


#: A page of another origin trying what the adversarial probe did: read the dashboard's
#: config.json (with the page's login), connect to the embedded broker's websocket with
#: no login and with a guessed one, and on a connection start a session and read '#'.
EVIL_PAGE = """<!doctype html><meta charset="utf-8"><script src="mqtt.min.js"></script>
<script>
const out = window.attack = {attempts: [], done: false};
const [dash, ws, prefix] = [DASH, WS, PREFIX];
async function attempt(options) {
  return new Promise((resolve) => {
    const rec = {options: JSON.stringify(options), connected: false, error: null};
    out.attempts.push(rec);
    const c = mqtt.connect(ws, {protocolVersion: 4, clientId: "hilrig-dash-" + Math.random(),
      reconnectPeriod: 0, connectTimeout: 4000, ...options});
    c.on("connect", () => {
      rec.connected = true;
      c.subscribe("#");
      c.publish(prefix + "/cmd/session/start", JSON.stringify({plan: {captures: 50}}));
      setTimeout(() => { c.end(true); resolve(); }, 1500);
    });
    c.on("error", (e) => { rec.error = String(e && e.message || e); });
    c.on("close", () => { if (!rec.connected) { c.end(true); resolve(); } });
  });
}
(async () => {
  try {
    const r = await fetch(dash + "config.json");
    out.config = await r.text();
  } catch (e) { out.config = "blocked: " + e; }
  await attempt({});
  await attempt({username: "operator", password: "guess"});
  out.done = true;
})();
</script>"""


@pytest.mark.fault(injected="security: a page of another origin (evil.example) and a "
                            "DNS-rebinding name try the embedded broker's websocket",
                   expected="neither reads the page's login nor connects; no command acted on")
@pytest.mark.timeout(180)
def test_a_page_of_another_origin_can_neither_connect_nor_command_the_rig(browser, tmp_path,
                                                                          wait_until):
    import asyncio
    import concurrent.futures
    import http.server
    import json

    import aiomqtt

    from .test_server import free_port

    rig = f"xo-{uuid.uuid4().hex[:6]}"
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(tmp_path / "archive"),
               HILRIG_MQTT__URL=f"mqtt://127.0.0.1:{free_port()}",  # nothing: the embedded
               HILRIG_MQTT__RIG_ID=rig)
    proc = subprocess.Popen(
        [sys.executable, "-m", "hilrig", "serve", "--sim", "--unpaced", "--http",
         f"127.0.0.1:{free_port()}"], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True).start()
    evil_dir = tmp_path / "evil"
    evil_dir.mkdir()
    evil = None
    try:
        dash = wait_until(lambda: next((m.group(1) for line in lines
                                        if (m := re.search(r"dashboard: (http://\S+)", line))),
                                       None), 60, "the dashboard's address")
        ws_url = next(m.group(1) for line in lines
                      if (m := re.search(r"dashboard at (ws://\S+/)", line)))
        wait_until(lambda: any("idle" in line for line in lines), 60, "the daemon idle")
        page_text = (EVIL_PAGE.replace("DASH", json.dumps(dash)).replace("WS", json.dumps(ws_url))
                     .replace("PREFIX", json.dumps(f"hilrig/{rig}")))
        (evil_dir / "index.html").write_text(page_text)
        shutil.copy(Path(__file__).resolve().parents[3] / "daq/dashboard/static/vendor/"
                    "mqtt.min.js", evil_dir / "mqtt.min.js")
        handler = lambda *a: http.server.SimpleHTTPRequestHandler(  # noqa: E731
            *a, directory=str(evil_dir))
        evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=evil.serve_forever, daemon=True).start()

        page = browser.new_page()
        page.goto(f"http://evil.example:{evil.server_address[1]}/")
        attack = wait_until(lambda: (a := page.evaluate("window.attack")) and a["done"] and a,
                            60, "the attack page to finish")
        assert attack["config"].startswith("blocked"), attack["config"]  # no CORS: unread
        assert [a["connected"] for a in attack["attempts"]] == [False, False], attack

        # DNS rebinding: the dashboard itself under a foreign name that resolves to
        # 127.0.0.1; it is served, but without the login, and its origin is not let in
        port = int(dash.rsplit(":", 1)[1].strip("/"))
        rebound = browser.new_page()
        rebound.goto(f"http://evil.example:{port}/")
        config = json.loads(rebound.evaluate("fetch('config.json').then(r => r.text())"))
        assert config["broker"]["username"] is None and config["broker"]["password"] is None
        time.sleep(5)
        assert rebound.get_attribute("#broker-state", "data-state") != "connected"

        # a program that sets any Origin it likes still needs the page's login
        async def program() -> list[str]:
            outcomes = []
            for origin in ("http://evil.example", dash.rstrip("/")):
                try:
                    async with aiomqtt.Client(
                            "127.0.0.1", int(ws_url.rsplit(":", 1)[1].strip("/")),
                            transport="websockets", websocket_path="/",
                            websocket_headers={"Origin": origin}, identifier="hilrig-dash-x",
                            protocol=aiomqtt.ProtocolVersion.V311, timeout=5) as c:
                        await c.publish(f"hilrig/{rig}/cmd/session/start",
                                        json.dumps({"plan": {"captures": 50}}), qos=1)
                        outcomes.append("connected")
                except aiomqtt.MqttError as exc:
                    outcomes.append(str(exc))
            return outcomes

        with concurrent.futures.ThreadPoolExecutor(1) as pool:  # playwright owns this loop
            refused = pool.submit(asyncio.run, program()).result(timeout=60)
        assert "handshake" in refused[0].lower(), refused  # the Origin: HTTP 403
        assert "not authorized" in refused[1].lower(), refused  # no login: CONNACK refused
        time.sleep(1.0)
        assert not any("session S" in line for line in lines), lines  # nothing started
        assert proc.poll() is None
        # the service's own page still connects, with the login it was given
        own = browser.new_page()
        own.goto(dash)
        own.wait_for_selector('#broker-state[data-state="connected"]', timeout=15_000)
    finally:
        if evil is not None:
            evil.shutdown()
        proc.terminate()
        proc.wait(timeout=30)


def test_a_page_that_never_reached_its_broker_says_so_and_names_the_url(browser, tmp_path,
                                                                       wait_until):
    # the banner said "broker connection lost since ..." though the page never connected,
    # and named no url: a user could not tell a wrong address from a broker that went away
    from .test_server import free_port

    closed = free_port()  # nothing listens there
    env = dict(os.environ, HILRIG_DASHBOARD__WS_URL=f"ws://127.0.0.1:{closed}/")
    proc = subprocess.Popen([sys.executable, "-m", "hilrig", "dashboard", "--http",
                             f"127.0.0.1:{free_port()}"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        url = re.search(r"http://\S+/", proc.stdout.readline())
        assert url
        page = browser.new_page()
        page.goto(url.group(0))
        banner = page.locator("#banner-broker")
        banner.wait_for(state="visible", timeout=20_000)
        text = banner.inner_text()
        assert f"cannot reach the broker at ws://127.0.0.1:{closed}/" in text, text
        assert "lost" not in text
    finally:
        proc.terminate()
        proc.wait(timeout=30)
