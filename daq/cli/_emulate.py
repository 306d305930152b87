"""`hilrig emulate-firmware`: the bridge firmware emulated on a pseudo-terminal.

A test tool: this module is the only one of daq that imports it (an import contract
says so), and only this command loads it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys

from hilrig.drivers.emulator import EmulatorConfig, FirmwareEmulator, parse_window

from ._usage import UsageError, settings_of

__all__ = ["cmd_emulate_firmware"]


def cmd_emulate_firmware(args: argparse.Namespace) -> int:
    try:
        windows = {name: parse_window(getattr(args, name), f"--{name}")
                   if getattr(args, name) else None for name in ("stall", "vanish", "garbage")}
        cfg = EmulatorConfig(
            corrupt=args.corrupt, drop=args.drop, reset_at=args.reset, version=args.version,
            latch=args.latch, pose_deg=tuple(args.pose), link=args.link, paced=not args.unpaced,
            rate_hz=int(settings_of(args).sample_rate_hz), stall=windows["stall"],
            vanish=windows["vanish"], garbage=windows["garbage"],
            record_sent=args.dump is not None)
        if any(not -360.0 <= a <= 360.0 for a in args.pose):
            raise ValueError(f"--pose {args.pose[0]:g} {args.pose[1]:g}: angles must be "
                             "within -360..360 degrees")
        if args.dump is not None and not args.dump.endswith(".npz"):
            raise ValueError(f"--dump {args.dump}: the file must end in .npz")
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
        if args.dump is not None:
            dump(emu, args.dump)
    return 1 if emu.error else 0


def dump(emu: FirmwareEmulator, path: str) -> None:
    """The emulator's record to `path`, whole or not at all."""
    tmp = f"{path}.part.npz"
    try:
        emu.record.save(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        print(f"hilrig: error: --dump {path}: {exc.strerror or exc}", file=sys.stderr)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return
    print(f"hilrig: wrote what the emulator sent to {path}", file=sys.stderr, flush=True)
