"""Jobs on every core: every job once, the heaviest first, a late or slow thread taking
less, and an interruption stopping the others."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilrig.identify.model._threads import _Queue, run_jobs, segment_steps


@pytest.fixture
def two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HILRIG_THREADS", "2")


def test_a_segment_costs_the_steps_of_its_own_schedule_entries():
    substeps = np.array([1, 2, 3, 4, 5, 6])
    first, length = np.array([0, 2, 3]), np.array([3, 2, 3])  # overlapping segments
    assert segment_steps(substeps, first, length).tolist() == [6, 7, 15]


def test_every_job_runs_once_whatever_the_split(two_threads):
    seen = np.zeros(1000, dtype=np.int64)

    def work(jobs: np.ndarray) -> None:
        seen[jobs] += 1

    run_jobs(np.arange(1, 1001), work)
    assert (seen == 1).all()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(1, 10_000), min_size=0, max_size=200), st.sampled_from(["1", "2", "3"]))
def test_each_take_is_int64_jobs_in_ascending_order_and_all_of_them_once(weights, threads):
    taken: list[np.ndarray] = []
    lock = threading.Lock()

    def work(jobs: np.ndarray) -> None:
        with lock:
            taken.append(jobs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HILRIG_THREADS", threads)
        run_jobs(np.array(weights, dtype=np.int64), work)
    assert all(j.dtype == np.int64 and j.size and np.all(np.diff(j) > 0) for j in taken)
    assert sorted(int(j) for jobs in taken for j in jobs) == list(range(len(weights)))


def test_on_one_thread_the_jobs_are_one_call_in_order(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HILRIG_THREADS", "1")
    calls: list[list[int]] = []
    run_jobs(np.array([3.0, 1.0, 2.0]), lambda jobs: calls.append(jobs.tolist()))
    assert calls == [[0, 1, 2]]


def test_the_heaviest_jobs_go_first_and_the_takes_shrink():
    # a decay's last segments, where a joint sticks, take most of the steps
    w = np.array([10, 10, 10, 10, 10, 10, 10, 10, 40, 40], dtype=np.float64)
    queue = _Queue(w, 2)
    takes = []
    while (jobs := queue.take()) is not None:
        takes.append(jobs.tolist())
    # a quarter of the weight left each time: the heavy ones alone, then lighter takes
    assert takes[:2] == [[8], [9]]
    assert sorted(sum(takes, [])) == list(range(10))
    weights = [w[t].sum() for t in takes]
    assert weights == sorted(weights, reverse=True)
    assert len(takes[-1]) == 1


def test_a_thread_that_starts_late_takes_less(two_threads):
    """The other thread is held up (here 200 ms; on this machine it wakes 0.06-0.08 ms
    late): the jobs it would have held in a split made in advance, half of them, are
    taken by this one; it keeps only its first take, a quarter."""
    main = threading.get_ident()
    ran: dict[int, int] = {}
    late = threading.Event()

    def work(jobs: np.ndarray) -> None:
        me = threading.get_ident()
        if me != main and not late.is_set():
            late.set()
            time.sleep(0.2)
        time.sleep(0.002 * jobs.size)
        ran[me] = ran.get(me, 0) + jobs.size

    run_jobs(np.ones(40), work)
    assert sum(ran.values()) == 40
    assert ran[main] >= 30


def test_an_interruption_in_this_thread_stops_the_others_after_their_jobs(two_threads):
    """Ctrl-C arrives in the thread that started the work: it leaves at once, and the
    other thread finishes the jobs it holds and takes no more."""
    main = threading.get_ident()
    ran: list[int] = []
    lock = threading.Lock()

    def work(jobs: np.ndarray) -> None:
        if threading.get_ident() == main:
            raise KeyboardInterrupt
        time.sleep(0.01)
        with lock:
            ran.extend(jobs.tolist())

    with pytest.raises(KeyboardInterrupt):
        run_jobs(np.ones(200), work)
    time.sleep(0.1)  # the other thread's take, if any, has ended
    done = len(ran)
    time.sleep(0.1)
    assert len(ran) == done < 200


def test_an_error_in_another_thread_stops_this_ones_takes_and_reaches_the_caller(two_threads):
    main = threading.get_ident()
    ran: list[int] = []

    def work(jobs: np.ndarray) -> None:
        if threading.get_ident() != main:
            raise RuntimeError("a kernel failed")
        time.sleep(0.005)
        ran.extend(jobs.tolist())

    with pytest.raises(RuntimeError, match="a kernel failed"):
        run_jobs(np.ones(400), work)
    assert len(ran) < 400
