"""The acquisition engine alone: a source in, events out; no MQTT, no catalog, no files."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Self

import numpy as np
import pytest

from hilrig.daq.acquisition import (
    AcquisitionEngine,
    BlockSeen,
    CaptureAborted,
    CaptureProgress,
    CaptureStarted,
    CaptureTaken,
    LinkChanged,
    Telemetry,
    TriggerArmed,
    TriggerState,
)
from hilrig.daq.config import load_settings
from hilrig.drivers import Conditions, SampleBlock, Source, SourceInfo, SourceStats
from hilrig.drivers.sim import SimulatedRig
from hilrig.identify.model import Realism

POSE = (0.0, 30.0)  # a 20 s decay


def _engine(source: Source, **kw) -> AcquisitionEngine:
    s = load_settings(None)
    return AcquisitionEngine(source, rig=s.rig, trigger=s.trigger, ring_s=s.ring.seconds, **kw)


def _sim(**kw) -> SimulatedRig:
    return SimulatedRig(pose_deg=POSE, paced=False, hold_s=0.5, **kw)


class Scripted:
    """A source that yields the given blocks, then nothing at all (a silent link)."""

    def __init__(self, blocks: list[SampleBlock], lost_at: dict[int, int] | None = None) -> None:
        self.info = SourceInfo(kind="replay", identity="scripted", sample_rate_hz=10_000.0,
                               counts_per_rev=(40_000, 40_000))
        self.stats = SourceStats()
        self._blocks = blocks
        self._lost_at = lost_at or {}  # block number -> samples lost before it
        self.closed = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.closed = True

    async def blocks(self) -> AsyncIterator[SampleBlock]:
        for k, block in enumerate(self._blocks):
            self.stats.lost_samples += self._lost_at.get(k, 0)
            await asyncio.sleep(0)
            yield block
        await asyncio.Event().wait()  # silent for ever


def _still(first: int, n: int, host_time: float = 0.0) -> SampleBlock:
    return SampleBlock(first, np.zeros((n, 2), np.int32), host_time)


async def test_a_release_becomes_one_capture_announced_by_events_in_order():
    engine = _engine(_sim(), progress_s=0.0)
    seen: list[type] = []
    taken = None
    async for event in engine.events():
        seen.append(type(event))
        if isinstance(event, CaptureTaken):
            taken = event
            break
    kinds = [k for k in seen if k is not BlockSeen]
    assert kinds[0] is TriggerArmed and kinds[1] is CaptureStarted
    assert kinds[-1] is CaptureTaken and CaptureProgress in kinds
    assert taken is not None
    capture = taken.capture
    # the capture keeps the still window before the motion and every sample after it
    assert np.all(np.diff(capture.sample_index) == 1)
    onset = capture.trigger.onset_index - capture.sample_index[0]
    assert onset == pytest.approx(0.5 * 10_000, abs=1)
    assert (capture.counts[:onset] == capture.counts[0]).all()
    assert capture.trigger.end_reason == "settled" and capture.duration_s > 10
    assert taken.link_errors == {}
    # after a capture the trigger waits for the policy: nothing more is recorded
    assert engine.trigger_state is TriggerState.SETTLED and engine.recording is None


async def test_a_capture_records_the_conditions_its_source_reads_as_the_rig_is_let_go():
    # the simulated rig in a lab at 21 degC warming 1.5 degC an hour, 2 h into a session
    rig = _sim(realism=Realism(temperature_c=21.0, warming_c_per_hour=1.5), session_hours=2.0)
    assert isinstance(rig, Conditions)
    async for event in _engine(rig).events():
        if isinstance(event, CaptureTaken):
            assert event.capture.covariates == {"temperature_c": pytest.approx(24.0, abs=1e-3)}
            break
    async for event in _engine(_sim()).events():  # one without: records none
        if isinstance(event, CaptureTaken):
            assert event.capture.covariates == {}
            break


async def test_each_block_ends_with_block_seen_at_its_end_index():
    engine = _engine(_sim(block_size=250))
    ends = []
    async for event in engine.events():
        if isinstance(event, BlockSeen):
            ends.append(event.end_index)
            if len(ends) == 8:
                break
    assert ends == [250 * k for k in range(1, 9)]


async def test_an_aborted_capture_is_dropped_and_the_next_release_is_captured_after_arming():
    rig = _sim()
    engine = _engine(rig)
    events = []
    async for event in engine.events():
        events.append(event)
        first = not any(isinstance(e, CaptureStarted) for e in events[:-1])
        if isinstance(event, CaptureStarted) and first:
            assert engine.abort() == event.capture_id
            assert engine.recording == event.capture_id  # dropped at the next block
        elif isinstance(event, CaptureAborted):
            assert engine.recording is None and engine.trigger_state is TriggerState.SETTLED
            rig.hold(POSE, release_in_s=0.5)  # put back and let go again
            engine.arm()
        elif isinstance(event, CaptureTaken):
            break
    started = [e.capture_id for e in events if isinstance(e, CaptureStarted)]
    aborted = [e.capture_id for e in events if isinstance(e, CaptureAborted)]
    taken = [e.capture.capture_id for e in events if isinstance(e, CaptureTaken)]
    assert len(started) == 2 and aborted == started[:1] and taken == started[1:]
    assert engine.abort() is None  # nothing records now


async def test_halt_ends_the_events_of_a_source_gone_silent():
    source = Scripted([_still(0, 100), _still(100, 100)])
    engine = _engine(source)
    got: list[object] = []

    async def consume() -> None:
        async for event in engine.events():
            got.append(event)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.2)  # both blocks consumed; the source is silent now
    assert not task.done()
    engine.halt()
    await asyncio.wait_for(task, 5)  # ends as after the last block, no exception
    assert [e.end_index for e in got if isinstance(e, BlockSeen)] == [100, 200]
    assert source.closed


async def test_a_run_cancelled_from_outside_is_cancelled_not_halted():
    engine = _engine(Scripted([_still(0, 100)]))

    async def consume() -> None:
        async for _ in engine.events():
            pass

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_link_health_changes_are_told_with_their_totals():
    blocks = [_still(100 * k, 100, host_time=float(k)) for k in range(6)]
    source = Scripted(blocks, lost_at={3: 40})
    engine = _engine(source)
    changes: list[LinkChanged] = []
    async for event in engine.events():
        if isinstance(event, LinkChanged):
            changes.append(event)
        if isinstance(event, BlockSeen) and event.end_index == 600:
            break
    assert len(changes) == 1
    assert changes[0].health["lost_samples"] == 40
    assert changes[0].summary == "40 samples lost (totals)"


async def test_telemetry_is_decimated_only_when_asked_for():
    async def bodies(hz: float) -> list[dict]:
        engine = _engine(_sim(), telemetry_hz=hz)
        out = []
        async for event in engine.events():
            if isinstance(event, Telemetry):
                out.append(event.body)
            if isinstance(event, BlockSeen) and event.end_index >= 10_000:
                break
        return out

    assert await bodies(0.0) == []
    got = await bodies(100.0)
    assert len(got) == 10 and got[0]["rate_hz"] == 100.0  # 1 s at 100 Hz, 10 per message


async def test_a_break_of_unknown_length_ends_the_capture_at_the_break():
    # a release recorded for 0.5 s, then the board resets: what follows has an index that
    # only estimates the outage, so the capture ends with what came before
    rig = _sim(block_size=100)
    blocks: list[SampleBlock] = []
    while len(blocks) < 200:  # 1.5 s held (the trigger arms), then 0.5 s of swing
        blocks.append(rig.read(100))
    after = rig.read(100)
    blocks.append(SampleBlock(after.first_index + 12_345, after.counts, after.host_time,
                              continuous=False))
    blocks += [SampleBlock(b.first_index + 12_345, b.counts, b.host_time)
               for b in (rig.read(100) for _ in range(5))]
    engine = _engine(Scripted(blocks))
    taken = None
    async for event in engine.events():
        if isinstance(event, CaptureTaken):
            taken = event
        if isinstance(event, BlockSeen) and event.end_index == blocks[-1].end_index:
            break
    assert taken is not None
    capture = taken.capture
    assert capture.trigger.end_reason == "discontinuity"
    assert capture.sample_index[-1] == 20_000 - 1  # the last sample before the break
    assert capture.gaps() == []  # nothing after the break was joined to it
    assert engine.recording is None


async def test_a_capture_after_a_break_never_reaches_back_across_it():
    # held still, the board resets, and the rig is released 0.45 s after the stream is
    # back (within the 0.5 s pre-trigger): the pre-trigger and the onset look-back stop
    # at the break, and the trigger arms only on rest seen after it
    rig = SimulatedRig(pose_deg=POSE, paced=False, hold_s=1.5, block_size=100)
    before = [rig.read(100) for _ in range(105)]  # 1.05 s of the hold
    shift = 3  # an outage estimated at 3 samples: shorter than bridge_gap_s
    first_after = before[-1].end_index + shift
    stream = [*before]
    for k in range(300):  # the rest of the hold and the swing
        b = rig.read(100)
        stream.append(SampleBlock(b.first_index + shift, b.counts, b.host_time,
                                  continuous=k > 0))
    engine = _engine(Scripted(stream))
    started = None
    async for event in engine.events():
        if isinstance(event, CaptureStarted):
            started = event
        if isinstance(event, CaptureTaken | BlockSeen) and \
                (isinstance(event, CaptureTaken) or event.end_index == stream[-1].end_index):
            break
    assert started is not None
    assert started.start_index >= first_after
    assert started.trigger.onset_index >= first_after
