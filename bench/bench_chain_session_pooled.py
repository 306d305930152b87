"""Simulated sessions of chain rigs (single, nlink:2) put together: the drift test on a
single or double pendulum, as bench_session_pooled.py runs it on the Furuta rig.

Each session (identify.signal.simulated_chain_session) is seed 002's laboratory chain,
its joints' friction drawn about the lab's (Coulomb and viscous x0.5-2, a breakaway
0.8-3 times the Coulomb, v_t 0.01-0.3 rad/s), released `--captures` times over `--span`
hours by a trembling hand from 90-150 deg per link, each record `--duration` s at 1 kHz
through 40,000-count encoders; each record identified by identify_chain, the session's
results put together (identify.session.pool_results). Two kinds of session: "steady"
and "drift" (the last link's viscous term rising 10 % over the session); `--outliers`
adds a third, one record of a knocked rig (that term x 1.3).

Prints, per rig kind: the verdicts; false alarms (steady, not "no drift"); the drift
found (the term moved, alone) and the share of its slope intervals holding the true
slope; whether each pooled Coulomb and viscous level of a steady session holds the
truth; and the time: the records' identifications against the pooling.

    python bench/bench_chain_session_pooled.py [--kinds single,nlink:2] [--sessions 20]
                                               [--captures 10] [--span 8] [--duration 30]
                                               [--seed 1] [--workers 2] [--outliers N]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time
from collections import Counter

import numpy as np

from hilrig.identify import ChainRig, identify_chain, pool_results
from hilrig.identify.seeds import lab_chain
from hilrig.identify.signal import SimulatedChainSession, simulated_chain_session

RATE = 0.1  # the drift over the session, a fraction of the level


def _identify(job):
    k, record, rig = job
    return k, identify_chain(record, rig)


def _session(rig: ChainRig, kind: str, seed: int, args) -> SimulatedChainSession:
    term = f"b{rig.links}"
    kw: dict = {}
    if kind == "drift":
        kw["drift_per_hour"] = {term: RATE / args.span}
    if kind == "outlier":
        kw["outlier"] = args.captures // 2
    return simulated_chain_session(np.random.default_rng(seed), rig, lab_chain(rig.links),
                                   args.captures, args.span, duration=args.duration, **kw)


def _evaluate(kind: str, session: SimulatedChainSession, results, args) -> tuple[dict, float]:
    links = session.rig.links
    level = next(n for n in results[0].parameters if n.startswith(f"b{links}/"))
    t = time.perf_counter()
    try:
        answer = pool_results(results, session.hours)
    except ValueError as exc:
        return {"verdict": "no answer", "summary": str(exc), "moved": [], "friction": {}}, \
            time.perf_counter() - t
    seconds = time.perf_counter() - t
    rec = {"verdict": answer.verdict, "summary": answer.summary,
           "moved": sorted(k for k, v in answer.drift.slopes.items() if v.moved),
           "level": level, "friction": {},
           "named": [x.capture_id for x in answer.drift.standouts]
           == [f"session-{session.outlier:02d}"] if session.outlier is not None else None}
    mid = float(np.mean(session.hours))
    rate = RATE / args.span
    sl = answer.drift.slopes.get(level)
    if kind == "drift" and sl is not None:
        rec["slope_covers"] = sl.ci95[0] <= rate / (1 + rate * mid) <= sl.ci95[1]
    if kind == "steady":
        truth = session.params.normalised().friction
        for name, p in answer.parameters.items():
            head = name.split("/")[0]
            term = head.rstrip("0123456789")
            if term in ("Fc", "b") and p.ci95 is not None:
                value = truth[int(head[len(term):]) - 1, 0 if term == "Fc" else 3]
                rec["friction"][head] = p.ci95[0] <= value <= p.ci95[1]
    return rec, seconds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kinds", default="single,nlink:2")
    ap.add_argument("--sessions", type=int, default=20, help="of each kind")
    ap.add_argument("--captures", type=int, default=10)
    ap.add_argument("--span", type=float, default=8.0, help="hours from first to last")
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--outliers", type=int, default=0, help="sessions with a knocked record")
    args = ap.parse_args()
    os.environ.setdefault("HILRIG_THREADS", "1")  # the records are the parallel work
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for rig_kind in args.kinds.split(","):
            _run(pool, ChainRig(kind=rig_kind), args)


def _run(pool, rig: ChainRig, args) -> None:
    plan = [(kind, s) for s in range(max(args.sessions, args.outliers))
            for kind in ("steady", "drift", "outlier")
            if s < (args.outliers if kind == "outlier" else args.sessions)]
    verdicts: dict[str, Counter] = {}
    tally: dict[str, list] = {}
    single_s: list[float] = []
    pool_s: list[float] = []
    t0 = time.perf_counter()
    for n, (kind, s) in enumerate(plan):
        session = _session(rig, kind, args.seed * 100_003 + s, args)
        jobs = [(k, r, rig) for k, r in enumerate(session.records)]
        results = [r for _, r in sorted(pool.imap_unordered(_identify, jobs),
                                        key=lambda kr: kr[0])]
        single_s += [r.compute_seconds for r in results]
        rec, seconds = _evaluate(kind, session, results, args)
        pool_s.append(seconds)
        verdicts.setdefault(kind, Counter())[rec["verdict"]] += 1
        tally.setdefault(kind, []).append(rec)
        print(f"{rig.kind} {n + 1}/{len(plan)} {kind} {s}: {rec['summary']}", flush=True)
    print(f"\n{rig.kind}: {len(plan)} sessions of {args.captures} records ({args.duration:g} s, "
          f"over {args.span:g} h), {(time.perf_counter() - t0) / 60:.1f} min on "
          f"{args.workers} processes")
    for kind, c in verdicts.items():
        print(f"  {kind}: " + ", ".join(f"{v} {k}" for v, k in c.most_common()))
    steady, drift = tally.get("steady", []), tally.get("drift", [])
    knocked = tally.get("outlier", [])
    if knocked:
        named = sum(bool(r.get("named")) for r in knocked)
        print(f"  the knocked record named, and it alone: {named}/{len(knocked)}")
    if steady:
        alarms = sum(r["verdict"] != "no drift" for r in steady)
        print(f"  false alarms (steady, not 'no drift'): {alarms}/{len(steady)} = "
              f"{100 * alarms / len(steady):.1f} %  (goal <= 5 %)")
        names = sorted({n for r in steady for n in r["friction"]})
        for name in names:
            hits = [r["friction"][name] for r in steady if name in r["friction"]]
            print(f"    pooled {name} interval holds the truth: {sum(hits)}/{len(hits)}")
    if drift:
        term = drift[0].get("level", "b")
        found = sum(r["verdict"] == "drift" and term in r["moved"] for r in drift)
        only = sum(r["verdict"] == "drift" and r["moved"] == [term] for r in drift)
        cov = [r["slope_covers"] for r in drift if "slope_covers" in r]
        print(f"  drift found ({term} moved): {found}/{len(drift)} = "
              f"{100 * found / len(drift):.1f} % (goal >= 90 %); alone: {only}")
        if cov:
            print(f"    slope interval holds the true slope: {sum(cov)}/{len(cov)} = "
                  f"{100 * sum(cov) / len(cov):.1f} %  (goal 90-98 %)")
    if single_s:
        one, mean = statistics.median(single_s), statistics.mean(single_s)
        per_session = sum(single_s) / len(plan)
        print(f"  time: one record's identification median {one:.2f} s (mean {mean:.2f}); a "
              f"session's {args.captures} {per_session:.1f} s = {per_session / one:.1f} x the "
              f"median, {per_session / mean:.1f} x the mean; pooling "
              f"{1e3 * statistics.median(pool_s):.1f} ms (median)")


if __name__ == "__main__":
    main()
