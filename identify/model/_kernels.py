"""The compiled kernels each rig kind's estimator needs, compiled ahead in child processes.

Numba compiles a kernel on its first call and keeps the machine code on disk
(cache=True), so only the first identification after an install pays for it: about 3 s
on a 2-core machine, most of it the multiple-shooting sensitivity kernel. In the
caller's process that time is serial (numba holds one compiler lock), and a Ctrl-C
during it can come out as a numba typing error or be swallowed in an LLVM callback.
`ensure_compiled` instead compiles a rig kind's kernels in child processes, a group per
core, and waits for them; the caller then loads the kernels from the cache. An interrupt
stops the children and reaches the caller as a plain KeyboardInterrupt. A stamp keyed by
the kernels' sources, numba, Python and the cache directory says it was done, so a warm
run spawns nothing; a file lock keeps two processes (a service and its pool) from
compiling the same kernels twice. HILRIG_COMPILE_AHEAD=0 in the environment turns it off
(where child processes are not allowed): the first call compiles in the process, as
numba alone does. The children compile at LLVM's -O1 (HILRIG_KERNEL_OPT, or NUMBA_OPT,
says otherwise).
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import logging
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._progress import Progress, no_progress

__all__ = ["KERNELS", "compile_in_background", "ensure_compiled"]

log = logging.getLogger(__name__)

# (module, function, argument types); the types as the estimator's calls make them:
# C-contiguous writable float64 (f) and int64 (i) arrays of 1 or 2 dimensions, scalars
_Kernel = tuple[str, str, tuple[str, ...]]
_FURUTA: tuple[tuple[_Kernel, ...], ...] = (
    (("hilrig.identify.model._sensitivity", "sensitivity_jobs_into",
      ("f1", "i1", "f2", "i1", "i1", "f", "i1", "i1", "i1", "f2", "f3")),),
    (("hilrig.identify.model._segments", "simulate_jobs_into",
      ("f2", "f2", "f2", "i1", "f1", "f1", "i1", "i1", "f", "i1", "i1", "i1", "f2")),
     ("hilrig.identify.model._simulate", "simulate_scheduled",
      ("f1", "f1", "f1", "f", "f", "f", "i1")),
     ("hilrig.identify.model._equations", "coefficients", ("f1", "f1")),
     ("hilrig.identify.model._equations", "inverse_dynamics", ("f1", "f2", "f2", "f2"))),
)
_CHAIN: tuple[tuple[_Kernel, ...], ...] = (
    (("hilrig.identify.model.chain._sensitivity", "chain_sensitivity_jobs_into",
      ("f1", "f2", "f1", "f", "f2", "f2", "i1", "i1", "f", "i1", "i1", "i1", "f1", "i", "f1",
       "i1", "f2", "f2", "f2")),),
    (("hilrig.identify.model.chain._equations", "chain_segments_into",
      ("f1", "f2", "f1", "f", "f2", "f2", "i1", "i1", "f", "i1", "i1", "f2")),),
)
#: each rig kind's kernels (identify.model.rig_family), in groups compiled side by side
KERNELS: dict[str, tuple[tuple[_Kernel, ...], ...]] = {"furuta": _FURUTA, "chain": _CHAIN}

_children: set[subprocess.Popen[bytes]] = set()
_exiting = threading.Event()  # set at interpreter exit: the children were stopped on purpose


def ensure_compiled(family: str, progress: Progress | None = None) -> float:
    """Compile `family`'s kernels ahead, in child processes, unless a stamp says they are
    in numba's cache; the seconds spent (0.0 when warm). A child that fails leaves the
    compile to the caller's first call, as without this."""
    groups = KERNELS[family]
    if os.environ.get("HILRIG_COMPILE_AHEAD", "1") == "0":
        return 0.0
    stamp = _stamp_dir() / f"hilrig-kernels-{family}-{_key(groups)}.ok"
    if stamp.exists():
        return 0.0
    report = progress or no_progress
    t0 = time.perf_counter()
    with _locked(stamp.parent / "hilrig-kernels.lock"):
        if stamp.exists():  # another process compiled them while this one waited
            return time.perf_counter() - t0
        if _compile_in_children(family, len(groups), report):
            try:
                stamp.touch()
            except OSError as exc:
                log.debug("kernel stamp %s not written: %s", stamp, exc)
    return time.perf_counter() - t0


