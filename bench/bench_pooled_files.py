"""How long `hilrig identify A B ... --pooled` takes on a night's capture files, side by
side against one after another, and that both give the same answer.

Writes --files realistic 35 s captures of one rig with `hilrig simulate` (a hand's
release, the rig 5 % off what it is told, encoder interpolation error, lost frames; one
per hour of the session, --seed on), then runs the whole command (a fresh process each
time, as a lab runs it) with --workers 1 and with the default (one process per core)
in turn, --rounds times, and prints each run's wall time, the ratio of the medians and
whether the answers agree (every value of the session's result but its times).

    python bench/bench_pooled_files.py [--files 10] [--rounds 2] [--seed 11]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HILRIG = [sys.executable, "-m", "hilrig"]


def _simulate(directory: Path, n: int, seed: int) -> list[str]:
    paths = []
    for k in range(n):
        path = directory / f"c{k:02d}.h5"
        subprocess.run([*HILRIG, "simulate", "--out", str(path), "--duration", "35",
                        "--seed", str(seed + k), "--rig-error", "0.05", "--tilt-error", "0.5",
                        "--tremor", "0.002", "--push", "0.5", "1.0", "--interpolation", "2",
                        "--lost-frames", "0.001", "--session-hours", str(k),
                        "--theta1", str(60 + 10 * k)], check=True, capture_output=True)
        paths.append(str(path))
    return paths


def _answer(out: str) -> dict:
    doc = json.loads(out)
    for key in ("compute_seconds", "created_utc"):
        doc.pop(key, None)
    return doc


def _run(paths: list[str], workers: str | None) -> tuple[float, dict, float]:
    """Wall seconds, the answer, and its compute seconds (the captures' sum)."""
    hours = [str(k) for k in range(len(paths))]
    extra = ["--workers", workers] if workers else []
    t0 = time.perf_counter()
    done = subprocess.run([*HILRIG, "identify", *paths, "--pooled", "--hours", *hours,
                           "--json", *extra], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        said = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise SystemExit(f"bench_pooled_files: {said[-1]}")
    return wall, _answer(done.stdout), json.loads(done.stdout)["compute_seconds"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = _simulate(Path(tmp), args.files, args.seed)
        print(f"{args.files} realistic captures of 35 s (seed {args.seed} on), "
              f"{os.cpu_count()} cores")
        walls: dict[str, list[float]] = {"one after another": [], "side by side": []}
        answers = []
        for r in range(args.rounds):
            order = [("one after another", "1"), ("side by side", None)]
            for name, workers in order if r % 2 == 0 else order[::-1]:
                wall, answer, compute = _run(paths, workers)
                walls[name].append(wall)
                answers.append(answer)
                print(f"  round {r + 1}, {name}: {wall:.1f} s wall, "
                      f"{compute:.1f} s of the captures' compute", flush=True)
    serial, parallel = walls["one after another"], walls["side by side"]
    same = all(a == answers[0] for a in answers)
    print(f"side by side / one after another: median {statistics.median(parallel):.1f} "
          f"against {statistics.median(serial):.1f} s = "
          f"{statistics.median(parallel) / statistics.median(serial):.2f}; "
          f"the same answer in every run: {same}")


if __name__ == "__main__":
    main()
