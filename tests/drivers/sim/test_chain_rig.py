"""The simulated rig as a single or double pendulum: the chain model's motion on the bridge's
two channels, mounted as the lab says, block after block as one simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hilrig.drivers import Source
from hilrig.drivers.sim import ChainMount, SimulatedChainRig
from hilrig.identify import ChainParams, ChainRig
from hilrig.identify.model import encoder_quantum

RATE = 1000.0


def _params(links: int) -> ChainParams:
    p = ChainParams.physical([0.85, 0.65][:links], [0.12, 0.17][:links], [0.25],
                             [4.6e-3, 5.8e-3][:links], [3e-3, 1.5e-3][:links])
    fr = p.friction.copy()
    fr[:, 0] = 4e-3
    fr[:, 1] = 7e-3
    fr[:, 2] = 0.05
    return ChainParams(p.inertial, fr)


def _released(mount: ChainMount, pose=(30.0, 60.0), n: int = 3000) -> tuple[SimulatedChainRig,
                                                                            np.ndarray]:
    rig = SimulatedChainRig(mount, pose, rate_hz=RATE, paced=False, hold_s=0.0)
    blocks = [rig.read(250) for _ in range(n // 250)]  # the motion must not care where
    counts = np.vstack([b.counts for b in blocks])       # blocks are cut
    return rig, counts


@pytest.mark.parametrize("channel", [0, 1])
def test_a_single_pendulum_turns_only_its_channel_and_swings_as_the_model_says(channel):
    mount = ChainMount(ChainRig(kind="single"), _params(1), channel=channel)
    src, counts = _released(mount, pose=(40.0, 40.0))
    assert isinstance(src, Source)
    assert not counts[:, 1 - channel].any()  # the clamped joint reads 0
    q = _params(1).run(9.81, np.array([math.pi + math.radians(40.0), 0.0]), counts.shape[0],
                       1.0 / RATE, 10)
    expect = np.rint((q[:, 0] - math.pi) / encoder_quantum(40_000))
    assert np.abs(counts[:, channel] - expect).max() <= 1


def test_a_double_pendulum_reads_link_two_against_link_one_and_round_trips():
    mount = ChainMount(ChainRig(kind="nlink:2"), _params(2), relative=True)
    _, counts = _released(mount)
    channels = counts * encoder_quantum(40_000)
    links = mount.links_of(channels)
    assert np.allclose(mount.channels_of(links), channels)
    assert links[0, 0] == pytest.approx(math.pi + math.radians(30.0), abs=1e-3)
    assert links[0, 1] == pytest.approx(math.pi + math.radians(90.0), abs=1e-3)  # 30 + 60
    assert np.ptp(counts[:, 1]) > 1000  # both links move


def test_three_links_do_not_fit_two_channels():
    with pytest.raises(ValueError, match="needs 3 encoders"):
        SimulatedChainRig(ChainMount(ChainRig(kind="nlink:3"), _params(1)))


def test_a_drifting_chain_swings_as_the_drifted_one_at_the_sessions_hour():
    """A chain rig's joint friction drifts by the terms a chain names (b1: link 1's viscous
    term), by the session's time at each release: a device 4 h into its session swings
    as one built with that friction."""
    from hilrig.identify.model import Realism, drifted_chain_friction

    drift = Realism(drift_per_hour={"b1": 0.05, "Fc1": -0.02})
    hold = 0.05
    mount = ChainMount(ChainRig(kind="single"), _params(1), channel=1)
    src = SimulatedChainRig(mount, paced=False, hold_s=hold, realism=drift, session_hours=4.0)
    moved = drifted_chain_friction(mount.params.friction, drift, 4.0 + hold / 3600.0)
    assert moved[0, 3] == pytest.approx(mount.params.friction[0, 3] * 1.2, rel=1e-4)
    assert moved[0, 0] == pytest.approx(mount.params.friction[0, 0] * 0.92, rel=1e-4)
    built = SimulatedChainRig(
        ChainMount(mount.rig, ChainParams(mount.params.inertial, moved), channel=1),
        paced=False, hold_s=hold)
    drifted = src.read(20_000).counts
    np.testing.assert_array_equal(drifted, built.read(20_000).counts)
    steady = SimulatedChainRig(mount, paced=False, hold_s=hold, session_hours=4.0)
    assert not np.array_equal(steady.read(20_000).counts, drifted)


@pytest.mark.parametrize(("kind", "drift", "fragment"), [
    ("single", {"mu_v1": 0.1}, "not a friction term of a chain of 1 link"),
    ("single", {"b2": 0.1}, "not a friction term of a chain of 1 link"),
    ("nlink:2", {"vt3": 0.1}, "not a friction term of a chain of 2 links"),
])
def test_a_chain_refuses_a_drift_of_a_term_it_has_not_when_built(kind, drift, fragment):
    from hilrig.identify.model import Realism

    links = ChainRig(kind=kind).links
    mount = ChainMount(ChainRig(kind=kind), _params(links), channel=1)
    with pytest.raises(ValueError, match=fragment):
        SimulatedChainRig(mount, realism=Realism(drift_per_hour=drift))
