"""Campaigns on a real Dask LocalCluster of two worker processes, over a real simulated
session's archive (SQLite catalog, HDF5 files) and the real broker: every capture done
exactly once, whatever stops the client or a worker, with provenance; the same command
again does nothing new; a capture that cannot be identified is a failed task with its
reason; SLURM's job script is made from the [cluster] table."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from hilrig.daq.config import ClusterConfig
from hilrig.daq.runtime.identification import (
    Campaign,
    ClusterError,
    DaskExecutor,
    Selection,
    jobqueue_cluster,
    parse_cluster,
    select_tasks,
)
from hilrig.daq.storage import Catalog

pytest.importorskip("distributed")  # the [cluster] extra; part of the test extras

BROKER = "mqtt://127.0.0.1:1883"
HILRIG = [sys.executable, "-m", "hilrig"]


def _env(root: Path, rig_id: str) -> dict[str, str]:
    return {**os.environ, "HILRIG_STORAGE__DIRECTORY": str(root), "HILRIG_MQTT__RIG_ID": rig_id,
            "HILRIG_MQTT__URL": BROKER}


def _hilrig(args: list[str], env: dict[str, str], timeout: float = 300
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*HILRIG, *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """A simulated session of 6 captures, identified live by the regression method."""
    root = tmp_path_factory.mktemp("archive")
    env = _env(root, f"camp-{uuid.uuid4().hex[:6]}")
    run = _hilrig(["session", "start", "--captures", "6", "--sim", "--unpaced", "--pose", "0",
                   "30", "--method", "regression"], env)
    assert run.returncode == 0, run.stdout + run.stderr
    with Catalog.open(root, create=False) as cat:
        sid = cat.latest_session().session_id
        assert len(cat.captures(sid)) == 6
    return root, env, sid


@pytest.fixture(scope="module")
def cluster():
    executor = DaskExecutor(parse_cluster("local:2"))
    executor.start()
    assert executor.workers == 2
    yield executor
    executor.shutdown()


def _campaign_results(root: Path, campaign_id: str) -> list[tuple[str, str]]:
    with Catalog.open(root, create=False) as cat:
        return [(r.capture_id, r.method) for r in cat.results()
                if (r.result_key or "").startswith(f"campaign/{campaign_id}/")]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_session_reidentified_on_a_cluster_adds_one_result_per_capture_then_nothing(session):
    root, env, sid = session
    with Catalog.open(root, create=False) as cat:
        before = len(cat.results(session_id=sid))
    command = ["reidentify", "--session", sid, "--method", "integral", "--cluster", "local:2"]
    first = _hilrig(command, env)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "6/6 (6 done, 0 failed)" in first.stdout
    with Catalog.open(root, create=False) as cat:
        new = cat.results(session_id=sid)[before:]
        assert sorted(r.method for r in new) == ["integral"] * 6
        assert sorted(r.capture_id for r in new) == sorted(c.capture_id
                                                            for c in cat.captures(sid))
        for row in new:  # provenance travels with each result, and a JSON file beside it
            p = row.result().diagnostics["provenance"]
            assert p["host"] and p["numpy"] and p["scipy"] and p["numba"] and p["pid"]
            assert p["software_version"] == row.software_version
            assert json.loads(Path(row.path or "").read_text())["method"] == "integral"
    again = _hilrig(command, env)
    assert again.returncode == 0, again.stderr
    assert "(0 done, 0 failed, 6 by an earlier run)" in again.stdout
    with Catalog.open(root, create=False) as cat:
        assert len(cat.results(session_id=sid)) == before + 6
    forced = _hilrig([*command, "--force"], env)
    assert forced.returncode == 0 and "6/6 (6 done, 0 failed)" in forced.stdout
    with Catalog.open(root, create=False) as cat:
        assert len(cat.results(session_id=sid)) == before + 12


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_results_compare_tells_what_the_other_method_changes(session, tmp_path):
    root, env, sid = session
    ran = _hilrig(["reidentify", "--session", sid, "--method", "shooting"], env)  # local pool
    assert ran.returncode == 0, ran.stdout + ran.stderr
    png = tmp_path / "compare.png"
    table = _hilrig(["results", "compare", "--method", "regression", "--method", "shooting",
                     "--session", sid, "--plot", str(png)], env)
    assert table.returncode == 0, table.stderr
    assert "6 capture(s) with results of both methods" in table.stdout
    assert "shooting against regression" in table.stdout and "mu_d1" in table.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2_000
    as_json = json.loads(_hilrig(["results", "compare", "--method", "regression", "--method",
                                  "shooting", "--session", sid, "--format", "json"],
                                 env).stdout)
    both = [p for p in as_json["parameters"].values() if p["n"]]
    assert both and all(p["n"] == len(p["per_capture"]) == 6 for p in both)
    none = _hilrig(["results", "compare", "--method", "regression", "--method", "simplex",
                    "--session", sid], env)
    assert none.returncode == 2 and "no capture has results of both" in none.stderr


@pytest.mark.fault(injected="campaign: kill -9 of a Dask worker process mid-campaign",
                   expected="its task retried on another worker; every capture's result kept "
                            "exactly once")
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_worker_killed_mid_campaign_loses_nothing_and_stores_nothing_twice(session, cluster):
    root, _, sid = session
    selection = Selection(methods=["uas"], session=sid)
    pids = list(cluster.client.run(os.getpid).values())
    killed: list[int] = []

    def progress(p, state):
        if p.finished >= 1 and not killed:  # the other tasks are running or queued
            os.kill(pids[0], signal.SIGKILL)
            killed.append(pids[0])

    with Catalog.open(root, create=False) as cat:
        tasks, _ = select_tasks(cat, root, selection)
        campaign = Campaign(cat, cluster, progress=progress, batch_size=1, batch_s=0.1,
                            say=print)
        report = asyncio.run(campaign.run(selection.campaign_id(), selection, tasks))
        assert killed, "the campaign ended before a worker could be killed"
        assert (report.done, report.failed) == (6, 0)
        assert sorted(cat.campaign_tasks(selection.campaign_id()).values()) == ["done"] * 6
    kept = _campaign_results(root, selection.campaign_id())
    assert len(kept) == 6 and len(set(kept)) == 6  # every capture once


@pytest.mark.fault(injected="campaign: a capture file corrupted in the archive",
                   expected="a failed task with its reason in one line; the others done")
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_capture_that_cannot_be_identified_is_a_failed_task_with_its_reason(session,
                                                                              cluster):
    root, _, sid = session
    with Catalog.open(root, create=False) as cat:
        broken = Path(cat.captures(sid)[2].path or "")
        good = broken.read_bytes()
        broken.write_bytes(b"\x89HDF\r\n\x1a\n" + b"\0" * 64)  # truncated: no longer a capture
        try:
            selection = Selection(methods=["regression"], session=sid)
            tasks, _ = select_tasks(cat, root, selection)
            report = asyncio.run(Campaign(cat, cluster, say=print).run(
                selection.campaign_id(), selection, tasks))
        finally:
            broken.write_bytes(good)
        statuses = cat.campaign_tasks(selection.campaign_id())
        assert (report.done, report.failed) == (5, 1)
        failed = [k for k, v in statuses.items() if v == "failed"]
        assert failed == [(cat.captures(sid)[2].capture_id, "regression")]
        reason = sqlite3.connect(cat.path).execute(
            "SELECT reason FROM campaign_tasks WHERE status = 'failed'").fetchone()[0]
        assert str(broken) in reason and "\n" not in reason
    assert len(_campaign_results(root, selection.campaign_id())) == 5


@pytest.mark.fault(injected="campaign: Ctrl-C to the client's process group mid-campaign",
                   expected="exit 130 with one line on how to resume; the same command does "
                            "the rest, nothing stored twice")
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_ctrl_c_keeps_what_finished_and_the_same_command_does_the_rest_once(session):
    root, env, sid = session
    command = [*HILRIG, "reidentify", "--session", sid, "--method", "grey-box",
               "--cluster", "local:2"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    db = root / "catalog.sqlite"
    deadline = time.monotonic() + 240
    finished = 0
    while time.monotonic() < deadline and proc.poll() is None:
        with Catalog.open(root, create=False) as cat:
            rows = cat.campaign_tasks(Selection(methods=["grey-box"], session=sid)
                                      .campaign_id())
        finished = len(rows)
        if finished >= 1:
            break
        time.sleep(0.2)
    assert proc.poll() is None and 1 <= finished < 6, "no moment to interrupt the campaign"
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C: the whole process group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "the same command goes on from there" in err
    assert "Traceback" not in err
    again = _hilrig(command[3:], env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "6/6" in again.stdout and "by an earlier run" in again.stdout
    campaign_id = Selection(methods=["grey-box"], session=sid).campaign_id()
    kept = _campaign_results(root, campaign_id)
    assert len(kept) == 6 and len(set(kept)) == 6
    assert db.exists()


def test_the_cluster_is_named_or_refused_in_one_line():
    assert parse_cluster("local:3").workers == 3
    assert parse_cluster("tcp://sched.lab:8786").address == "tcp://sched.lab:8786"
    assert parse_cluster("slurm").kind == "jobqueue"
    for bad in ("local:0", "local:x", "http://sched:8786", "tcp://sched", "kubernetes"):
        with pytest.raises(ClusterError, match="--cluster"):
            parse_cluster(bad)


def test_the_local_clusters_workers_leave_their_cores_to_the_fits(cluster):
    """No stack sampling every 10 ms and no memory trimmed at every free: both took time
    from the fits (DaskExecutor.start)."""
    import dask

    def settings():
        return (dask.config.get("distributed.worker.profile.enabled"),
                os.environ.get("MALLOC_TRIM_THRESHOLD_"))

    assert list(cluster.client.run(settings).values()) == [(False, None)] * 2


@pytest.mark.fault(injected="campaign: a local worker logs an error with its exception (a "
                            "heartbeat that finds the scheduler gone while a cluster closes)",
                   expected="one line on the terminal, no traceback; nothing more while the "
                            "cluster closes")
def test_a_local_workers_error_reaches_the_terminal_as_one_line(capfd):
    executor = DaskExecutor(parse_cluster("local:1"))  # its worker writes to this test's fd 2
    executor.start()

    def heartbeat_fails() -> None:
        import logging

        try:
            raise ConnectionError("Stream is closed\nsecond line")
        except ConnectionError:
            logging.getLogger("distributed.worker").exception("heartbeat failed")

    try:
        executor.client.run(heartbeat_fails)
    finally:
        executor.shutdown()
    err = capfd.readouterr().err
    lines = [line for line in err.splitlines() if "heartbeat failed" in line]
    assert len(lines) == 1 and "(ConnectionError: Stream is closed)" in lines[0], err
    assert "Traceback" not in err and "second line" not in err


def test_slurms_job_script_comes_from_the_cluster_table():
    config = ClusterConfig(queue="short", account="lab42", cores=4, memory="8GB",
                           walltime="02:00:00", job_script_prologue=["module load python/3.11"])
    handler = signal.getsignal(signal.SIGINT)
    cluster = jobqueue_cluster(config, "slurm")
    # dask-jobqueue replaces the Ctrl-C handler when imported: ours is put back
    assert signal.getsignal(signal.SIGINT) is handler
    try:
        script = cluster.job_script()
    finally:
        cluster.close()
    for line in ("#SBATCH -p short", "#SBATCH -A lab42", "#SBATCH --cpus-per-task=4",
                 "#SBATCH -t 02:00:00", "module load python/3.11",
                 'export NUMBA_CACHE_DIR="$TMPDIR/hilrig-numba-cache"',
                 # no stack sampling taking time from the fits on a busy node
                 "export DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False"):
        assert line in script
    # one single-threaded worker process per core, scratch on the node's own disk
    assert "--nworkers 4" in script and "--nthreads 1" in script
    assert "--local-directory $TMPDIR" in script


def test_bad_selections_are_one_line_before_any_work(tmp_path):
    env = _env(tmp_path / "archive", "camp-bad")
    Catalog.open(tmp_path / "archive").close()
    for args, says in ((["--method", "regression"], "name the captures"),
                       (["--all", "--method", "regression", "--since", "yesterday"],
                        "--since 'yesterday'"),
                       (["--all", "--method", "regression", "--cluster", "k8s"], "--cluster"),
                       (["--all", "--method", "regression", "--kind", "nlink:x"], "--kind"),
                       (["--session", "S-none", "--method", "regression"], "S-none")):
        run = _hilrig(["reidentify", *args], env, timeout=60)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert says in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_without_dask_a_cluster_is_refused_in_one_line_naming_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    with pytest.raises(ClusterError, match=r"pip install 'hilrig\[cluster\]'"):
        DaskExecutor(parse_cluster("local:2"))
