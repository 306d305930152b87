"""Dashboard soak: the page open in headless Chromium through a long paced session.

A private Mosquitto (TCP and websockets, anonymous, on loopback) and `hilrig session
start --sim --http` stream the simulated rig at 10 kHz in real time (telemetry at
100 Hz) while the page stays open. Every minute, after a forced garbage collection, it
prints the page's JS heap, the telemetry samples the page received against what 100 Hz
would give, and the captures it shows. Goal: the heap grows by no more than 20 % from
the first reading (after a minute's warm-up) to the last, and the page keeps up.

    python bench/bench_dashboard_soak.py [--minutes 10] [--screenshot docs/dashboard.png]
                                         [--captures N [--drift NAME=RATE]] [--pose A P]

With --captures the session ends after N captures: the page then shows the session's
answer (its verdict and bands); --drift makes the simulated rig's friction drift by RATE
per hour of its clock (the README's picture: mu_v1=1.0, a night's drift in minutes).

Exit status 1 when the heap grew by more than 20 %.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"nothing listens on 127.0.0.1:{port}")


def _heap(page, cdp) -> float:
    cdp.send("HeapProfiler.collectGarbage")
    return float(cdp.send("Runtime.getHeapUsage")["usedSize"]) / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--screenshot", type=Path, help="write a screenshot of the page at the end")
    ap.add_argument("--captures", type=int, default=1000, help="the session's captures")
    ap.add_argument("--pose", type=float, nargs=2, default=(0.0, 120.0), metavar=("ARM", "PEND"),
                    help="release pose, degrees (an arm that barely moves while the pendulum "
                         "swings suspends a session: a suspect encoder)")
    ap.add_argument("--drift", action="append", default=[], metavar="NAME=RATE",
                    help="the simulated friction's drift per hour of its clock")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="hilrig-soak-"))
    tcp, ws, http = _free_port(), _free_port(), _free_port()
    (work / "mosquitto.conf").write_text(
        f"listener {tcp} 127.0.0.1\nallow_anonymous true\nlistener {ws} 127.0.0.1\n"
        "protocol websockets\npersistence false\n")
    broker = subprocess.Popen([shutil.which("mosquitto") or "/usr/sbin/mosquitto", "-c",
                               str(work / "mosquitto.conf")], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    _wait_port(tcp)
    env = dict(os.environ, HILRIG_STORAGE__DIRECTORY=str(work / "archive"),
               HILRIG_MQTT__URL=f"mqtt://127.0.0.1:{tcp}", HILRIG_MQTT__RIG_ID="soak",
               HILRIG_DASHBOARD__WS_URL=f"ws://127.0.0.1:{ws}/")
    if args.drift:
        drift = {k: float(v) for k, v in (d.split("=", 1) for d in args.drift)}
        env["HILRIG_SIM__REALISM__DRIFT_PER_HOUR"] = json.dumps(drift)
    service = subprocess.Popen(
        [sys.executable, "-m", "hilrig", "session", "start", "--sim", "--captures",
         str(args.captures),
         "--pose", f"{args.pose[0]:g}", f"{args.pose[1]:g}", "--name", "soak",
         "--http", f"127.0.0.1:{http}"],
        env=env, cwd=work, stdout=open(work / "service.log", "w"), stderr=subprocess.STDOUT)
    errors: list[str] = []
    try:
        _wait_port(http, 60)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=shutil.which("chromium")
                                         or "/usr/bin/chromium", args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            t_load = time.perf_counter()
            page.goto(f"http://127.0.0.1:{http}/")
            page.wait_for_selector('#broker-state[data-state="connected"]', timeout=15_000)
            print(f"page loaded and connected in {time.perf_counter() - t_load:.2f} s")
            cdp = page.context.new_cdp_session(page)
            time.sleep(60)  # warm-up: the first capture, plots created, JIT settled
            t0 = time.monotonic()
            s0 = int(page.get_attribute("#live", "data-samples") or 0)
            first = _heap(page, cdp)
            print(f"{'min':>5} {'heap MB':>8} {'samples/s':>10} {'captures':>9}")
            print(f"{0:5.1f} {first:8.2f} {'':>10} "
                  f"{page.locator('#captures tr[data-capture-id]').count():9d}")
            last = first
            while (elapsed := time.monotonic() - t0) < args.minutes * 60:
                time.sleep(min(60.0, args.minutes * 60 - elapsed))
                elapsed = time.monotonic() - t0
                last = _heap(page, cdp)
                samples = int(page.get_attribute("#live", "data-samples") or 0) - s0
                print(f"{elapsed / 60:5.1f} {last:8.2f} {samples / elapsed:10.1f} "
                      f"{page.locator('#captures tr[data-capture-id]').count():9d}", flush=True)
            if args.captures < 1000:  # the session ends: its answer on the page
                try:
                    page.wait_for_selector("#trend-verdict:not([hidden])", timeout=900_000)
                except Exception:  # noqa: BLE001 - say what the service said, then fail
                    print((work / "service.log").read_text()[-3000:])
                    raise
                print(f"the page's verdict: {page.inner_text('#trend-verdict')}")
            if args.screenshot is not None:  # with the newest finished capture open
                done = page.locator('#captures tr[data-status="done"]')
                if done.count():
                    done.last.click()
                    page.wait_for_timeout(1500)
                page.evaluate("window.scrollTo(0, 0)")
                page.screenshot(path=str(args.screenshot), full_page=True)
            browser.close()
    finally:
        service.terminate()
        service.wait(timeout=30)
        broker.terminate()
        broker.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    growth = (last - first) / first * 100.0
    print(f"JS heap {first:.2f} MB -> {last:.2f} MB over {args.minutes:g} min: {growth:+.1f} % "
          f"(goal <= +20 %); console errors: {len(errors)}")
    for e in errors[:5]:
        print(f"  {e}")
    return 0 if growth <= 20.0 and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
