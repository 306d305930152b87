"""Serial bridge benchmark: what SerialBridge sustains over a pty, and what it costs.

Prints figures; asserts nothing. The firmware emulator runs in its own process
(`hilrig emulate-firmware`), so the driver's CPU time (time.process_time of this
process) is the driver's alone; the emulator's is read from /proc.

1. Unpaced: the emulator streams as fast as the host reads; samples/s the driver
   sustains end to end (pty, COBS, CRC, decoding, index mapping, blocks), and the
   driver's CPU seconds per second of 10 kHz data.
2. Paced at 10 kHz (the real rate): the driver's CPU use, percent of one core.

    python bench/bench_serial.py [--samples N] [--paced-seconds S]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hilrig.drivers.serial import SerialBridge

RATE = 10_000
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of another process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def start_emulator(link: Path, *extra: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "hilrig", "emulate-firmware",
                             "--link", str(link), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if proc.stdout.readline().strip() != str(link):
        raise SystemExit("the emulator did not start")
    return proc


async def stream(port: str, samples: int) -> dict[str, float]:
    async with SerialBridge(port) as bridge:
        n = 0
        blocks = 0
        # the first block is the handshake's; measure from it on
        async for block in bridge.blocks():
            n = len(block)
            break
        w0, c0 = time.perf_counter(), time.process_time()
        async for block in bridge.blocks():
            n += len(block)
            blocks += 1
            if n >= samples:
                break
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        stats = bridge.stats
    return {"samples": n, "blocks": blocks, "wall": wall, "cpu": cpu,
            "lost": stats.lost_samples, "frames": stats.frames}


def run(link: Path, samples: int, *extra: str) -> tuple[dict[str, float], float]:
    emu = start_emulator(link, *extra)
    try:
        e0 = cpu_of(emu.pid)
        result = asyncio.run(stream(str(link), samples))
        emu_cpu = cpu_of(emu.pid) - e0
    finally:
        emu.terminate()
        emu.wait(10)
    return result, emu_cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=3_000_000, help="unpaced samples")
    ap.add_argument("--paced-seconds", type=float, default=20.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        link = Path(tmp) / "ttyEMU"

        r, emu_cpu = run(link, args.samples, "--unpaced")
        rate = r["samples"] / r["wall"]
        data_s = r["samples"] / RATE
        print(f"unpaced: {r['samples']:,} samples in {r['wall']:.2f} s = {rate:,.0f} samples/s "
              f"({rate / RATE:.1f}x real time), {r['lost']} lost, "
              f"{r['samples'] / r['blocks']:.0f} samples/block")
        print(f"  driver CPU {r['cpu']:.2f} s = {r['cpu'] / data_s * 1e3:.1f} ms per second of "
              f"10 kHz data ({r['cpu'] / r['frames'] * 1e6:.1f} us per frame); "
              f"emulator CPU {emu_cpu:.2f} s (the bottleneck is the "
              f"{'emulator' if emu_cpu > r['cpu'] else 'driver'})")

        n = int(args.paced_seconds * RATE)
        r, emu_cpu = run(link, n)
        print(f"paced 10 kHz: {r['samples']:,} samples in {r['wall']:.2f} s, {r['lost']} lost, "
              f"{r['samples'] / r['blocks']:.0f} samples/block")
        print(f"  driver CPU {r['cpu']:.2f} s = {100 * r['cpu'] / r['wall']:.1f} % of one core "
              f"({r['cpu'] / (r['samples'] / RATE) * 1e3:.1f} ms per second of data); "
              f"emulator {100 * emu_cpu / r['wall']:.1f} %")


if __name__ == "__main__":
    main()
