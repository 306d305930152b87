"""Identification work submitted one way, whatever runs it: each task's future resolves
to its outcome (a result with its provenance, or the reason it failed), a cancelled task
is withdrawn, and a task that ships the capture file's bytes gives the result its path
gives."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

import numba
import numpy
import pytest

from hilrig.daq.runtime.identification import (
    IdentificationFailed,
    IdentifyTask,
    LocalExecutor,
    completed,
    identified,
    run_task,
)
from hilrig.identify import SOFTWARE_VERSION

METHOD = "regression"  # a fast method: these tests are about the executor, not the fit


@pytest.fixture(scope="module")
def capture_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("captures") / "c1.h5"
    subprocess.run([sys.executable, "-m", "hilrig", "simulate", "--out", str(path),
                    "--duration", "6", "--rate", "1000", "--seed", "3"],
                   check=True, capture_output=True)
    return path


def test_a_task_runs_anywhere_and_says_where_and_with_what(capture_file):
    outcome = run_task(IdentifyTask.of_file("c1", capture_file, METHOD))
    assert outcome.error is None and outcome.result is not None
    p = outcome.provenance
    assert p is not None and p.host == socket.gethostname()
    assert (p.software_version, p.numpy, p.numba) == (SOFTWARE_VERSION, numpy.__version__,
                                                       numba.__version__)
    assert p.seconds > 0
    # the provenance travels with the result, into the catalog and onto MQTT
    assert outcome.result.diagnostics["provenance"] == p.model_dump()


def test_a_capture_that_cannot_be_identified_comes_back_failed_with_its_reason(tmp_path):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not an HDF5 file")
    outcome = run_task(IdentifyTask.of_file("bad", bad, METHOD))
    assert outcome.result is None and "bad.h5" in (outcome.error or "")
    assert "\n" not in (outcome.error or "")
    with pytest.raises(IdentificationFailed, match="bad.h5"):
        outcome.result_or_raise()


def test_shipped_bytes_give_the_result_the_path_gives(capture_file):
    by_path = run_task(IdentifyTask.of_file("c1", capture_file, METHOD)).result
    shipped = IdentifyTask.of_file("c1", capture_file, METHOD, ship=True)
    assert shipped.path is None and shipped.data == capture_file.read_bytes()
    by_bytes = run_task(shipped).result
    assert by_path is not None and by_bytes is not None
    assert by_bytes.parameters == by_path.parameters


async def test_two_processes_answer_every_task_and_a_cancelled_one_is_withdrawn(
        capture_file, tmp_path):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"garbage")
    with LocalExecutor(workers=2) as executor:
        futures = [executor.submit(IdentifyTask.of_file(f"c{k}", capture_file, METHOD))
                   for k in range(4)]
        futures.append(executor.submit(IdentifyTask.of_file("bad", bad, METHOD)))
        withdrawn = executor.submit(IdentifyTask.of_file("late", capture_file, METHOD))
        withdrawn.cancel()
        outcomes = [o async for o in completed([*futures, withdrawn])]
        assert sorted(o.capture_id for o in outcomes) == ["bad", "c0", "c1", "c2", "c3"]
        assert all(o.result is not None for o in outcomes if o.capture_id != "bad")
        assert [o.error is not None for o in outcomes if o.capture_id == "bad"] == [True]
        with pytest.raises(IdentificationFailed):
            await identified(executor, "bad", str(bad), METHOD)
        assert withdrawn.cancelled()
        await asyncio.sleep(0)


@pytest.mark.fault(injected="identification: SIGKILL of the local pool's process while it holds "
                            "a capture",
                   expected="a new pool takes the capture again, and every later capture runs")
async def test_a_worker_process_that_dies_costs_no_task_and_breaks_no_later_one(capture_file):
    """The OOM killer or a crash in native code ends a pool's process: the task it held
    runs again on a new pool, and the tasks after it run (a dead pool had refused every
    later capture, and its session stopped after three failed in a row)."""
    import os
    import signal

    with LocalExecutor(workers=1) as executor:
        first = await executor.submit(IdentifyTask.of_file("c0", capture_file, METHOD))
        assert first.result is not None and first.provenance is not None
        held = executor.submit(IdentifyTask.of_file("c1", capture_file, METHOD))
        os.kill(first.provenance.pid, signal.SIGKILL)  # the one worker, with c1 in hand
        again = await asyncio.wait_for(held, 120)
        assert again.result is not None and again.error is None
        assert again.provenance is not None and again.provenance.pid != first.provenance.pid
        later = await executor.submit(IdentifyTask.of_file("c2", capture_file, METHOD))
        assert later.result is not None
