"""A capture in which a joint never moved is refused by every method, naming the joint,
before any fit: no friction can be identified from a joint at rest, and a fit explains a
stuck encoder with the other joint's terms."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from hilrig.identify import ChainRig, Record, identify, identify_chain
from hilrig.identify.methods import METHODS
from hilrig.identify.report import compare_methods
from hilrig.identify.signal import still_joints


def _stuck_arm(m, counts=(7,)):
    """The measurement with its arm encoder reading `counts` in turn (one count: stuck)."""
    angles = m.angles.copy()
    reads = np.resize(np.asarray(counts, float), len(angles))
    angles[:, 0] = reads * m.resolution_rad
    return replace(m, angles=angles)


def test_a_joint_within_two_counts_throughout_never_moved(table3_measurement):
    m = table3_measurement
    assert still_joints(m) == []
    assert still_joints(_stuck_arm(m)) == [0]
    assert still_joints(_stuck_arm(m, (7, 8, 9, 8))) == [0]  # a stuck encoder's jitter
    assert still_joints(_stuck_arm(m, (7, 10))) == []  # three counts: it moved


def test_every_method_refuses_a_stuck_arm_naming_it_before_fitting(table3_measurement,
                                                                   monkeypatch):
    stuck = _stuck_arm(table3_measurement)
    for name in METHODS:
        monkeypatch.setitem(METHODS, name, lambda m, progress=None: pytest.fail("fitted"))
        with pytest.raises(ValueError, match=r"^the arm never moved in this capture .*stuck"):
            identify(stuck, name)
    # compared, each method's row says why it could not run
    for r in compare_methods(stuck):
        assert r.diagnostics["error"].startswith("could not run on this capture: the arm "
                                                 "never moved"), r.diagnostics


def test_a_chain_record_with_a_link_that_never_moved_is_refused_naming_it():
    t = np.arange(20_000) / 1000.0
    swing = 1.0 * np.exp(-t / 10) * np.cos(2 * np.pi * t)
    angles = np.column_stack([swing, np.full_like(t, 0.25)])
    record = Record(angles=angles, sample_index=np.arange(t.size), rate_hz=1000.0,
                    resolution_rad=2 * np.pi / 40_000)
    with pytest.raises(ValueError, match=r"^the joint theta2 never moved in this capture"):
        identify_chain(record, ChainRig(kind="nlink:2"))
