"""The `hilrig` command line: one parser for every command.

Each command names its handler as "module:function" of this package; `main` imports
only the module of the command being run, so `hilrig --help` and a catalog listing
never load the identification or acquisition code they do not need.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn

from ._ranges import ANGLE, CAD, DURATION, PUSH, RATE, REST, TILT, WORKERS
from ._usage import EXIT_USAGE, MAX_OPTION_FILE_BYTES

__all__ = ["build_parser"]

DESCRIPTION = "hilrig: data acquisition and friction identification for pendulum rigs"
_AT_FILE = f"or @file.json of at most {MAX_OPTION_FILE_BYTES >> 20} MiB"
_FORMATS: dict[str, Any] = {"choices": ("table", "csv", "json"), "default": "table"}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage stays available with --help)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"hilrig: error: {self.prog.removeprefix('hilrig ')}: {message}\n"
                  if self.prog != "hilrig" else f"hilrig: error: {message}\n")


def _methods() -> list[str]:
    from hilrig.identify import METHOD_NAMES  # the names only: no method is loaded for --help

    return list(METHOD_NAMES)


def _default_method() -> str:
    from hilrig.identify import DEFAULT_METHOD

    return DEFAULT_METHOD


def _utc_arg(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None
    if value.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} needs a time zone, e.g. 2026-11-23T07:00Z")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hilrig", description=DESCRIPTION)
    p.add_argument("--config", type=Path,
                   help="TOML settings file (see deploy/hilrig.example.toml)")
    loud = p.add_mutually_exclusive_group()
    loud.add_argument("-v", "--verbose", action="store_true",
                      help="everything: debug logging, every message published")
    loud.add_argument("-q", "--quiet", action="store_true",
                      help="results, warnings and errors only: no progress, no status lines")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    methods = _methods()
    _offline_commands(sub, methods)
    _live_commands(sub, methods)
    _tool_commands(sub)
    _session_commands(sub, methods)
    _catalog_commands(sub, methods)
    return p


def _realism_options(p: Any) -> None:
    r = p.add_argument_group(
        "a realistic capture (default: config [sim.realism]; all off: the ideal model)")
    r.add_argument("--seed", type=int, help="random draws (default: fresh each run)")
    r.add_argument("--rig-error", type=float, metavar="F",
                   help="true m1..L1 = nominal x (1 + u), u uniform in +-F (e.g. 0.05)")
    r.add_argument("--tilt-error", type=float, metavar="DEG",
                   help="true tilt = nominal + u, u uniform in +-DEG")
    r.add_argument("--drag", type=float, metavar="C", help="pendulum air drag c |v| v, N m s^2")
    r.add_argument("--spring", type=float, metavar="K", help="cable on the arm, N m/rad")
    r.add_argument("--tremor", type=float, metavar="RAD",
                   help="rms tremor of the hand holding the rig before release, rad")
    r.add_argument("--push", type=float, nargs=2, metavar=("ARM", "PEND"),
                   help=f"velocity the hand gives as it lets go, each in {PUSH}")
    r.add_argument("--noise", type=float, metavar="RAD", help="white angle noise (sd), rad")
    r.add_argument("--jitter", type=int, metavar="N", help="counts off by up to N, uniformly")
    r.add_argument("--interpolation", type=float, metavar="COUNTS",
                   help="encoder interpolation error amplitude, counts")
    r.add_argument("--lost-frames", type=float, metavar="P",
                   help="probability that a frame of 10 samples is lost")
    r.add_argument("--drift", action="append", metavar="NAME=RATE",
                   help="a friction parameter drifting by RATE (a fraction) per hour of "
                        "session time, e.g. mu_v1=0.0125 (repeat for several)")
    r.add_argument("--temperature", type=float, metavar="DEGC",
                   help="the lab's temperature at hour 0, recorded with the capture as the "
                        "covariate temperature_c")
    r.add_argument("--warming", type=float, metavar="DEGC_PER_H",
                   help="how fast the lab warms over the session, degC per hour")


def _offline_commands(sub: Any, methods: list[str]) -> None:
    s = sub.add_parser("simulate", help="simulate a free decay of the rig into a capture file")
    s.add_argument("--out", required=True, help="FILE.h5 or FILE.csv")
    s.add_argument("--tilt", type=float,
                   help=f"tilt of the arm axis, in {TILT} (default: config, 10)")
    s.add_argument("--theta0", type=float, default=0.0, help=f"arm release angle, in {ANGLE}")
    s.add_argument("--theta1", type=float, default=120.0,
                   help=f"pendulum release angle, in {ANGLE}")
    s.add_argument("--duration", type=float, default=35.0,
                   help=f"seconds after release, in {DURATION}; with --rest no longer than "
                        "the settings allow a capture (110.5 s by default)")
    s.add_argument("--rest", type=float, default=0.5,
                   help=f"seconds held still before release, in {REST}")
    s.add_argument("--rate", type=float, metavar="HZ",
                   help=f"sample rate, in {RATE} (default: config, 10000); seed 000 Table V "
                        "used 1000")
    s.add_argument("--friction", help=f"JSON object of friction parameters ({_AT_FILE}), "
                                      "each within a factor of 1000 of seed 000's Table III")
    s.add_argument("--force", action="store_true", help="overwrite an existing file")
    _realism_options(s)
    s.add_argument("--session-hours", type=float, default=0.0, metavar="H",
                   help="the capture's time in its session, hours: what --drift has moved "
                        "the friction by (default 0)")
    s.add_argument("--covariate", action="append", metavar="NAME=VALUE",
                   help="a condition the capture records, e.g. temperature_c=23.5 (repeat "
                        "for several): identify --pooled --covariate NAME pools against it")
    k = s.add_argument_group("other rig kinds (single, nlink:N; written as CSV)")
    k.add_argument("--rig", metavar="KIND", help="single or nlink:N (default: the config's "
                   "[rig] kind, furuta)")
    k.add_argument("--angles", type=float, nargs="+", metavar="DEG",
                   help=f"release angle of each link from the upward vertical, in {ANGLE} "
                        "(default 120)")
    k.add_argument("--params", metavar="JSON", help=f"the true parameters ({_AT_FILE}): m, "
                   "com, l, J, b (SI, each at most 1000) or by name (within a factor of 1e6 of "
                   "the normaliser); default seed 002's laboratory pendulum")
    k.add_argument("--friction-law", default=None, help=argparse.SUPPRESS)
    s.set_defaults(handler="_offline:cmd_simulate")

    i = sub.add_parser("identify", help="identify the friction parameters of a capture file")
    i.add_argument("file", help="capture FILE.h5 or FILE.csv (header t,theta0,theta1; "
                                "with --rig single or nlink:N, t,theta1[,theta2[,theta3]]); a "
                                "regular file no longer than the settings allow a capture, a "
                                "CSV's lines at most 4096 bytes")
    i.add_argument("more", nargs="*", metavar="FILE",
                   help="with --pooled: more captures of the same rig")
    i.add_argument("--tilt", type=float, help=f"tilt, in {TILT} (overrides the file's rig)")
    _rig_knowledge_options(i)
    i.add_argument("--method", default=_default_method(), choices=methods)
    i.add_argument("--json", action="store_true", help="print only the result as JSON")
    i.add_argument("--pooled", action="store_true",
                   help="identify the files (side by side on several cores), then put them "
                        "together: the rig's friction with intervals, and whether it drifted "
                        "between them")
    i.add_argument("--hours", type=float, nargs="+", metavar="H",
                   help="with --pooled: each file's time in the session, hours (default: "
                        "from the files' recorded times)")
    i.add_argument("--covariate", metavar="NAME",
                   help="with --pooled: the friction's trend in this condition each file "
                        "records (simulate --covariate, e.g. temperature_c) instead of in hours")
    i.add_argument("--workers", type=int, metavar="N",
                   help=f"with --pooled: files identified N at a time, in {WORKERS}, each in a "
                        "process of its own (default: one per core where the files hold 150 s "
                        "of records or more; 1: one after another)")
    _angle_options(i)
    _chain_options(i)
    i.set_defaults(handler="_offline:cmd_identify")

    c = sub.add_parser("compare", help="run every method on a capture: the seed's Table V")
    c.add_argument("file", help="capture FILE.h5 or FILE.csv")
    c.add_argument("--tilt", type=float, help=f"tilt, in {TILT} (overrides the file's rig)")
    _rig_knowledge_options(c)
    c.add_argument("--methods", help="comma-separated subset (default: all)")
    c.add_argument("--plot", metavar="DIR", help="write PNG figures like seed 000 Figs. 4-7")
    k = c.add_argument_group("other rig kinds (single, nlink:N)")
    k.add_argument("--rig", metavar="KIND", help="single or nlink:N: seed 002's regression "
                   "against the recommended method (default: the config's [rig] kind, furuta)")
    k.add_argument("--friction-law", default=None, help=argparse.SUPPRESS)
    _angle_options(c)
    c.set_defaults(handler="_offline:cmd_compare")

    e = sub.add_parser("export", help="convert a capture between HDF5 and CSV")
    e.add_argument("file")
    e.add_argument("--out", required=True)
    e.add_argument("--force", action="store_true")
    e.set_defaults(handler="_offline:cmd_export")


def _angle_options(p: Any) -> None:
    g = p.add_argument_group("a CSV's angles (every rig kind)")
    g.add_argument("--unit", choices=("rad", "deg"), help="the angles' unit (default: a "
                   "`# unit=` comment above the header, else rad)")
    g.add_argument("--zero", choices=("upright", "hanging"), help="where a pendulum's angle "
                   "is 0 (default: a `# zero=` comment above the header, else the rig kind's "
                   "own: hanging for furuta as in seed 000, upright for single and nlink:N "
                   "as in seed 002)")


def _chain_options(p: Any) -> None:
    g = p.add_argument_group("other rig kinds (single, nlink:N)")
    g.add_argument("--rig", metavar="KIND", help="furuta, single (one free joint in a "
                   "plane at --tilt from the vertical) or nlink:N (seed 002's n-link pendulum, "
                   "N = 1-3); default: the config's [rig] kind, furuta")
    g.add_argument("--validate", metavar="T0:T1", help="hold [T0, T1] s out of the fit and "
                   "report the fit per joint on it; it must overlap the record by 0.3 s")
    g.add_argument("--segment-s", type=float, metavar="S", help="validate in segments of S "
                   "seconds, in [0.3, 3610], each simulated from its own first samples "
                   "(default: the whole span)")
    g.add_argument("--params", metavar="JSON", help=f"a parameter set ({_AT_FILE}) to score "
                   "on the held-out span under the same rules: m, com, l, J, b (SI) or by "
                   "name (kappa1, nu1, mu12, Fc1, b1...)")
    g.add_argument("--params-only", action="store_true",
                   help="score --params without identifying")
    g.add_argument("--friction-law", choices=("auto", "viscous", "coulomb-viscous",
                                               "brown-mcphee", "coulomb-viscous-drag",
                                               "brown-mcphee-drag"),
                   help="joint friction law (default auto: the BIC chooses)")


def _rig_knowledge_options(p: Any) -> None:
    p.add_argument("--measured", action="append", metavar="NAME=VALUE+-SD",
                   help="a rig value the lab measured, with its standard uncertainty (absolute "
                        "or with %%): m2_l2=0.00794+-0.5%%, l2=0.0615+-0.0005, "
                        "tilt_deg=12+-0.5; repeat for more (overrides the file and config); "
                        "within a factor of 10 of the nominal value, its uncertainty 1 ppm to "
                        "100 %% of it")
    p.add_argument("--cad-uncertainty", type=float, metavar="PCT",
                   help="relative uncertainty of every rig value nobody measured, in "
                        f"{str(CAD).replace('%', '%%')} (default: config, 5)")


def _live_commands(sub: Any, methods: list[str]) -> None:
    r = sub.add_parser("run", help="run the acquisition service")
    r.add_argument("--sim", action="store_true", help="use the simulated rig")
    r.add_argument("--port", metavar="PATH", help="use the serial bridge on this port")
    r.add_argument("--captures", type=int, help="stop after N identified captures")
    r.add_argument("--unpaced", action="store_true", help="simulate as fast as possible")
    r.add_argument("--method", default=None, choices=methods)
    _http_option(r)
    r.set_defaults(handler="_live:cmd_run")

    sv = sub.add_parser("serve", help="the rig's daemon: idle between sessions, started and "
                                      "driven by MQTT commands (docs/mqtt.md)")
    sv.add_argument("--sim", action="store_true", help="the simulated rig")
    sv.add_argument("--port", metavar="PATH", help="the serial bridge on this port")
    sv.add_argument("--unpaced", action="store_true", help="simulate as fast as possible")
    _http_option(sv)
    sv.set_defaults(handler="_live:cmd_serve")

    wk = sub.add_parser("worker", help="identify captures offloaded by rig services "
                                       "(identify.offload), from a shared MQTT subscription")
    wk.add_argument("--url", help="broker URL (default: config mqtt.url)")
    wk.add_argument("--max-jobs", type=int, help="stop after N jobs")
    wk.set_defaults(handler="_live:cmd_worker")


def _http_option(p: Any, linger: bool = False) -> None:
    p.add_argument("--http", nargs="?", const="", metavar="HOST:PORT",
                   help="serve the live dashboard page too (bare: config dashboard.http, "
                        "127.0.0.1:8080)")
    if linger:
        p.add_argument("--linger", action="store_true",
                       help="with --http: once the session ends, keep serving the page (and "
                            "an embedded broker's retained state) until Ctrl-C")


def _tool_commands(sub: Any) -> None:
    da = sub.add_parser("dashboard", help="serve the live dashboard page (it reads the broker "
                                          "over MQTT over WebSockets)")
    da.add_argument("--http", metavar="HOST:PORT",
                    help="where to serve it (default: config dashboard.http, 127.0.0.1:8080)")
    da.set_defaults(handler="_dashboard:cmd_dashboard")

    ef = sub.add_parser("emulate-firmware",
                        help="emulate the bridge firmware on a pseudo-terminal (prints its path)")
    ef.add_argument("--link", metavar="PATH", help="keep a symlink here to the current pty")
    ef.add_argument("--corrupt", type=float, default=0.0, metavar="P",
                    help="probability per frame of a flipped bit")
    ef.add_argument("--drop", type=float, default=0.0, metavar="P",
                    help="probability per frame of a lost byte")
    ef.add_argument("--stall", metavar="T:S",
                    help="send nothing from T for S seconds (T: seconds after the first START)")
    ef.add_argument("--reset", type=float, metavar="T", help="reset the board at T")
    ef.add_argument("--vanish", metavar="T:S", help="the port disappears at T for S seconds")
    ef.add_argument("--version", type=int, default=1, help="protocol major version to speak")
    ef.add_argument("--garbage", nargs="?", const="0:inf", metavar="T:S",
                    help="random bytes instead of frames (default: from the start, for ever)")
    ef.add_argument("--pose", type=float, nargs=2, default=(0.0, 120.0), metavar="DEG",
                    help="release pose: arm, pendulum (degrees)")
    ef.add_argument("--unpaced", action="store_true", help="stream as fast as the host reads")
    ef.add_argument("--latch", action="store_true",
                    help="a release latch (protocol 1.1): held at the pose until RELEASE")
    ef.add_argument("--dump", metavar="FILE.npz",
                    help="on exit, write what was sent, spoiled and lost (every sample sent, "
                         "by session and device index) for comparison with a capture")
    ef.set_defaults(handler="_emulate:cmd_emulate_firmware")

    mo = sub.add_parser("monitor", help="print what the service publishes")
    mo.add_argument("--url", help="broker URL (default: config mqtt.url)")
    mo.add_argument("--count", type=int, help="stop after N messages")
    mo.add_argument("--timeout", type=float, help="stop after S seconds")
    mo.add_argument("--json", action="store_true",
                    help="each message's topic and raw payload instead of what it means")
    mo.add_argument("--topic", action="append", metavar="PATTERN",
                    help="only topics matching PATTERN under hilrig/<rig_id>/ (+ one level, # "
                         "the rest): result/#, events, session/#; repeat for more (default: all, "
                         "telemetry included)")
    mo.set_defaults(handler="_live:cmd_monitor")

    cm = sub.add_parser("cmd", help="send a command to the running service over MQTT")
    cm.add_argument("verb", help="ping, arm, abort, release, identify, "
                                 "session/start|stop|pause|resume")
    cm.add_argument("body", nargs="?", help='the request as JSON, e.g. \'{"capture_id": "..."}\'')
    cm.add_argument("--url", help="broker URL (default: config mqtt.url)")
    cm.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the reply")
    cm.set_defaults(handler="_live:cmd_cmd")


def _session_commands(sub: Any, methods: list[str]) -> None:
    s = sub.add_parser("session", help="unattended capture sessions")
    ss = s.add_subparsers(dest="session_command", required=True, parser_class=_Parser)
    st = ss.add_parser("start", help="start a session from a plan (runs in the foreground)")
    st.add_argument("plan", nargs="?", help="PLAN.toml ([session] table or top level)")
    st.add_argument("--captures", type=int, help="captures to complete")
    st.add_argument("--until", type=_utc_arg, help="no release after this UTC time")
    st.add_argument("--sim", action="store_true", help="the simulated rig (default)")
    st.add_argument("--port", metavar="PATH", help="the serial bridge (operator release)")
    st.add_argument("--latch", action="store_true",
                    help="with --port: the bridge opens its release latch (else an operator)")
    st.add_argument("--unpaced", action="store_true", help="simulate as fast as possible")
    st.add_argument("--method", action="append", choices=methods,
                    help="identification method (repeat for several)")
    st.add_argument("--pose", type=float, nargs=2, action="append", metavar=("ARM", "PEND"),
                    help="release pose in degrees (repeat to cycle through several)")
    st.add_argument("--name", help="free text shown with the session")
    _http_option(st, linger=True)
    st.set_defaults(handler="_live:cmd_session_start")
    for verb, handler, text in (("resume", "_live:cmd_session_resume", "continue a session"),
                                ("stop", "_catalog:cmd_session_stop",
                                 "ask a running session to stop"),
                                ("status", "_catalog:cmd_session_status",
                                 "where a session stands")):
        p = ss.add_parser(verb, help=text)
        p.add_argument("session", nargs="?", help="session id (default: the latest)")
        p.set_defaults(handler=handler)
        if verb == "resume":
            _http_option(p, linger=True)
        if verb == "status":
            p.add_argument("--json", action="store_true")
            p.add_argument("--all", action="store_true", help="every session")
    si = ss.add_parser("identify", help="the session's captures put together: its friction "
                                        "with intervals, and whether it drifted")
    si.add_argument("session", nargs="?", help="session id (default: the latest)")
    si.add_argument("--method", default=_default_method(), choices=methods,
                    help="whose results to pool (default: the recommended estimator's)")
    si.add_argument("--json", action="store_true", help="print the hilrig.session-result/1 JSON")
    si.add_argument("--dry-run", action="store_true", help="print it without keeping it")
    si.add_argument("--covariate", metavar="NAME",
                    help="the friction's trend in this condition each capture records (a "
                         "simulated lab's temperature_c) instead of in session hours")
    si.set_defaults(handler="_session_pooled:cmd_session_identify")


def _catalog_commands(sub: Any, methods: list[str]) -> None:
    c = sub.add_parser("captures", help="captures in the catalog")
    cs = c.add_subparsers(dest="captures_command", required=True, parser_class=_Parser)
    cl = cs.add_parser("list", help="one line per capture")
    cl.add_argument("--session")
    cl.add_argument("--status")
    cl.add_argument("--format", **_FORMATS)
    cl.set_defaults(handler="_catalog:cmd_captures_list")
    cw = cs.add_parser("show", help="one capture with its summary, results and errors (JSON)")
    cw.add_argument("capture_id")
    cw.set_defaults(handler="_catalog:cmd_captures_show")

    r = sub.add_parser("results", help="identification results in the catalog")
    rs = r.add_subparsers(dest="results_command", required=True, parser_class=_Parser)
    rl = rs.add_parser("list", help="one line per result, with parameters, fit, compute time")
    rl.add_argument("--session")
    rl.add_argument("--capture")
    rl.add_argument("--method", choices=methods)
    rl.add_argument("--pooled", action="store_true",
                    help="the sessions' answers instead (hilrig session identify): verdict, "
                         "each level with its interval and trend")
    rl.add_argument("--format", **_FORMATS)
    rl.set_defaults(handler="_catalog:cmd_results_list")
    rc = rs.add_parser("compare", help="two methods across the captures both identified: "
                                       "each parameter's differences with their intervals")
    rc.add_argument("--method", required=True, choices=methods, action="append",
                    help="A, then B: B is compared against A")
    rc.add_argument("--session")
    rc.add_argument("--plot", metavar="PNG", help="one panel per parameter")
    rc.add_argument("--format", choices=["table", "json"], default="table")
    rc.set_defaults(handler="_results_compare:cmd_results_compare")

    ri = sub.add_parser(
        "reidentify", help="identify archived captures again (adds results): one capture, or "
                           "a campaign over a selection, here or on a Dask cluster",
        description="One capture: its result printed. Several, or a selection: a campaign, "
                    "run again by the same command only for what it has not finished "
                    "(Ctrl-C, then the same command, resumes).")
    ri.add_argument("capture_ids", nargs="*", metavar="CAPTURE_ID")
    ri.add_argument("--method", required=True, choices=methods, action="append",
                    help="the method (repeat for several)")
    ri.add_argument("--session", help="every capture of this session")
    ri.add_argument("--all", action="store_true", help="every archived capture")
    ri.add_argument("--since", help="captures started at or after, ISO 8601 (UTC)")
    ri.add_argument("--until", help="captures started before, ISO 8601 (UTC)")
    ri.add_argument("--kind", help="only captures of this rig kind: furuta, single, nlink:N")
    ri.add_argument("--cluster", help="where a campaign runs: local[:N] (a Dask LocalCluster), "
                                      "tcp://HOST:PORT (a running scheduler), slurm or pbs "
                                      "(the [cluster] table); default: this machine's "
                                      "processes")
    ri.add_argument("--force", action="store_true",
                    help="identify again what an earlier run of the campaign finished")
    ri.set_defaults(handler="_reidentify:cmd_reidentify")
