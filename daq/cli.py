"""The `hilrig` command: simulate, identify, export, run the service, monitor it.

Usage errors and bad input exit with status 2 and one line naming the problem;
failures while running exit with 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from identify import METHODS, PARAM_NAMES, TABLE_III_TRUTH, FrictionParams, identify
from identify.methods import DEFAULT_METHOD
from identify.results import format_fit

from ._capture_file import (
    Capture,
    CaptureFileError,
    TriggerInfo,
    read_capture,
    write_capture_csv,
    write_capture_h5,
)
from ._config import ConfigError, Settings, load_settings
from ._errors import first_error
from ._convert import measurement_from_capture
from ._progress import ProgressBar
from ._session_cli import ERRORS as SESSION_ERRORS

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad arguments or input: one line, exit status 2."""


def _friction_arg(text: str) -> FrictionParams:
    """A JSON object with any of the ten names (or an IdentificationResult's parameters)."""
    if text.startswith("@"):
        try:
            text = Path(text[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--friction: cannot read {text[1:]}: {exc.strerror}") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"--friction: not valid JSON: {exc.msg} at column {exc.colno}") from None
    if isinstance(obj, dict) and isinstance(obj.get("parameters"), dict):
        obj = obj["parameters"]  # a whole IdentificationResult
    if not isinstance(obj, dict):
        raise UsageError("--friction: expected a JSON object of friction parameters")
    unknown = sorted(set(obj) - set(PARAM_NAMES))
    if unknown:
        raise UsageError(f"--friction: unknown parameter {unknown[0]!r}; "
                         f"names are {', '.join(PARAM_NAMES)}")
    values = TABLE_III_TRUTH.model_dump()
    for name, v in obj.items():
        if isinstance(v, dict):  # {"value": x, ...} from a result; fall back to the assumed value
            v = v.get("value") if v.get("value") is not None else v.get("assumed")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise UsageError(f"--friction: {name} must be a finite number, got {v!r}")
        values[name] = float(v)
    try:
        return FrictionParams(**values)
    except ValidationError as exc:  # name the parameter and the rule it breaks
        err = exc.errors()[0]
        raise UsageError(f"--friction: {first_error(exc, '(parameters)')}, "
                         f"got {err.get('input')!r}") from None


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(args.config)


def _check_out_free(out: Path, force: bool) -> None:
    # before any work; the writer still refuses atomically should the file appear meanwhile
    if not force and out.exists():
        raise UsageError(f"--out {out}: already exists; use --force to overwrite")


# -- simulate -----------------------------------------------------------------------------
def cmd_simulate(args: argparse.Namespace) -> int:
    from drivers import SimulatedRig

    settings = _settings(args)
    out = Path(args.out)
    if out.suffix.lower() not in (".h5", ".hdf5", ".csv"):
        raise UsageError(f"--out {out}: the file must end in .h5 or .csv")
    _check_out_free(out, args.force)
    if not args.duration > 0:
        raise UsageError(f"--duration must be positive, got {args.duration}")
    if args.rest < 0:
        raise UsageError(f"--rest must be >= 0, got {args.rest}")
    rig = settings.rig.model_copy(update={"tilt_deg": args.tilt}) if args.tilt is not None \
        else settings.rig
    if not 0 <= rig.tilt_deg < 90:
        raise UsageError(f"--tilt must be in [0, 90) degrees, got {rig.tilt_deg}")
    friction = _friction_arg(args.friction) if args.friction else settings.sim.friction
    rate = settings.sample_rate_hz
    src = SimulatedRig(rig=rig, friction=friction, pose_deg=(args.theta0, args.theta1),
                       rate_hz=rate, counts_per_rev=settings.counts_per_rev, paced=False,
                       hold_s=args.rest)
    total = int(round(args.rest * rate)) + int(round(args.duration * rate)) + 1
    bar = ProgressBar("simulate")
    chunks = []
    done = 0
    while done < total:
        n = min(10_000, total - done)
        chunks.append(src.read(n).counts)
        done += n
        bar(done / total, f"{done / rate:.1f} s")
    bar.close()
    counts = np.concatenate(chunks)
    capture = Capture(
        capture_id=out.stem, sample_index=np.arange(total, dtype=np.int64), counts=counts,
        sample_rate_hz=rate, counts_per_rev=src.info.counts_per_rev, rig=rig, source=src.info,
        trigger=TriggerInfo(onset_index=src.release_index, start_index=0, end_index=total,
                            end_reason="duration"))
    writer = write_capture_csv if out.suffix.lower() == ".csv" else write_capture_h5
    writer(out, capture, overwrite=args.force)
    print(f"wrote {out}: {total} samples, {args.duration:g} s after release from "
          f"({args.theta0:g}, {args.theta1:g}) deg, tilt {rig.tilt_deg:g} deg")
    return 0


# -- identify -----------------------------------------------------------------------------
def _load_measurement(path: str, tilt: float | None, settings: Settings):
    capture = read_capture(path)
    # an HDF5 capture records its rig; a CSV import has none, so it gets the configured one
    rig = capture.rig if capture.source.kind != "replay" else settings.rig
    rig = rig.model_copy(update={"tilt_deg": tilt}) if tilt is not None else rig
    if not 0 <= rig.tilt_deg < 90:
        raise UsageError(f"--tilt must be in [0, 90) degrees, got {rig.tilt_deg}")
    return measurement_from_capture(capture, rig)


def cmd_identify(args: argparse.Namespace) -> int:
    m = _load_measurement(args.file, args.tilt, _settings(args))
    bar = ProgressBar(f"identify {args.method}")
    try:
        result = identify(m, method=args.method, progress=bar)
    finally:
        bar.close()
    if args.json:
        print(result.to_json(indent=2))
    else:
        print(format_result(result))
    return 0


def format_result(result: Any) -> str:
    lines = [f"method {result.method}, capture {result.capture_id or '-'}, "
             f"{result.capture_seconds:.2f} s at {result.sample_rate_hz:g} Hz, "
             f"{result.lost_samples} samples lost",
             f"{'parameter':<10} {'value':>12} {'95 % interval':>27}  note"]
    for name, p in result.parameters.items():
        val = "n/i" if p.value is None else f"{p.value:.5g}"
        ci = "" if p.ci95 is None else f"[{p.ci95[0]:.5g}, {p.ci95[1]:.5g}]"
        lines.append(f"{name:<10} {val:>12} {ci:>27}  {p.note}")
    lines.append(f"goodness of fit (seed 000 eq. 53): {format_fit(result.fit_percent)}")
    lines.append(f"compute {result.compute_seconds:.2f} s, normalised (eq. 54) "
                 f"{result.normalized_compute_time:.3g}")
    return "\n".join(lines)


# -- compare ----------------------------------------------------------------------------
def cmd_compare(args: argparse.Namespace) -> int:
    from identify.report import compare_methods, parameter_table, table_v

    m = _load_measurement(args.file, args.tilt, _settings(args))
    methods = args.methods.split(",") if args.methods else None
    unknown = [x for x in methods or [] if x not in METHODS]
    if unknown:
        raise UsageError(f"--methods: unknown method {unknown[0]!r}; choose from "
                         f"{', '.join(sorted(METHODS))}")
    bar = ProgressBar("compare")
    try:
        results = compare_methods(m, methods, progress=bar)
    finally:
        bar.close()
    print(table_v(results))
    print()
    print(parameter_table(results))
    if args.plot:
        from identify.methods import run_uas
        from identify.report import write_figures

        if not any("initial_state" in r.diagnostics for r in results):
            from identify import identify as run_method
            results.append(run_method(m, method="grey-box"))
        paths = write_figures(m, results, Path(args.plot), uas_run=run_uas(m))
        for path in paths:
            print(f"wrote {path}")
    return 0


# -- export -------------------------------------------------------------------------------
def cmd_export(args: argparse.Namespace) -> int:
    _settings(args)  # a given --config must be valid even where no key applies
    capture = read_capture(args.file)
    out = Path(args.out)
    _check_out_free(out, args.force)
    if out.suffix.lower() == ".csv":
        write_capture_csv(out, capture, overwrite=args.force)
    elif out.suffix.lower() in (".h5", ".hdf5"):
        write_capture_h5(out, capture, overwrite=args.force)
    else:
        raise UsageError(f"--out {out}: the file must end in .csv or .h5")
    print(f"wrote {out}: {len(capture)} samples")
    return 0


# -- run ----------------------------------------------------------------------------------
async def _run_service(settings: Settings, args: argparse.Namespace) -> int:
    from drivers import SimulatedRig

    if args.port:  # the bridge is opened (handshake, INFO) before the service is built
        from drivers import SerialBridge

        rate = settings.sample_rate_hz
        if rate != int(rate):
            raise UsageError(f"--port: sample_rate_hz must be a whole number of Hz, got {rate}")
        async with SerialBridge(args.port, rate_hz=int(rate)) as bridge:
            return await _serve(settings, args, bridge)
    sim = settings.sim
    source = SimulatedRig(rig=settings.rig, friction=sim.friction, pose_deg=sim.pose_deg,
                          rate_hz=settings.sample_rate_hz, counts_per_rev=settings.counts_per_rev,
                          block_size=sim.block_size, paced=not args.unpaced, hold_s=sim.hold_s)
    return await _serve(settings, args, source)


async def _serve(settings: Settings, args: argparse.Namespace, source: Any) -> int:
    from ._commands import CommandRouter
    from ._courier import Courier
    from ._mqtt import resolve_broker
    from ._outbox import Outbox
    from ._service import RigService

    def say(text: str) -> None:
        print(text, flush=True)

    async with resolve_broker(settings.mqtt) as url:
        say(f"hilrig: rig {settings.mqtt.rig_id}, source {source.info.identity}, broker {url}, "
            f"topics hilrig/{settings.mqtt.rig_id}/#")
        outbox = Outbox(Path(settings.storage.directory))
        router = CommandRouter(settings.mqtt.rig_id)
        async with Courier(settings.mqtt, outbox, url=url, source=source.info, commands=router,
                           on_delivered=lambda topic: say(f"published {topic}")) as pub:
            service = RigService(settings, source, pub, captures=args.captures,
                                 method=args.method, on_event=say)
            service.register_commands(router)
            report = await service.run()
    return 1 if report.failed else 0


def cmd_run(args: argparse.Namespace) -> int:
    if args.sim == bool(args.port):
        raise UsageError("run: choose one source: --sim or --port PATH")
    if args.captures is not None and args.captures < 1:
        raise UsageError(f"--captures must be >= 1, got {args.captures}")
    settings = _settings(args)
    try:
        return asyncio.run(_run_service(settings, args))
    except KeyboardInterrupt:
        return 130


# -- emulate-firmware -------------------------------------------------------------------
def cmd_emulate_firmware(args: argparse.Namespace) -> int:
    import signal

    from drivers import EmulatorConfig, FirmwareEmulator
    from drivers._emulator import parse_window

    try:
        windows = {name: parse_window(getattr(args, name), f"--{name}")
                   if getattr(args, name) else None for name in ("stall", "vanish", "garbage")}
        cfg = EmulatorConfig(
            corrupt=args.corrupt, drop=args.drop, reset_at=args.reset, version=args.version,
            latch=args.latch,
            pose_deg=tuple(args.pose), link=args.link, paced=not args.unpaced,
            rate_hz=int(_settings(args).sample_rate_hz), **windows)
    except ValueError as exc:
        raise UsageError(f"emulate-firmware: {exc}") from None
    emu = FirmwareEmulator(cfg)
    signal.signal(signal.SIGTERM, lambda *_: emu.stop())
    emu.start()
    print(emu.port, flush=True)
    print(f"hilrig: emulating the bridge firmware on {emu.pty_path}"
          + (f" (link {cfg.link})" if cfg.link else "") + f", boot {emu.boot_id:016x}; "
          "Ctrl-C stops", file=sys.stderr, flush=True)
    try:
        while emu.running:
            emu.wait(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        emu.stop()
    return 1 if emu.error else 0


def cmd_cmd(args: argparse.Namespace) -> int:
    from ._commands import COMMANDS, send_command

    if args.verb not in COMMANDS:
        raise UsageError(f"cmd: unknown verb {args.verb!r}; verbs: {', '.join(COMMANDS)}")
    try:
        body = json.loads(args.body) if args.body else {}
    except json.JSONDecodeError as exc:
        raise UsageError(f"cmd: the request is not valid JSON: {exc.msg} at column "
                         f"{exc.colno}") from None
    if not isinstance(body, dict):
        raise UsageError("cmd: the request must be a JSON object")
    _check_url(args.url)
    settings = _settings(args)
    reply = asyncio.run(send_command(settings.mqtt, args.verb, body, url=args.url,
                                     timeout_s=args.timeout))
    print(json.dumps(reply, indent=2))
    return 0 if reply.get("ok") else 1


async def _daemon(settings: Settings, args: argparse.Namespace) -> int:
    import contextlib
    import signal

    from drivers import SimulatedRig

    from ._catalog import Catalog
    from ._commands import CommandRouter
    from ._courier import Courier
    from ._mqtt import resolve_broker
    from ._outbox import Outbox
    from ._serve import RigDaemon

    def say(text: str) -> None:
        print(text, flush=True)

    if args.port:
        from drivers import SerialBridge

        source: Any = SerialBridge(args.port, rate_hz=int(settings.sample_rate_hz))
    else:
        sim = settings.sim
        source = SimulatedRig(rig=settings.rig, friction=sim.friction, pose_deg=sim.pose_deg,
                              rate_hz=settings.sample_rate_hz,
                              counts_per_rev=settings.counts_per_rev, block_size=sim.block_size,
                              paced=not args.unpaced, auto_release=False)
    directory = Path(settings.storage.directory)
    async with contextlib.AsyncExitStack() as stack:
        await stack.enter_async_context(source)
        url = await stack.enter_async_context(resolve_broker(settings.mqtt))
        outbox = Outbox(directory)
        stack.callback(outbox.close)
        catalog = Catalog.open(directory)
        stack.callback(catalog.close)
        router = CommandRouter(settings.mqtt.rig_id)
        courier = await stack.enter_async_context(
            Courier(settings.mqtt, outbox, url=url, source=source.info, commands=router,
                    on_delivered=lambda topic: say(f"published {topic}")))
        daemon = RigDaemon(settings, source, courier, router, catalog, say=say)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, daemon.stop)
        await daemon.run()
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    if args.sim == bool(args.port):
        raise UsageError("serve: choose one source: --sim or --port PATH")
    settings = _settings(args)
    return asyncio.run(_daemon(settings, args))


def _check_url(url: str | None) -> None:
    """A given --url must be mqtt://host[:port] (a usage error otherwise)."""
    if url is not None:
        from ._broker import parse_mqtt_url
        try:
            parse_mqtt_url(url)
        except ValueError as exc:
            raise UsageError(f"--url: {exc}") from None


def cmd_worker(args: argparse.Namespace) -> int:
    from ._workers import run_worker

    settings = _settings(args)
    _check_url(args.url)
    if args.max_jobs is not None and args.max_jobs < 1:
        raise UsageError(f"--max-jobs must be >= 1, got {args.max_jobs}")
    try:
        asyncio.run(run_worker(settings.mqtt, url=args.url, max_jobs=args.max_jobs,
                               say=lambda text: print(text, flush=True)))
    except KeyboardInterrupt:
        return 130
    return 0


def cmd_monitor(args: argparse.Namespace) -> int:
    from ._mqtt import monitor

    settings = _settings(args)
    _check_url(args.url)
    try:
        n = asyncio.run(monitor(settings.mqtt, url=args.url, max_messages=args.count,
                                timeout_s=args.timeout))
    except KeyboardInterrupt:
        return 130
    return 0 if n or args.count is None else 1


# -- parser -------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (the usage stays available with --help)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"hilrig: error: {self.prog.removeprefix('hilrig ')}: {message}\n"
                  if self.prog != "hilrig" else f"hilrig: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hilrig", description=__doc__.splitlines()[0])
    p.add_argument("--config", type=Path, help="TOML settings file (see deploy/hilrig.example.toml)")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("simulate", help="simulate a free decay of the rig into a capture file")
    s.add_argument("--out", required=True, help="FILE.h5 or FILE.csv")
    s.add_argument("--tilt", type=float, help="tilt of the arm axis, degrees (default: config, 10)")
    s.add_argument("--theta0", type=float, default=0.0, help="arm release angle, degrees")
    s.add_argument("--theta1", type=float, default=120.0, help="pendulum release angle, degrees")
    s.add_argument("--duration", type=float, default=35.0, help="seconds after release")
    s.add_argument("--rest", type=float, default=0.5, help="seconds held still before release")
    s.add_argument("--friction", help="JSON object of friction parameters (or @file.json)")
    s.add_argument("--force", action="store_true", help="overwrite an existing file")
    s.set_defaults(func=cmd_simulate)

    i = sub.add_parser("identify", help="identify the friction parameters of a capture file")
    i.add_argument("file", help="capture FILE.h5 or FILE.csv (header t,theta0,theta1)")
    i.add_argument("--tilt", type=float, help="tilt in degrees (overrides the file's rig)")
    i.add_argument("--method", default=DEFAULT_METHOD, choices=sorted(METHODS))
    i.add_argument("--json", action="store_true", help="print only the result as JSON")
    i.set_defaults(func=cmd_identify)

    c = sub.add_parser("compare", help="run every method on a capture: the seed's Table V")
    c.add_argument("file", help="capture FILE.h5 or FILE.csv")
    c.add_argument("--tilt", type=float, help="tilt in degrees (overrides the file's rig)")
    c.add_argument("--methods", help="comma-separated subset (default: all)")
    c.add_argument("--plot", metavar="DIR", help="write PNG figures like seed 000 Figs. 4-7")
    c.set_defaults(func=cmd_compare)

    e = sub.add_parser("export", help="convert a capture between HDF5 and CSV")
    e.add_argument("file")
    e.add_argument("--out", required=True)
    e.add_argument("--force", action="store_true")
    e.set_defaults(func=cmd_export)

    r = sub.add_parser("run", help="run the acquisition service")
    r.add_argument("--sim", action="store_true", help="use the simulated rig")
    r.add_argument("--port", metavar="PATH", help="use the serial bridge on this port")
    r.add_argument("--captures", type=int, help="stop after N identified captures")
    r.add_argument("--unpaced", action="store_true", help="simulate as fast as possible")
    r.add_argument("--method", default=None, choices=sorted(METHODS))
    r.set_defaults(func=cmd_run)

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
    ef.set_defaults(func=cmd_emulate_firmware)

    mo = sub.add_parser("monitor", help="print what the service publishes")
    mo.add_argument("--url", help="broker URL (default: config mqtt.url)")
    mo.add_argument("--count", type=int, help="stop after N messages")
    mo.add_argument("--timeout", type=float, help="stop after S seconds")
    mo.set_defaults(func=cmd_monitor)

    sv = sub.add_parser("serve", help="the rig's daemon: idle between sessions, started and "
                                      "driven by MQTT commands (docs/mqtt.md)")
    sv.add_argument("--sim", action="store_true", help="the simulated rig")
    sv.add_argument("--port", metavar="PATH", help="the serial bridge on this port")
    sv.add_argument("--unpaced", action="store_true", help="simulate as fast as possible")
    sv.set_defaults(func=cmd_serve)

    wk = sub.add_parser("worker", help="identify captures offloaded by rig services "
                                       "(identify.offload), from a shared MQTT subscription")
    wk.add_argument("--url", help="broker URL (default: config mqtt.url)")
    wk.add_argument("--max-jobs", type=int, help="stop after N jobs")
    wk.set_defaults(func=cmd_worker)

    cm = sub.add_parser("cmd", help="send a command to the running service over MQTT")
    cm.add_argument("verb", help="arm, abort, release, identify, session/start|stop|pause|resume")
    cm.add_argument("body", nargs="?", help='the request as JSON, e.g. \'{"capture_id": "..."}\'')
    cm.add_argument("--url", help="broker URL (default: config mqtt.url)")
    cm.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the reply")
    cm.set_defaults(func=cmd_cmd)

    from ._session_cli import add_commands
    add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    for noisy in ("amqtt", "transitions", "numba"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return args.func(args)
    except (UsageError, ConfigError, CaptureFileError, *SESSION_ERRORS) as exc:
        print(f"hilrig: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ConnectionError as exc:
        print(f"hilrig: error: {exc}", file=sys.stderr)
        return 1
    except FileExistsError as exc:
        print(f"hilrig: error: {exc}; use --force to overwrite", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
