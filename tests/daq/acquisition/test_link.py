"""Link health: the counters a capture's record and the terminal line report."""

from __future__ import annotations

from hilrig.daq.acquisition import LinkWatch, error_counts, grown, summary_line


def test_what_grew_during_a_capture_includes_a_host_that_read_late():
    before = {"lost_samples": 0, "gaps": 0, "reconnects": 0, "resets": 0, "late_reads": 0,
              "errors": {"crc_errors": 1}}
    after = {"lost_samples": 120, "gaps": 1, "reconnects": 0, "resets": 0, "late_reads": 1,
             "errors": {"crc_errors": 1}}
    assert grown(error_counts(after), error_counts(before)) == {
        "gaps": 1, "late_reads": 1, "lost_samples": 120}
    assert summary_line(after) == "120 samples lost, 1 gaps, 1 late_reads, 1 crc_errors (totals)"


def test_a_late_read_is_news_for_the_terminal_and_the_dashboard():
    health = {"lost_samples": 0, "late_reads": 0, "errors": {}}
    watch = LinkWatch(health, period_s=1.0)
    assert watch.poll(lambda: health, 10.0) is None  # nothing changed
    late = {**health, "late_reads": 1}
    assert watch.poll(lambda: late, 10.5) is None  # not yet a second since the last look
    assert watch.poll(lambda: late, 11.0) == late
