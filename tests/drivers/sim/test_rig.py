"""The simulated rig behaves like the serial bridge a consumer will later read.

Blocks carry consecutive device sample indices, counts are the int32 quantised
angles of the model's own simulation, the rig is held still until its release, and
paced blocks arrive in real time.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from hilrig.drivers import Holdable, LinkHealth, Pacing, Releasable, SampleBlock, Source
from hilrig.drivers.sim import SimulatedRig
from hilrig.identify import TABLE_III_TRUTH, FrictionParams, RigParams, simulate, total_energy

RATE = 10_000.0
CPR = 40_000
SCALE = CPR / (2.0 * math.pi)  # counts per radian


def expected_counts(rig: RigParams, friction: FrictionParams, pose_deg, n: int) -> np.ndarray:
    """Counts of n samples from a release at pose_deg (row 0 is the release sample)."""
    x0 = [math.radians(pose_deg[0]), math.radians(pose_deg[1]), 0.0, 0.0]
    _, states, _ = simulate(rig, friction, x0, (n - 1) / RATE, rate_hz=RATE)
    assert states.shape[0] == n
    return np.rint(states[:, :2] * SCALE).astype(np.int32)


def pose_counts(pose_deg) -> np.ndarray:
    return np.rint(np.radians(np.asarray(pose_deg, dtype=np.float64)) * SCALE).astype(np.int32)


async def collect(src: SimulatedRig, samples: int) -> list[SampleBlock]:
    blocks: list[SampleBlock] = []
    async with src:
        async for block in src.blocks():
            blocks.append(block)
            if block.end_index - blocks[0].first_index >= samples:
                break
    return blocks


def test_is_a_source_that_releases_holds_and_paces_itself_over_no_link():
    src = SimulatedRig(paced=False)
    assert isinstance(src, Source)
    assert isinstance(src, Releasable) and src.can_release
    assert isinstance(src, Holdable) and isinstance(src, Pacing)
    assert not isinstance(src, LinkHealth)  # nothing to lose: no port, no reconnection
    assert src.info.kind == "simulated"
    assert src.info.sample_rate_hz == RATE
    assert src.info.counts_per_rev == (CPR, CPR)


async def test_blocks_are_consecutive_int32_without_gaps():
    src = SimulatedRig(pose_deg=(0.0, 120.0), block_size=37, paced=False, hold_s=0.01)
    blocks = await collect(src, 3_000)
    assert blocks[0].first_index == 0
    for before, after in zip(blocks, blocks[1:]):
        assert after.first_index == before.end_index
    for block in blocks:
        assert block.counts.dtype == np.int32
        assert block.counts.shape == (37, 2)
        assert block.flags == 0
    assert [b.host_time for b in blocks] == sorted(b.host_time for b in blocks)
    assert src.stats.samples == sum(len(b) for b in blocks)
    assert src.stats.lost_samples == 0


def test_reads_of_any_size_continue_where_the_last_ended():
    src = SimulatedRig(paced=False, hold_s=0.002)
    sizes = [1, 7, 100, 3, 1000, 29]
    blocks = [src.read(n) for n in sizes]
    assert [b.first_index for b in blocks] == list(np.cumsum([0] + sizes[:-1]))
    joined = np.concatenate([b.counts for b in blocks])
    whole = SimulatedRig(paced=False, hold_s=0.002).read(sum(sizes)).counts
    np.testing.assert_array_equal(joined, whole)


@pytest.mark.parametrize("pose, friction, tilt", [
    ((0.0, 120.0), TABLE_III_TRUTH, 10.0),
    ((25.0, -60.0), TABLE_III_TRUTH.model_copy(update={"mu_d1": 2e-3, "mu_v0": 1e-3}), 30.0),
])
def test_held_at_the_pose_then_counts_follow_the_model_from_release(pose, friction, tilt):
    rig = RigParams(tilt_deg=tilt)
    hold = 0.05  # 500 samples
    src = SimulatedRig(rig=rig, friction=friction, pose_deg=pose, paced=False, hold_s=hold,
                       block_size=128)
    assert src.held and src.release_index is None
    before = src.read(500).counts
    assert src.release_index is None  # nothing let go yet
    assert np.all(before == pose_counts(pose))
    after = np.concatenate([src.read(1000).counts for _ in range(20)])  # 2 s of motion
    assert src.release_index == 500
    assert not src.held
    np.testing.assert_array_equal(after, expected_counts(rig, friction, pose, after.shape[0]))
    # motion begins at the release: the pendulum leaves its pose within 5 ms
    moved = np.flatnonzero(np.any(after != pose_counts(pose), axis=1))
    assert 0 < moved[0] <= 50


def test_hold_puts_it_back_at_a_pose_and_schedules_the_release():
    rig = RigParams()
    src = SimulatedRig(rig=rig, paced=False, hold_s=0.0)
    src.read(5_000)  # swinging
    assert src.release_index == 0 and not src.held
    src.hold((-30.0, 90.0), release_in_s=0.02)
    assert src.held
    held = src.read(200).counts  # indices 5000..5199
    assert np.all(held == pose_counts((-30.0, 90.0)))
    assert src.release_index == 0  # still the last release
    free = src.read(5_000).counts  # indices 5200..10199
    assert src.release_index == 5_200
    np.testing.assert_array_equal(
        free, expected_counts(rig, TABLE_III_TRUTH, (-30.0, 90.0), free.shape[0]))


async def test_hold_without_release_keeps_it_still_until_released():
    src = SimulatedRig(paced=False, auto_release=False)
    still = src.read(3_000).counts
    assert np.all(still == pose_counts((0.0, 120.0)))
    assert src.held and src.release_index is None
    assert await src.release() == 3_000  # the index of the first sample let go
    moving = src.read(3_000).counts
    assert src.release_index == 3_000
    assert np.ptp(moving[:, 1]) > 100


async def test_paced_blocks_arrive_in_about_real_time():
    src = SimulatedRig(paced=True, hold_s=0.1, block_size=100)
    src.read(1)  # the compiled model is loaded before timing
    t0 = time.monotonic()
    blocks = await collect(src, 3_000)  # 0.3 s of samples
    elapsed = time.monotonic() - t0
    assert blocks[-1].end_index - blocks[0].first_index >= 3_000
    assert elapsed >= 0.25


async def test_unpaced_blocks_are_not_paced():
    SimulatedRig(paced=False, hold_s=0.0).read(10)  # the compiled model is loaded before timing
    src = SimulatedRig(paced=False, hold_s=0.1, block_size=100)
    t0 = time.monotonic()
    blocks = await collect(src, 20_000)  # 2 s of samples, mostly free motion
    elapsed = time.monotonic() - t0
    assert blocks[-1].end_index - blocks[0].first_index >= 20_000
    assert elapsed < 1.0


def test_frictionless_counts_stay_within_the_energy_envelope():
    rig = RigParams()
    ra = rig.as_array()
    src = SimulatedRig(rig=rig, friction=FrictionParams.frictionless(), pose_deg=(0.0, 120.0),
                       paced=False, hold_s=0.0)
    q = src.read(100_000).counts[::10] * (2.0 * math.pi / CPR)  # 10 s
    potential = np.array([total_energy(ra, a, b, 0.0, 0.0) for a, b in q])
    e0 = total_energy(ra, 0.0, math.radians(120.0), 0.0, 0.0)
    bottom = total_energy(ra, 0.0, 0.0, 0.0, 0.0)
    span = e0 - bottom
    # potential energy of what the encoders show never exceeds the release energy...
    assert potential.max() <= e0 + 1e-3 * span
    # ...and without friction it keeps swinging back up to it (no hidden damping)
    last_two_seconds = potential[-2_000:]
    assert last_two_seconds.max() >= e0 - 0.01 * span


@pytest.mark.parametrize("kwargs", [
    {"block_size": 0},
    {"rate_hz": 0.0},
    {"rate_hz": -10_000.0},
    {"rate_hz": math.nan},
    {"rate_hz": math.inf},
    {"counts_per_rev": 3},
    {"hold_s": math.nan},
    {"hold_s": math.inf},
])
def test_invalid_arguments_raise_value_error(kwargs):
    with pytest.raises(ValueError):
        SimulatedRig(paced=False, **kwargs)


# --- as a real rig: every release differs, frames go missing ---------------------------------

from hilrig.identify.model import Realism  # noqa: E402

REAL = Realism(seed=11, rig_error=0.05, hand_tremor_rad=0.002, push_rad_s=(0.05, -0.15),
               jitter_counts=1, lost_frames=0.01)


def _release_from(rig: SimulatedRig, pose, n: int) -> np.ndarray:
    rig.hold(pose, release_in_s=0.2)
    return np.concatenate([rig.read(1000).counts for _ in range(n)])


def test_a_realistic_rig_is_built_once_off_nominal_and_released_differently_each_time():
    rig = SimulatedRig(pose_deg=(0.0, 60.0), paced=False, hold_s=0.2, realism=REAL)
    assert rig.rig != RigParams() and rig.nominal == RigParams()
    assert rig.info.identity == "sim:tilt=10deg"
    first = _release_from(rig, (0.0, 60.0), 10)
    second = _release_from(rig, (0.0, 60.0), 10)
    assert not np.array_equal(first, second)  # another tremor, another push
    assert np.abs(first[:2000, 1] - first[0, 1]).max() >= 2  # the hand trembles
    # the same seed builds the same rig and makes the same first capture
    again = SimulatedRig(pose_deg=(0.0, 60.0), paced=False, hold_s=0.2, realism=REAL)
    assert again.rig == rig.rig
    np.testing.assert_array_equal(_release_from(again, (0.0, 60.0), 10), first)


async def test_lost_frames_arrive_as_gaps_of_whole_frames_and_are_counted():
    rig = SimulatedRig(pose_deg=(0.0, 60.0), paced=False, hold_s=0.2, realism=REAL,
                       block_size=100)
    seen: list[SampleBlock] = []
    async with rig:
        async for block in rig.blocks():
            seen.append(block)
            if block.end_index >= 50_000:
                break
    index = np.concatenate([b.first_index + np.arange(len(b)) for b in seen])
    missing = int(index[-1]) + 1 - index.size
    assert missing == rig.stats.lost_samples and 0.005 < missing / index[-1] < 0.02
    assert np.all(np.diff(index) > 0) and np.all((np.diff(index) - 1) % 10 == 0)


def test_a_drifting_friction_swings_as_the_drifted_one_at_the_sessions_hour():
    """drift_per_hour moves the friction by the session's time at each release: a
    device 2 h into its session swings as one built with that friction."""
    from hilrig.identify.model import Realism, drifted_friction

    drift = Realism(drift_per_hour={"mu_v1": 0.05, "mu_d0": -0.02})
    hold = 0.05
    src = SimulatedRig(friction=TABLE_III_TRUTH, paced=False, hold_s=hold, realism=drift,
                       session_hours=2.0)
    at_release = 2.0 + hold / 3600.0
    moved = drifted_friction(TABLE_III_TRUTH, drift, at_release)
    assert moved.mu_v1 == pytest.approx(TABLE_III_TRUTH.mu_v1 * 1.1, rel=1e-4)
    assert moved.mu_d0 == pytest.approx(TABLE_III_TRUTH.mu_d0 * 0.96, rel=1e-4)
    built = SimulatedRig(friction=moved, paced=False, hold_s=hold)
    np.testing.assert_array_equal(src.read(20_000).counts, built.read(20_000).counts)
    assert src.session_hours == pytest.approx(2.0 + 2.0 / 3600.0)


def test_a_drift_names_a_friction_parameter_and_a_rate_within_one_per_hour():
    from pydantic import ValidationError

    from hilrig.identify.model import Realism

    with pytest.raises(ValidationError, match="not a friction parameter"):
        Realism(drift_per_hour={"mu_x": 0.1})
    with pytest.raises(ValidationError, match="not within"):
        Realism(drift_per_hour={"mu_v1": 2.0})
    with pytest.raises(ValueError, match="session_hours"):
        SimulatedRig(session_hours=-1.0)


def test_a_furuta_rig_refuses_a_chain_rigs_drift_when_built():
    from hilrig.identify.model import Realism

    with pytest.raises(ValueError, match="drift of b1: a chain rig's friction term"):
        SimulatedRig(paced=False, realism=Realism(drift_per_hour={"b1": 0.1}))
