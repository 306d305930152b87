"""The rig's book of offloaded jobs (daq.mqtt.PendingJobs): who holds what, and when a
job moves on."""

from hilrig.daq.mqtt import PendingJobs


def test_a_worker_that_leaves_hands_back_what_it_held_unanswered_and_nothing_else():
    book = PendingJobs(timeout_s=600.0)
    held = book.add("c1", ["shooting"], 0.0, None)
    other = book.add("c2", ["shooting"], 0.0, None)
    waiting = book.add("c3", ["shooting"], 0.0, None)
    book.assign(held, "lab/a", 1.0)
    book.assign(other, "lab/b", 1.0)
    held.told_waiting = True
    # lab/a's last will, 5 s later: its job is for another worker at once, a new attempt,
    # waiting from now (not from when the capture was first handed over)
    assert book.left_by("lab/a", 6.0) == [held]
    assert held.worker is None and held.attempt == 2 and held.given_to == {"lab/a"}
    assert held.queued == 6.0 and not held.told_waiting
    assert book.unassigned() == [held, waiting]
    assert other.worker == "lab/b" and other.attempt == 1
    # a worker holding nothing leaves nothing behind; nothing is overdue before its time
    assert book.left_by("lab/c", 7.0) == []
    assert book.overdue(7.0) == []
    assert book.overdue(601.0) == [(other, "lab/b")]
