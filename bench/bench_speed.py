"""How long the recommended estimator takes on a 35 s capture, warm and in a fresh process.

The goals (issue: one estimator for every rig), on this 2-core machine: at most 2 s of
compute warm on every realistic 35 s capture and at most 1 s median, with everything the
estimator does (release, segments, rig prior, the score tests and any model they ask
for, intervals); a whole warm `hilrig identify` at most 1 s above its compute; the first
identification after an install (an empty numba cache) at most 5 s above a warm one.

Printed per capture (bench_real_rig.py's cases, 35 s): the warm time (median of
--repeat after one warm-up) with the Jacobian from forward sensitivities, the same with
the finite-difference Jacobian as a baseline measured in this run, and their ratio.
Then --realistic N random realistic captures (bench_coverage's draws under the
"realistic" condition, --seed): the goal is "every realistic 35 s capture", and those
five cases are chosen ones; each timed once, warm, with the number of models its
selection tried (diagnostics' models_tried; restarts and refits come on top).
Then a fresh process: its first identification against its second (caches on disk);
with an empty cache, the kernels compiled ahead in child processes (identify.model
ensure_compiled) against the same compiled in the process (HILRIG_COMPILE_AHEAD=0, as
numba alone does); and a whole `hilrig identify` of the ideal capture against its
reported compute.

With --baseline TREE (another checkout, e.g. `git worktree add /tmp/old HEAD~1`), the
realistic captures and the whole command are timed for this tree and that one in turn,
capture by capture, each tree in its own warm process: this machine's speed drifts by
10-15 % within minutes, so only figures taken side by side compare. The estimates are
compared too (a digest of every value and interval per capture).

    python bench/bench_speed.py [--cases ideal,hand,tableV,drag,cad] [--repeat 3]
                                [--realistic 12] [--seed 1] [--baseline TREE]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_real_rig import CASES, capture

from hilrig.identify import TABLE_III_TRUTH, RigParams, identify
from hilrig.identify.methods.estimator.furuta import ShootingProblem
from hilrig.identify.signal import random_realistic_capture

GOAL_WARM_S, GOAL_MEDIAN_S, GOAL_FIRST_EXTRA_S, GOAL_CLI_EXTRA_S = 2.0, 1.0, 5.0, 1.0

_FRESH = """
import sys, time
sys.path.insert(0, {bench!r})
t0 = time.perf_counter()
from bench_real_rig import capture
from hilrig.identify import identify
m = capture("ideal", 35.0).measurement
t1 = time.perf_counter()
identify(m, "shooting")
t2 = time.perf_counter()
identify(m, "shooting")
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2)
"""


#: a warm process of one tree: identifies the pickled measurements named on stdin, one
#: JSON line each (compute seconds, a digest of every estimate and interval)
_WORKER = """
import hashlib, json, pickle, sys, time
import hilrig
from hilrig.identify import identify
print(json.dumps({"tree": hilrig.__file__}), flush=True)
for path in sys.stdin:
    with open(path.strip(), "rb") as f:
        m = pickle.load(f)
    t0 = time.perf_counter()
    r = identify(m, "shooting")
    seconds = time.perf_counter() - t0
    est = {g: {k: [p.value, p.ci95] for k, p in sorted(getattr(r, g).items())}
           for g in ("parameters", "rig")}
    digest = hashlib.sha256(json.dumps(est).encode()).hexdigest()[:12]
    print(json.dumps({"seconds": seconds, "digest": digest}), flush=True)
"""


#: this checkout (the tree --baseline is set against)
HERE = str(Path(__file__).resolve().parent.parent)


def _realistic_captures(n: int, seed: int):
    """bench_coverage's realistic draws (seed), as measurements."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield random_realistic_capture(rng, RigParams(), TABLE_III_TRUTH, 35.0).measurement


def _in_turn(names, k: int) -> list:
    """The names in order on even rounds, reversed on odd ones: neither side always first."""
    return list(names) if k % 2 == 0 else list(names)[::-1]


def _ideal_capture(directory: str) -> Path:
    """`hilrig simulate` of the public case into `directory`."""
    path = Path(directory) / "ideal.h5"
    subprocess.run([sys.executable, "-m", "hilrig", "simulate", "--out", str(path)],
                   check=True, capture_output=True)
    return path


