"""Identification on a Dask cluster: campaigns of thousands of captures, from a laptop to
a SLURM or PBS cluster.

`--cluster` names the cluster: ``local`` or ``local:N`` starts a `distributed`
LocalCluster of N worker processes of one thread each on this machine (N: its cores);
``tcp://HOST:PORT`` joins a running scheduler; ``slurm`` or ``pbs`` asks the batch
system for the `[cluster]` table's jobs through dask-jobqueue. Each task is one capture
and one method (`run_task_json`): it never raises for the capture's sake, so Dask's
retries are left for what they are meant for, a worker lost mid-task, whose task the
scheduler gives to another worker. Workers that may not see the archive's files
(another machine, unless `[cluster] shared_storage`) get each capture's bytes with its
task. Each worker compiles the estimator's kernels once, into its numba cache on local
disk, when it starts (a worker plugin), not inside a task's compute time.

Dask is an optional extra (``pip install 'hilrig[cluster]'``): without it, naming a
cluster is a one-line error before any work.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from ...config import ClusterConfig
from ._executor import settle_from_thread
from ._task import IdentifyTask, TaskOutcome, run_task_json, warm_up

__all__ = ["ClusterError", "ClusterSpec", "DaskExecutor", "jobqueue_cluster", "parse_cluster"]

#: the worker environment Dask sets that slows a fit (see DaskExecutor.start)
_TRIM = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"
#: each worker samples its threads' stacks every 10 ms for the dashboard's profile page; in
#: a fit that is numba kernels, and with every core busy the sampling thread takes its
#: time from the fits: two busy workers here, 1.137 -> 1.098 s median per fit (-3.4 %,
#: 32 fits each, alternating)
_PROFILE = "distributed.worker.profile.enabled"
_SCHEDULER = re.compile(r"^(tcp|tls)://[^\s/:]+:\d{1,5}$")


class ClusterError(ValueError):
    """A cluster that cannot be named or reached: one line."""


@dataclass(frozen=True)
class ClusterSpec:
    """What `--cluster` names: kind 'local' (workers: how many), 'scheduler' (address) or
    'jobqueue' (the `[cluster]` table's batch system)."""

    kind: str
    workers: int | None = None
    address: str | None = None


def parse_cluster(text: str) -> ClusterSpec:
    """local, local:N, tcp://HOST:PORT, tls://HOST:PORT, slurm, pbs."""
    text = text.strip()
    if text == "local":
        return ClusterSpec("local", workers=os.cpu_count() or 1)
    if text.startswith("local:"):
        n = text.split(":", 1)[1]
        if not n.isdigit() or not 1 <= int(n) <= 1024:
            raise ClusterError(f"--cluster {text}: local:N needs N workers in [1, 1024]")
        return ClusterSpec("local", workers=int(n))
    if _SCHEDULER.match(text):
        return ClusterSpec("scheduler", address=text)
    if text in ("slurm", "pbs"):
        return ClusterSpec("jobqueue", address=text)
    raise ClusterError(f"--cluster {text!r}: expected local, local:N, tcp://HOST:PORT, "
                       "slurm or pbs")


def _distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise ClusterError("--cluster needs Dask: pip install 'hilrig[cluster]'") from None
    return distributed


def _jobqueue() -> Any:
    """dask_jobqueue, imported without its side effect: its runner module replaces the
    process's Ctrl-C handler with sys.exit() when imported, which would turn a user's
    Ctrl-C into a silent exit instead of keeping what finished."""
    main = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGINT) if main else None
    try:
        import dask_jobqueue
    except ImportError:
        raise ClusterError("--cluster slurm|pbs needs dask-jobqueue: "
                           "pip install 'hilrig[cluster]'") from None
    finally:
        if main and handler is not None:
            signal.signal(signal.SIGINT, handler)
    return dask_jobqueue


def jobqueue_cluster(config: ClusterConfig, kind: str | None = None) -> Any:
    """A dask-jobqueue cluster (SLURMCluster or PBSCluster) made from `[cluster]`; nothing
    is submitted until it is scaled. Its `job_script()` is what each job runs."""
    dask_jobqueue = _jobqueue()
    kind = kind or config.kind
    make = dask_jobqueue.SLURMCluster if kind == "slurm" else dask_jobqueue.PBSCluster
    local = config.local_directory
    prologue = [*config.job_script_prologue,
                # the kernels' cache on the node's own disk: a shared home's is slow and
                # raced by every node at once
                f'export NUMBA_CACHE_DIR="{local}/hilrig-numba-cache"',
                "export HILRIG_THREADS=1",  # a worker process per core, one thread each
                "export DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False"]  # see _PROFILE
    return make(queue=config.queue, account=config.account, cores=config.cores,
                processes=config.cores,  # one worker process per core, one thread each
                memory=config.memory, walltime=config.walltime, local_directory=local,
                job_script_prologue=prologue)


def _warm_kernels(distributed: Any, on_this_terminal: bool) -> Any:
    """A worker plugin: the estimator's kernels compiled into the worker's numba cache once,
    when it starts (a stamp and a lock make the other workers of a node wait, not
    compile again). Made here: distributed is imported only when a cluster is named.

    `on_this_terminal` (a LocalCluster): the worker ignores the terminal's Ctrl-C, which
    reaches every process of the job; the client decides what it means (keep what
    finished, shut the cluster down), where a worker would die with a traceback and be
    restarted mid-shutdown."""

    class WarmKernels(distributed.WorkerPlugin):
        name = "hilrig-warm-kernels"

        def setup(self, worker: Any) -> None:
            from hilrig.identify.model import ensure_compiled

            if on_this_terminal and threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            os.environ["HILRIG_THREADS"] = "1"  # one worker process per core, one thread each
            _quiet_logs(logging.WARNING)
            _one_line_logs()

            for family in ("furuta", "chain"):
                ensure_compiled(family)
            warm_up()  # and what a task imports, so the first task's time is its fit's

    return WarmKernels()


