"""The rig's encoders: one constant for the count, used everywhere a quantum is needed."""

import math

import numpy as np
import pytest

from hilrig.identify.model import COUNTS_PER_REV, QUANTUM, encoder_quantum, to_counts


def test_the_quantum_is_one_count_of_40000_per_revolution():
    assert COUNTS_PER_REV == 40_000
    assert QUANTUM == 2 * math.pi / 40_000  # the same float the literals gave
    assert encoder_quantum(COUNTS_PER_REV) == QUANTUM
    assert encoder_quantum(4_000) == pytest.approx(10 * QUANTUM, rel=1e-15)
    with pytest.raises(ValueError):
        encoder_quantum(0)


def test_angles_round_to_the_nearest_count():
    counts = to_counts(np.array([[0.0, 0.49 * QUANTUM], [-1.51 * QUANTUM, math.pi]]))
    assert counts.dtype == np.int32
    np.testing.assert_array_equal(counts, [[0, 0], [-2, 20_000]])
