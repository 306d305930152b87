"""Jobs on every core: contiguous ranges of about equal cost, every job once."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from hilrig.identify.model._threads import job_ranges, run_jobs


@given(st.lists(st.integers(1, 10_000), min_size=0, max_size=200), st.integers(1, 16))
def test_the_ranges_cover_every_job_once_in_order(weights, parts):
    ranges = job_ranges(np.array(weights, dtype=np.int64), parts)
    assert len(ranges) <= max(1, parts) and all(hi > lo for lo, hi in ranges)
    covered = [j for lo, hi in ranges for j in range(lo, hi)]
    assert covered == list(range(len(weights)))


def test_equal_jobs_are_shared_equally():
    assert job_ranges(np.full(100, 7), 2) == [(0, 50), (50, 100)]
    assert job_ranges(np.array([90, 5, 5]), 2) == [(0, 1), (1, 3)]  # the big one alone


def test_every_job_runs_once_whatever_the_split():
    seen = np.zeros(1000, dtype=np.int64)

    def work(lo: int, hi: int) -> None:
        seen[lo:hi] += 1

    run_jobs(np.arange(1, 1001), work)
    assert (seen == 1).all()
