"""Decode throughput of the bridge protocol (firmware_protocol.StreamDecoder).

60 s of a 10 kHz free decay (600,000 samples of two channels) as SAMPLES frames of 10
samples (plus a STATUS frame a second), fed in 4 KiB chunks, against two baselines
measured in the same run:

- ``naive``: a per-byte COBS state machine and a per-sample ``struct`` unpack, the way
  a first receiver is usually written;
- ``per-frame``: the public one-frame functions (``cobs_decode``, ``parse_frame``,
  ``decode_message``) called for each segment of ``bytes.split(b"\\x00")``.

Prints samples/s and MB/s (of wire bytes), the best of ``--repeat`` runs each, and
the ratios, then the StreamDecoder's rate for other chunk sizes (below 512 bytes per
feed it decodes frame by frame). The goal of the issue is >= 2,000,000 samples/s on
one core.

    python bench/bench_decode.py [--seconds 60] [--repeat 5] [--samples-per-frame 10]
"""

from __future__ import annotations

import argparse
import struct
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hilrig.firmware_protocol as fp  # noqa: E402

RATE = 10_000
CHUNK = 4096


def make_stream(seconds: float, per_frame: int) -> tuple[bytes, int]:
    """Wire bytes of a free decay: counts of a damped swing of both joints."""
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    pend = 13_333 * np.exp(-t / 12) * np.cos(2 * np.pi * 1.1 * t) + 20_000
    arm = 3_000 * np.exp(-t / 8) * np.sin(2 * np.pi * 0.4 * t)
    counts = np.rint(np.stack([arm, pend], axis=1)).astype(np.int32)
    parts = []
    seq = 0
    for first in range(0, n, per_frame):
        parts.append(fp.encode_message(fp.Samples(first, counts[first:first + per_frame]), seq))
        seq += 1
        if first % RATE == 0 and first:
            parts.append(fp.encode_message(fp.Status(first * 100, first, 0, 0, 0, 0, 0,
                                                     first + per_frame), seq))
            seq += 1
    return b"".join(parts), n


def decode_fast(wire: bytes, chunk: int = CHUNK) -> int:
    dec = fp.StreamDecoder()
    n = 0
    for i in range(0, len(wire), chunk):
        for _frame, msg in dec.feed(wire[i:i + chunk]):
            if type(msg) is fp.Samples:
                n += msg.counts.shape[0]
    return n


def decode_per_frame(wire: bytes) -> int:
    buf = b""
    n = 0
    for i in range(0, len(wire), CHUNK):
        *segments, buf = (buf + wire[i:i + CHUNK]).split(b"\x00")
        for seg in segments:
            if not seg:
                continue
            try:
                msg = fp.decode_message(fp.parse_frame(fp.cobs_decode(seg)))
            except ValueError:
                continue
            if type(msg) is fp.Samples:
                n += msg.counts.shape[0]
    return n


def decode_naive(wire: bytes) -> int:
    """Per-byte COBS decoding and per-sample unpacking."""
    n = 0
    out = bytearray()
    code = left = 0
    pending_zero = False
    for i in range(0, len(wire), CHUNK):
        for byte in wire[i:i + CHUNK]:
            if byte == 0:
                if left == 0 and len(out) >= 20:
                    frame = bytes(out)
                    if zlib.crc32(frame[:-4]) == struct.unpack("<I", frame[-4:])[0] \
                            and frame[0] == 1 and frame[1] == 0x82:
                        ns = struct.unpack_from("<H", frame, 12)[0]
                        samples = [struct.unpack_from("<ii", frame, 16 + 8 * k)
                                   for k in range(ns)]
                        n += len(samples)
                out.clear()
                code = left = 0
                pending_zero = False
            elif left == 0:
                if pending_zero:
                    out.append(0)
                code = left = byte
                left -= 1
                pending_zero = code != 0xFF
            else:
                out.append(byte)
                left -= 1
    return n


def best_of(fn, wire: bytes, expected: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        got = fn(wire)
        best = min(best, time.perf_counter() - t0)
        if got != expected:
            raise SystemExit(f"{fn.__name__} decoded {got} samples, expected {expected}")
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--samples-per-frame", type=int, default=10)
    ap.add_argument("--naive-seconds", type=float, default=6.0,
                    help="the naive baseline decodes only this much (it is slow); rates compare")
    args = ap.parse_args()
    wire, n = make_stream(args.seconds, args.samples_per_frame)
    naive_wire, naive_n = make_stream(min(args.naive_seconds, args.seconds), args.samples_per_frame)
    print(f"stream: {args.seconds:g} s at {RATE} Hz, {n:,} samples, {args.samples_per_frame} per "
          f"frame, {len(wire):,} wire bytes, {CHUNK} B chunks, python {sys.version.split()[0]}, "
          f"numpy {np.__version__}")
    rows = []
    for name, fn, w, k in [("StreamDecoder", decode_fast, wire, n),
                           ("per-frame functions", decode_per_frame, wire, n),
                           ("naive per-byte", decode_naive, naive_wire, naive_n)]:
        dt = best_of(fn, w, k, args.repeat if fn is not decode_naive else 2)
        rows.append((name, k / dt, len(w) / dt / 1e6))
        print(f"{name:22s} {k / dt:>14,.0f} samples/s {len(w) / dt / 1e6:8.2f} MB/s "
              f"({dt:.3f} s for {k:,} samples)")
    fast = rows[0][1]
    for name, rate, _ in rows[1:]:
        print(f"ratio StreamDecoder / {name}: {fast / rate:.1f}x")
    sweep = []
    for chunk in (64, 256, 1024, 4096, 65536):
        dt = best_of(lambda w, c=chunk: decode_fast(w, c), wire, n, max(1, args.repeat // 2))
        sweep.append(f"{chunk} B: {n / dt / 1e6:.2f}")
    print("StreamDecoder by chunk size (M samples/s):", ", ".join(sweep))
    print(f"goal >= 2,000,000 samples/s: {'met' if fast >= 2e6 else 'NOT met'} "
          f"({fast / 2e6:.2f} of goal)")


if __name__ == "__main__":
    main()