def _quiet_logs(level: int) -> None:
    """Dask's own chatter (every worker's start, connections) off the terminal; its
    warnings and errors stay."""
    for name in ("distributed", "dask_jobqueue", "tornado"):
        logging.getLogger(name).setLevel(level)


class _OneLine(logging.Filter):
    """A record's exception folded into its one line: a local worker writes to the user's
    terminal, where a traceback is noise (a heartbeat that finds the scheduler gone while
    a cluster closes printed 25 lines)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            first = str(exc).splitlines()[0] if str(exc) else ""
            record.msg = f"{record.getMessage()} ({type(exc).__name__}: {first})"
            record.args = None
            record.exc_info = record.exc_text = record.stack_info = None
        return True


def _one_line_logs() -> None:
    """Every handler of this process (a worker's) writes each record as one line."""
    loggers = [logging.getLogger(), *(logger for logger in logging.root.manager.loggerDict
                                      .values() if isinstance(logger, logging.Logger))]
    for logger in loggers:
        for handler in logger.handlers:
            if not any(isinstance(f, _OneLine) for f in handler.filters):
                handler.addFilter(_OneLine())


def _settle(loop: asyncio.AbstractEventLoop, done: Any, out: asyncio.Future[TaskOutcome]
            ) -> None:
    """A Dask future's end into the loop's future (called in the client's thread)."""
    status = done.status
    try:
        value = done.result() if status == "finished" else None
        error = done.exception() if status == "error" else None
    except Exception as exc:  # noqa: BLE001 - a result that cannot be fetched fails the task
        value, error, status = None, exc, "error"
    settle_from_thread(loop, out, cancelled=status == "cancelled", error=error,
                       outcome_json=None if value is None else str(value))


class DaskExecutor:
    """Tasks to a Dask cluster (see module docstring); `start()` brings it up or joins it."""

    def __init__(self, spec: ClusterSpec, config: ClusterConfig | None = None) -> None:
        """ClusterError now, before any work, if Dask (or dask-jobqueue) is not installed."""
        _distributed()
        if spec.kind == "jobqueue":
            _jobqueue()
        self.spec = spec
        self.config = config or ClusterConfig()
        self.client: Any = None
        self._cluster: Any = None

    @property
    def ships_files(self) -> bool:
        return self.spec.kind != "local" and not self.config.shared_storage

    @property
    def workers(self) -> int:
        """Worker processes the cluster has now."""
        return len(self.client.scheduler_info()["workers"]) if self.client is not None else 0

    @property
    def capacity(self) -> int:
        return self.workers

    def start(self) -> None:
        if self.client is not None:
            return
        distributed = _distributed()
        _quiet_logs(logging.WARNING)
        import dask

        # Dask starts workers with MALLOC_TRIM_THRESHOLD_=65536 (memory back to the system
        # at every free): a fit's many short-lived arrays then cost 14 % more compute
        # (2.49 -> 2.84 s, one identification, this machine). Its memory is bounded anyway
        dask.config.set({_TRIM: None, _PROFILE: False})
        try:
            if self.spec.kind == "local":
                # its dashboard on a free port (several campaigns may run), this machine only
                self._cluster = distributed.LocalCluster(
                    n_workers=self.spec.workers, threads_per_worker=1, processes=True,
                    host="127.0.0.1", dashboard_address="127.0.0.1:0",
                    silence_logs=logging.WARNING)
            elif self.spec.kind == "jobqueue":
                self._cluster = jobqueue_cluster(self.config, self.spec.address)
                self._cluster.scale(jobs=self.config.jobs)
            self.client = distributed.Client(self._cluster or self.spec.address, timeout=30)
        except OSError as exc:  # a scheduler that does not answer: distributed's TimeoutError
            self.shutdown()
            raise ClusterError(f"--cluster {self.spec.address or 'local'}: {exc}") from None
        self.client.register_plugin(_warm_kernels(distributed, self.spec.kind == "local"))

    def submit(self, task: IdentifyTask) -> asyncio.Future[TaskOutcome]:
        self.start()
        loop = asyncio.get_running_loop()
        out: asyncio.Future[TaskOutcome] = loop.create_future()
        key = f"hilrig-{task.capture_id}-{task.method}-{uuid.uuid4().hex[:8]}"
        done = self.client.submit(run_task_json, task, key=key, pure=False)
        done.add_done_callback(lambda d: _settle(loop, d, out))
        out.add_done_callback(lambda o: done.cancel() if o.cancelled() else None)
        return out

    @property
    def dashboard(self) -> str | None:
        """The Dask dashboard's address, to watch a campaign's workers."""
        return getattr(self.client, "dashboard_link", None) if self.client else None

    def shutdown(self) -> None:
        client, self.client = self.client, None
        cluster, self._cluster = self._cluster, None
        # workers going away say so loudly while a cluster closes: nothing a user can act on
        _quiet_logs(logging.CRITICAL)
        if client is not None:
            if cluster is not None:  # our own workers (a joined scheduler's are not ours)
                with contextlib.suppress(Exception):  # a worker already gone
                    client.run(_quiet_logs, logging.CRITICAL, on_error="ignore")
            client.close()
        if cluster is not None:
            cluster.close()
