"""A campaign hands out the longest expected task first, predicted from what the archive
already knows of each capture."""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from hilrig.daq.runtime.identification import Selection, longest_first, select_tasks
from hilrig.daq.storage import Catalog
from hilrig.identify import IdentificationResult, ParameterEstimate


@dataclass(frozen=True)
class Task:
    capture_id: str
    method: str


def _ids(tasks: list[Task]) -> list[str]:
    return [f"{t.capture_id}/{t.method}" for t in tasks]


def _makespan(costs: list[float], workers: int) -> float:
    """Each task to the first worker free, in the order given."""
    free = [0.0] * workers
    for cost in costs:
        heapq.heappush(free, heapq.heappop(free) + cost)
    return max(free)


def test_the_compute_an_earlier_identification_took_orders_the_tasks() -> None:
    tasks = [Task("A", "m"), Task("B", "m"), Task("C", "m")]
    computes = [("A", "m", 1.0), ("B", "m", 3.0), ("C", "m", 2.0)]
    assert _ids(longest_first(tasks, {}, computes)) == ["B/m", "C/m", "A/m"]


def test_the_latest_earlier_result_counts() -> None:
    tasks = [Task("A", "m"), Task("B", "m")]
    computes = [("A", "m", 5.0), ("B", "m", 3.0), ("A", "m", 1.0)]
    assert _ids(longest_first(tasks, {}, computes)) == ["B/m", "A/m"]


def test_a_method_never_run_on_a_capture_is_predicted_from_its_duration() -> None:
    # m costs 0.1 s per second of capture (A, B); C lasts 100 s, so about 10 s: first
    tasks = [Task("A", "m"), Task("B", "m"), Task("C", "m")]
    durations = {"A": 20.0, "B": 40.0, "C": 100.0}
    computes = [("A", "m", 2.0), ("B", "m", 4.0)]
    assert _ids(longest_first(tasks, durations, computes)) == ["C/m", "B/m", "A/m"]
    # a new method takes the rate of those that ran: the longest capture first
    new = [Task("A", "n"), Task("B", "n"), Task("C", "n")]
    assert _ids(longest_first(new, durations, computes)) == ["C/n", "B/n", "A/n"]


def test_with_nothing_known_the_longest_capture_goes_first() -> None:
    tasks = [Task("A", "m"), Task("B", "m"), Task("C", "m")]
    durations = {"A": 20.0, "B": 60.0, "C": 35.0}
    assert _ids(longest_first(tasks, durations, [])) == ["B/m", "C/m", "A/m"]


def test_a_duration_with_no_rate_to_turn_it_into_seconds_predicts_nothing() -> None:
    # compute times known only of captures without a duration: C's 100 s of capture say
    # nothing in seconds of compute, so C sits in the middle, not first
    tasks = [Task("A", "m"), Task("B", "m"), Task("C", "m")]
    computes = [("A", "m", 1.0), ("B", "m", 9.0)]
    assert _ids(longest_first(tasks, {"C": 100.0}, computes)) == ["B/m", "C/m", "A/m"]


def test_nothing_known_keeps_the_order_given_and_an_unknown_task_sits_in_the_middle() -> None:
    tasks = [Task("A", "m"), Task("B", "m"), Task("C", "m")]
    assert longest_first(tasks, {}, []) == tasks
    computes = [("A", "m", 1.0), ("C", "m", 9.0)]
    assert _ids(longest_first(tasks, {}, computes)) == ["C/m", "B/m", "A/m"]


def test_a_long_task_last_no_longer_keeps_the_campaign_waiting() -> None:
    costs = {f"C{k}": 1.0 for k in range(8)} | {"C8": 4.0}
    tasks = [Task(c, "m") for c in costs]
    computes = [(c, "m", s) for c, s in costs.items()]
    ordered = longest_first(tasks, {}, computes)
    assert _makespan([costs[t.capture_id] for t in tasks], 2) == 8.0
    assert _makespan([costs[t.capture_id] for t in ordered], 2) == 6.0  # sum / 2: the best


def test_select_tasks_hands_out_first_the_capture_whose_live_identification_took_longest(
        tmp_path) -> None:
    """A real catalog: the live results' compute times order a campaign's tasks."""
    with Catalog.open(tmp_path) as cat:
        cat.add_session("S", "{}")
        for k, seconds in enumerate((1.0, 7.0, 3.0)):
            path = tmp_path / f"c{k}.h5"
            path.write_bytes(b"")  # only its presence is read when selecting
            cat.add_capture(f"c{k}", status="done", session_id="S", seq=k, path=str(path))
            cat.add_result(_result(f"c{k}", seconds), capture_id=f"c{k}")
        tasks, left_out = select_tasks(cat, tmp_path, Selection(methods=["shooting"],
                                                                session="S"))
    assert left_out == [] and [t.capture_id for t in tasks] == ["c1", "c2", "c0"]


def _result(capture_id: str, seconds: float) -> IdentificationResult:
    est = ParameterEstimate(value=5e-4, ci95=(4.5e-4, 5.5e-4), identifiable=True)
    return IdentificationResult(method="shooting", capture_id=capture_id,
                                parameters={"mu_d0": est}, fit_percent={"arm": 99.5},
                                compute_seconds=seconds, normalized_compute_time=1e-5,
                                capture_seconds=20.0, sample_rate_hz=1e4, samples=200_001,
                                tilt_deg=10.0)
