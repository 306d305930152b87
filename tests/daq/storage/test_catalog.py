"""The catalog: a real SQLite file in WAL mode that several processes share."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from hilrig.daq.storage import CATALOG_NAME, Catalog, CatalogError
from hilrig.identify import IdentificationResult, ParameterEstimate


def _result(method: str = "grey-box", value: float = 5e-4, capture_id: str = "c1"
            ) -> IdentificationResult:
    est = ParameterEstimate(value=value, ci95=(value * 0.9, value * 1.1), identifiable=True)
    return IdentificationResult(method=method, capture_id=capture_id,
                                parameters={"mu_d0": est},
                                fit_percent={"arm": 99.5, "pendulum": 99.9},
                                compute_seconds=1.5, normalized_compute_time=1e-5,
                                capture_seconds=20.0, sample_rate_hz=1e4, samples=200_001,
                                tilt_deg=10.0)


@pytest.fixture
def cat(tmp_path):
    with Catalog.open(tmp_path) as c:
        c.add_session("S1", '{"captures": 2}', name="night run")
        c.add_capture("c1", session_id="S1", seq=1, pose=[0.0, 120.0], status="recording",
                      path=str(tmp_path / "c1.h5"))
        yield c


def test_the_catalog_is_one_sqlite_file_in_wal_mode(tmp_path, cat):
    assert cat.path == tmp_path / CATALOG_NAME
    with sqlite3.connect(cat.path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert cat.integrity_ok()


def test_a_capture_moves_through_its_states_with_its_statistics(cat):
    cat.update_capture("c1", status="captured", samples=200_001, lost_samples=3,
                       duration_s=20.0, end_reason="settled", summary={"gaps": 1})
    row = cat.capture("c1")
    assert (row.status, row.samples, row.lost_samples, row.summary) == (
        "captured", 200_001, 3, {"gaps": 1})
    assert row.pose == [0.0, 120.0] and row.seq == 1 and row.session_id == "S1"
    assert [c.capture_id for c in cat.captures("S1", status="captured")] == ["c1"]
    assert cat.captures("S1", status="done") == []


def test_results_are_added_never_overwritten(cat):
    first = cat.add_result(_result(value=5e-4), capture_id="c1")
    second = cat.add_result(_result(value=6e-4), capture_id="c1")  # same capture and method
    assert second.result_id > first.result_id
    values = [r.result().parameters["mu_d0"].value for r in cat.results(capture_id="c1")]
    assert values == [5e-4, 6e-4]
    assert cat.results(session_id="S1", method="grey-box")[0].fit_arm == 99.5


def test_a_redelivered_result_with_the_same_key_is_not_added_twice(cat):
    a = cat.add_result(_result(), capture_id="c1", result_key="job-7")
    b = cat.add_result(_result(value=7e-4), capture_id="c1", result_key="job-7")
    assert a.result_id == b.result_id
    assert len(cat.results(capture_id="c1")) == 1


def test_a_stop_request_from_another_process_is_seen(cat):
    code = ("import sys; from hilrig.daq.storage import Catalog; "
            "c = Catalog.open(sys.argv[1], create=False); c.request_stop('S1')")
    subprocess.run([sys.executable, "-c", code, str(cat.path.parent)], check=True, timeout=60)
    assert cat.stop_requested("S1")
    cat.set_session_status("S1", "running", pid=123)  # a resumed session starts afresh
    assert not cat.stop_requested("S1")


def test_unknown_ids_and_missing_catalogs_are_one_line_errors(tmp_path, cat):
    with pytest.raises(CatalogError, match="no capture 'nope'"):
        cat.capture("nope")
    with pytest.raises(CatalogError, match="no session 'S9'"):
        cat.session("S9")
    with pytest.raises(CatalogError, match="no catalog here"):
        Catalog.open(tmp_path / "elsewhere", create=False)
    with pytest.raises(ValueError, match="unknown field"):
        cat.update_capture("c1", seq=3)


def test_a_catalog_from_newer_software_is_refused(tmp_path):
    with sqlite3.connect(tmp_path / CATALOG_NAME) as raw:
        raw.execute("PRAGMA user_version=99")
    with pytest.raises(CatalogError, match="newer than this software"):
        Catalog.open(tmp_path)


def test_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path):
    (tmp_path / CATALOG_NAME).write_bytes(b"this is not a database" * 100)
    with pytest.raises(CatalogError, match="cannot open the catalog"):
        Catalog.open(tmp_path)


def test_a_new_result_waits_as_unqueued_until_it_is_in_the_outbox(tmp_path):
    with Catalog.open(tmp_path) as cat:
        cat.add_session("S1", "{}")
        cat.add_capture("c1", session_id="S1", status="done")
        row = cat.add_result(_result(), capture_id="c1")
        assert row.queued_utc is None
        assert [r.result_id for r in cat.results(session_id="S1", unqueued=True)] == [
            row.result_id]
        cat.mark_result_queued(row.result_id)
        assert cat.results(unqueued=True) == [] and cat.result(row.result_id).queued_utc


def test_results_of_a_schema_1_catalog_count_as_published(tmp_path):
    with Catalog.open(tmp_path) as cat:
        cat.add_session("S1", "{}")
        cat.add_capture("c1", session_id="S1", status="done")
        cat.add_result(_result(), capture_id="c1")
    raw = sqlite3.connect(tmp_path / CATALOG_NAME)  # as the previous version left it
    raw.execute("ALTER TABLE results DROP COLUMN queued_utc")
    raw.execute("ALTER TABLE sessions DROP COLUMN retained_cleared_utc")
    raw.execute("PRAGMA user_version=1")
    raw.commit()
    raw.close()
    with Catalog.open(tmp_path) as cat:
        (row,) = cat.results()
        assert row.queued_utc == row.created_utc  # it was published when it was added
        assert cat.session("S1").retained_cleared_utc is None
    raw = sqlite3.connect(tmp_path / CATALOG_NAME)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 5
    raw.close()


def test_a_schema_2_catalog_gains_the_retained_mark_and_keeps_its_rows(tmp_path):
    with Catalog.open(tmp_path) as cat:
        cat.add_session("S1", "{}")
    raw = sqlite3.connect(tmp_path / CATALOG_NAME)  # as hilrig of contract 1.0 left it
    raw.execute("ALTER TABLE sessions DROP COLUMN retained_cleared_utc")
    raw.execute("PRAGMA user_version=2")
    raw.commit()
    raw.close()
    with Catalog.open(tmp_path) as cat:
        assert cat.session("S1").retained_cleared_utc is None
        cat.mark_retained_cleared("S1")
        assert cat.session("S1").retained_cleared_utc


def test_a_schema_3_catalog_gains_the_campaign_tables_and_keeps_what_it_had(tmp_path):
    with Catalog.open(tmp_path) as cat:
        cat.add_session("S1", "{}")
        cat.add_capture("c1", session_id="S1", seq=1, status="done")
        cat.add_result(_result(), capture_id="c1")
    raw = sqlite3.connect(tmp_path / CATALOG_NAME)  # as the previous version left it
    raw.execute("DROP TABLE campaign_tasks")
    raw.execute("DROP TABLE campaigns")
    raw.execute("PRAGMA user_version=3")
    raw.commit()
    raw.close()
    with Catalog.open(tmp_path) as cat:
        assert len(cat.results()) == 1
        cat.add_campaign("K1", "{}")
        cat.finish_campaign_task("K1", "c1", "grey-box", result_id=1, reason=None,
                                 provenance_json=None)
        cat.finish_campaign_task("K1", "c1", "grey-box", result_id=None, reason="again",
                                 provenance_json=None)  # a second finish changes nothing
        assert cat.campaign_tasks("K1") == {("c1", "grey-box"): "done"}


def test_a_batch_is_kept_whole_or_not_at_all(tmp_path):
    with Catalog.open(tmp_path) as cat:
        cat.add_session("S1", "{}")
        cat.add_capture("c1", session_id="S1", seq=1, status="done")
        with pytest.raises(RuntimeError), cat.batch():
            cat.add_result(_result(), capture_id="c1", result_key="k1")
            cat.add_result(_result(), capture_id="c1", result_key="k2")
            raise RuntimeError("the client dies mid-batch")
        assert cat.results() == []
        with cat.batch():
            cat.add_result(_result(), capture_id="c1", result_key="k1")
        assert [r.result_key for r in cat.results()] == ["k1"]


def test_a_schema_4_catalog_gains_the_session_results_and_keeps_each_answer(tmp_path, night):
    import numpy as np

    from hilrig.identify import pool_results

    with Catalog.open(tmp_path) as cat:
        cat.add_session("S1", "{}")
    raw = sqlite3.connect(tmp_path / CATALOG_NAME)  # as the previous version left it
    raw.execute("DROP TABLE session_results")
    raw.execute("PRAGMA user_version=4")
    raw.commit()
    raw.close()
    hours = np.linspace(0, 8, 5)
    answer = pool_results(night(hours), hours, session_id="S1")
    with Catalog.open(tmp_path) as cat:
        assert cat.session_results("S1") == []
        first = cat.add_session_result(answer)
        second = cat.add_session_result(answer)  # a later answer is a row of its own
        assert [r.session_result_id for r in cat.session_results("S1")] == [
            first.session_result_id, second.session_result_id]
        assert second.verdict == "no drift" and second.captures == 5
        assert second.result() == answer
        with pytest.raises(CatalogError, match="no session 'S2'"):
            cat.add_session_result(answer.model_copy(update={"session_id": "S2"}))