def compile_in_background(*families: str) -> threading.Thread:
    """ensure_compiled of each family on a daemon thread: a service that starts up has its
    kernels ready by its first capture's identification, and its identification processes
    wait on the same lock instead of compiling again."""

    def run() -> None:
        for family in families:
            if ensure_compiled(family) > 0 and not _exiting.is_set():
                log.info("compiled the %s estimator's kernels ahead", family)

    thread = threading.Thread(target=run, name="hilrig-kernels", daemon=True)
    thread.start()
    return thread


def _compile_in_children(family: str, n_groups: int, report: Progress) -> bool:
    cores = max(1, min(n_groups, os.cpu_count() or 1))
    batches = [[g for g in range(n_groups) if g % cores == c] for c in range(cores)]
    # the folder that holds the hilrig package (site-packages, or a checkout), found by
    # this module's name so that a checkout's links (hilrig/identify) are not resolved away
    root = str(Path(__file__).parents[__name__.count(".")])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root, *filter(None, [os.environ.get("PYTHONPATH")])]))
    # LLVM's -O1: a third less to compile, and the fits ran as fast as at numba's -O3
    # (bench/bench_speed.py); a NUMBA_OPT of the caller's own wins
    env.setdefault("NUMBA_OPT", os.environ.get("HILRIG_KERNEL_OPT", "1"))
    procs, errs = [], []
    try:
        for batch in batches:
            err = tempfile.TemporaryFile()  # not a pipe: a long traceback cannot block it
            errs.append(err)
            # a session of its own: a terminal's Ctrl-C reaches this process, which stops
            # the children, instead of each child printing its own traceback
            p = subprocess.Popen(
                [sys.executable, "-m", __name__, family, *map(str, batch)], env=env,
                cwd=root,  # -m puts the working directory first: another hilrig there
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                start_new_session=True)
            _children.add(p)
            procs.append(p)
        t0 = time.perf_counter()
        while any(p.poll() is None for p in procs):
            elapsed = time.perf_counter() - t0
            report(min(0.95, elapsed / 15.0),
                   f"compiling the estimator's kernels, once after an install ({elapsed:.0f} s)")
            time.sleep(0.2)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            _children.discard(p)
    ok = not _exiting.is_set()
    for p, err in zip(procs, errs):
        if p.returncode != 0 and not _exiting.is_set():
            ok = False
            err.seek(0)
            text = err.read().decode(errors="replace").strip()
            log.warning("compiling the %s kernels ahead failed (%s); the first fit compiles "
                        "them", family, text.splitlines()[-1] if text else f"exit {p.returncode}")
        err.close()
    return ok


@atexit.register
def _stop_children() -> None:
    _exiting.set()
    for p in list(_children):
        p.kill()


def _stamp_dir() -> Path:
    """Where numba keeps this package's cache: NUMBA_CACHE_DIR, else __pycache__ beside
    the kernels when it is writable, else a user cache directory."""
    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        path = Path(env)
    else:
        here = Path(__file__).resolve().parent
        path = here / "__pycache__"
        if not os.access(path if path.exists() else here, os.W_OK):
            path = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hilrig"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _key(groups: Sequence[Sequence[_Kernel]]) -> str:
    """What numba's cache depends on: the kernels' source files (as numba's own index
    stamps them, by modification time and size), numba, Python, the machine."""
    import platform

    from numba import __version__ as numba_version

    parts = [numba_version, sys.version, platform.machine(),
             os.environ.get("NUMBA_CACHE_DIR", "")]
    here = Path(__file__).resolve().parent
    for path in sorted(here.glob("*.py")):  # a kernel's callees may sit in any of them
        st = path.stat()
        parts.append(f"{path.name}:{st.st_mtime_ns}:{st.st_size}")
    parts.extend(f"{m}.{f}{a}" for group in groups for m, f, a in group)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # no POSIX locks: at worst two processes compile the same kernels
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _types(codes: Sequence[str]) -> tuple[Any, ...]:
    from numba import types

    scalar = {"f": types.float64, "i": types.int64}
    return tuple(scalar[c] if len(c) == 1 else types.Array(scalar[c[0]], int(c[1]), "C")
                 for c in codes)


def _compile_groups(family: str, groups: Sequence[int]) -> None:
    """The child's work: compile the named groups of `family`'s kernels into the cache."""
    for g in groups:
        for module, name, args in KERNELS[family][g]:
            getattr(importlib.import_module(module), name).compile(_types(args))


if __name__ == "__main__":
    _compile_groups(sys.argv[1], [int(g) for g in sys.argv[2:]])