def _tree_env(tree: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([tree, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _side_by_side(n: int, seed: int, baseline: str) -> None:
    """The realistic captures for this tree and `baseline` in turn, each in a warm
    process of its own (warmed up on the first capture, then every capture timed)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for k, m in enumerate(_realistic_captures(n, seed)):
            paths.append(Path(tmp) / f"capture{k}.pkl")
            paths[-1].write_bytes(pickle.dumps(m))
        trees = {"this tree": HERE, "baseline": baseline}
        procs = {name: subprocess.Popen([sys.executable, "-c", _WORKER],
                                        env=_tree_env(tree), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, cwd=tmp)
                 for name, tree in trees.items()}
        for name, proc in procs.items():  # each process runs the tree it was given
            assert proc.stdout is not None
            loaded = Path(json.loads(proc.stdout.readline())["tree"]).resolve()
            if not loaded.is_relative_to(Path(trees[name]).resolve()):
                raise SystemExit(f"bench_speed: the {name}'s process loaded {loaded}, "
                                 f"not {trees[name]}")

        def run(name: str, path: Path) -> dict:
            proc = procs[name]
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(f"{path}\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"bench_speed: the {name}'s process ended ({trees[name]})")
            return json.loads(line)

        for name in procs:  # warm-up: caches loaded, kernels compiled
            run(name, paths[0])
        times: dict[str, list[float]] = {name: [] for name in procs}
        same = 0
        print(f"{n} realistic captures (seed {seed}), this tree and {baseline} in turn:")
        for k, path in enumerate(paths):
            out = {name: run(name, path) for name in _in_turn(procs, k)}
            for name in procs:
                times[name].append(out[name]["seconds"])
            alike = out["this tree"]["digest"] == out["baseline"]["digest"]
            same += alike
            print(f"  capture {k + 1}: {out['this tree']['seconds']:.2f} s against "
                  f"{out['baseline']['seconds']:.2f} s{'' if alike else ', estimates differ'}",
                  flush=True)
        for proc in procs.values():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
    new, old = times["this tree"], times["baseline"]
    print(f"side by side: total {sum(new):.1f} s against {sum(old):.1f} s "
          f"({sum(new) / sum(old):.2f}); median {statistics.median(new):.2f} against "
          f"{statistics.median(old):.2f} s; slowest {max(new):.2f} against {max(old):.2f} s; "
          f"the same estimates and intervals on {same} of {n} captures")


def _warm(m, repeat: int) -> float:
    identify(m, "shooting")
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        identify(m, "shooting")
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _fresh(cache_dir: str | None, ahead: bool = True) -> tuple[float, float, float]:
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    if not ahead:
        env["HILRIG_COMPILE_AHEAD"] = "0"
    out = subprocess.run([sys.executable, "-c", _FRESH.format(bench=str(Path(__file__).parent))],
                         env=env, capture_output=True, text=True, check=True).stdout
    imports, first, second = (float(x) for x in out.split())
    return imports, first, second


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="ideal,hand,tableV,drag,cad")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--realistic", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--baseline", metavar="TREE",
                    help="another checkout, timed side by side with this one")
    args = ap.parse_args()
    if args.baseline:  # absolute: the trees' processes run elsewhere
        args.baseline = str(Path(args.baseline).resolve())
        if not (Path(args.baseline) / "hilrig" / "__init__.py").exists():
            raise SystemExit(f"--baseline {args.baseline}: no hilrig checkout there")
    print(f"shooting on 35 s captures, warm: median of {args.repeat}; goal {GOAL_WARM_S:g} s")
    print(f"{'case':<8} {'sensitivity s':>13} {'differences s':>13} {'ratio':>6}  the capture has")
    warm = []
    for name in args.cases.split(","):
        m = capture(name, 35.0).measurement
        ShootingProblem.jacobian = "sensitivity"
        fast = _warm(m, args.repeat)
        ShootingProblem.jacobian = "difference"
        slow = _warm(m, args.repeat)
        ShootingProblem.jacobian = "sensitivity"
        warm.append(fast)
        print(f"{name:<8} {fast:>13.2f} {slow:>13.2f} {slow / fast:>5.1f}x  {CASES[name][0]}",
              flush=True)
    worst, median = max(warm), statistics.median(warm)
    print(f"slowest warm: {worst:.2f} s ({'within' if worst <= GOAL_WARM_S else 'ABOVE'} "
          f"the {GOAL_WARM_S:g} s goal); median {median:.2f} s "
          f"({'within' if median <= GOAL_MEDIAN_S else 'ABOVE'} the {GOAL_MEDIAN_S:g} s goal)")
    if args.realistic:
        _realistic(args.realistic, args.seed)
        if args.baseline:
            _side_by_side(args.realistic, args.seed, args.baseline)
    imports, first, second = _fresh(None)
    print(f"fresh process, caches on disk: imports {imports:.2f} s, first identification "
          f"{first:.2f} s, second {second:.2f} s: the first adds {first - second:.2f} s")
    for ahead, how in ((True, "compiled ahead in child processes"),
                       (False, "compiled in the process (the baseline)")):
        with tempfile.TemporaryDirectory() as empty:
            imports, first, second = _fresh(empty, ahead)
        print(f"fresh process, empty cache (after an install), {how}: first identification "
              f"{first:.2f} s, second {second:.2f} s: compiling adds {first - second:.2f} s "
              f"(goal {GOAL_FIRST_EXTRA_S:g} s)")
    _cli()
    if args.baseline:
        _cli_side_by_side(args.baseline)


def _realistic(n: int, seed: int) -> None:
    """Random realistic captures (bench_coverage's draws), each timed once, warm."""
    times = []
    print(f"{n} random realistic captures of 35 s (seed {seed}), warm, once each:")
    for k, m in enumerate(_realistic_captures(n, seed)):
        t0 = time.perf_counter()
        r = identify(m, "shooting")
        times.append(time.perf_counter() - t0)
        fits = len([x for x in r.diagnostics["models_tried"] if "bic" in x])
        excess = r.diagnostics["residual_over_noise"]
        print(f"  capture {k + 1}: {times[-1]:.2f} s, {fits} model(s) tried, residuals "
              f"{excess['arm']:.2f}/{excess['pendulum']:.2f} of the noise", flush=True)
    worst, median = max(times), statistics.median(times)
    over = sum(t > GOAL_WARM_S for t in times)
    print(f"realistic: median {median:.2f} s (goal {GOAL_MEDIAN_S:g}), slowest {worst:.2f} s "
          f"(goal {GOAL_WARM_S:g}); {over} of {n} above {GOAL_WARM_S:g} s")


def _cli_runs(path: Path, tree: str | None) -> tuple[float, float]:
    """One whole `python -m hilrig identify --json` (of `tree`, else the installed one):
    its wall time and the compute it reports."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "hilrig", "identify", str(path), "--json"],
                         check=True, capture_output=True, text=True, env=_tree_env(tree),
                         cwd=path.parent).stdout
    return time.perf_counter() - t0, json.loads(out)["compute_seconds"]


def _cli() -> None:
    """A whole warm `hilrig identify` of the ideal capture against the compute it reports."""
    with tempfile.TemporaryDirectory() as tmp:
        path = _ideal_capture(tmp)
        _cli_runs(path, None)  # warm: bytecode and numba caches written
        runs = [_cli_runs(path, None) for _ in range(3)]
    extra = statistics.median(w - c for w, c in runs)
    print(f"warm hilrig identify of the public case: {statistics.median(w for w, _ in runs):.2f} s "
          f"whole, {statistics.median(c for _, c in runs):.2f} s compute: {extra:.2f} s above "
          f"it (goal {GOAL_CLI_EXTRA_S:g} s)")


def _cli_side_by_side(baseline: str, rounds: int = 8) -> None:
    """The whole command of this tree and of `baseline` in turn, `rounds` times each."""
    trees = {"this tree": HERE, "baseline": baseline}
    extra: dict[str, list[float]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        path = _ideal_capture(tmp)
        for tree in trees.values():
            _cli_runs(path, tree)
        for k in range(rounds):
            for name in _in_turn(trees, k):
                wall, compute = _cli_runs(path, trees[name])
                extra[name].append(wall - compute)
    new, old = statistics.median(extra["this tree"]), statistics.median(extra["baseline"])
    print(f"warm hilrig identify above its compute, {rounds} times each in turn: {new:.2f} s "
          f"against the baseline's {old:.2f} s ({new / old:.2f})")


if __name__ == "__main__":
    main()
