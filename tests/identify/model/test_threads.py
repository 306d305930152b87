"""Jobs on every core: groups of about equal cost, every job once."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from hilrig.identify.model._threads import job_groups, job_ranges, run_jobs, segment_steps


@given(st.lists(st.integers(1, 10_000), min_size=0, max_size=200), st.integers(1, 16))
def test_the_ranges_cover_every_job_once_in_order(weights, parts):
    ranges = job_ranges(np.array(weights, dtype=np.int64), parts)
    assert len(ranges) <= max(1, parts) and all(hi > lo for lo, hi in ranges)
    covered = [j for lo, hi in ranges for j in range(lo, hi)]
    assert covered == list(range(len(weights)))


def test_equal_jobs_are_shared_equally():
    assert job_ranges(np.full(100, 7), 2) == [(0, 50), (50, 100)]
    assert job_ranges(np.array([90, 5, 5]), 2) == [(0, 1), (1, 3)]  # the big one alone


@given(st.lists(st.integers(1, 10_000), min_size=0, max_size=200), st.integers(1, 16))
def test_the_groups_hold_every_job_once_and_balance_no_worse_than_ranges(weights, parts):
    w = np.array(weights, dtype=np.int64)
    groups = job_groups(w, parts)
    assert len(groups) <= max(1, parts) and all(g.size for g in groups)
    assert all(g.dtype == np.int64 and np.all(np.diff(g) > 0) for g in groups)
    assert sorted(int(j) for g in groups for j in g) == list(range(len(weights)))
    if groups:
        heaviest = max(w[lo:hi].sum() for lo, hi in job_ranges(w, parts))
        assert max(w[g].sum() for g in groups) <= heaviest


def test_heavy_jobs_at_the_end_are_spread_over_the_threads():
    # a decay's last segments, where a joint sticks, take most of the steps: contiguous
    # ranges leave two heavy ones to one thread
    w = np.array([10, 10, 10, 10, 40, 40])
    assert max(w[lo:hi].sum() for lo, hi in job_ranges(w, 2)) == 80
    assert sorted(int(w[g].sum()) for g in job_groups(w, 2)) == [60, 60]


def test_a_segment_costs_the_steps_of_its_own_schedule_entries():
    substeps = np.array([1, 2, 3, 4, 5, 6])
    first, length = np.array([0, 2, 3]), np.array([3, 2, 3])  # overlapping segments
    assert segment_steps(substeps, first, length).tolist() == [6, 7, 15]


def test_every_job_runs_once_whatever_the_split():
    seen = np.zeros(1000, dtype=np.int64)

    def work(jobs: np.ndarray) -> None:
        seen[jobs] += 1

    run_jobs(np.arange(1, 1001), work)
    assert (seen == 1).all()
