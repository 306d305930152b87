"""What the acquisition engine costs per block, against the bare ring + trigger loop.

A recorded free decay (35 s at 10 kHz, blocks of 100 samples as the bridge sends them)
is replayed from memory, so the source costs nothing: the figures are the engine's own.
The baseline is the same ring buffer and trigger driven by a plain loop, measured in the
same run; the engine adds link watching, events, and an async generator per block.

    python bench/bench_engine.py
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from typing import Self

from hilrig.daq.acquisition import AcquisitionEngine, CaptureTaken, FreeDecayTrigger, RingBuffer
from hilrig.daq.config import load_settings
from hilrig.drivers import SampleBlock, SourceInfo, SourceStats
from hilrig.drivers.sim import SimulatedRig

BLOCK = 100
RATE = 10_000.0


class Replay:
    """A source that hands out prepared blocks as fast as they are read."""

    def __init__(self, blocks: list[SampleBlock]) -> None:
        self.info = SourceInfo(kind="replay", identity="bench", sample_rate_hz=RATE,
                               counts_per_rev=(40_000, 40_000))
        self.stats = SourceStats()
        self._blocks = blocks

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        pass

    async def blocks(self) -> AsyncIterator[SampleBlock]:
        for block in self._blocks:
            yield block


def recorded_decay() -> list[SampleBlock]:
    rig = SimulatedRig(pose_deg=(0.0, 120.0), paced=False, hold_s=1.0, block_size=BLOCK)
    n = int(45 * RATE) // BLOCK  # held 1 s, then the swing (about 35 s) and rest
    return [SampleBlock(b.first_index, b.counts, float(k) / 100) for k, b in
            enumerate(rig.read(BLOCK) for _ in range(n))]


def bare_loop(blocks: list[SampleBlock]) -> float:
    s = load_settings(None)
    ring = RingBuffer.from_seconds(s.ring.seconds, RATE)
    trigger = FreeDecayTrigger(s.trigger, RATE)
    t0 = time.perf_counter()
    for block in blocks:
        ring.write(block)
        trigger.process(block)
    return time.perf_counter() - t0


async def engine_loop(blocks: list[SampleBlock]) -> tuple[float, int]:
    s = load_settings(None)
    engine = AcquisitionEngine(Replay(blocks), rig=s.rig, trigger=s.trigger,
                               ring_s=s.ring.seconds)
    taken = 0
    t0 = time.perf_counter()
    async for event in engine.events():
        if isinstance(event, CaptureTaken):
            taken += 1
    return time.perf_counter() - t0, taken


def main() -> None:
    blocks = recorded_decay()
    bare_loop(blocks[:200])  # warm up (filters, allocations)
    bare, engine, taken = [], [], 0
    for _ in range(5):
        bare.append(bare_loop(blocks))
        seconds, taken = asyncio.run(engine_loop(blocks))
        engine.append(seconds)
    b, e = min(bare), min(engine)
    n = len(blocks)
    print(f"{n} blocks of {BLOCK} samples ({n * BLOCK / RATE:.0f} s at 10 kHz), "
          f"{taken} capture taken; best of 5")
    print(f"  ring + trigger, plain loop   {b * 1e6 / n:7.1f} us/block  "
          f"{n / b:9.0f} blocks/s")
    print(f"  acquisition engine (events)  {e * 1e6 / n:7.1f} us/block  "
          f"{n / e:9.0f} blocks/s  ({e / b:.2f}x the plain loop)")
    print(f"  real time at 10 kHz needs {RATE / BLOCK:.0f} blocks/s: the engine runs "
          f"{n / e / (RATE / BLOCK):.0f}x faster than that")
    assert math.isfinite(e)


if __name__ == "__main__":
    main()
