"""Simulated sessions put together: does the drift test find a drift that is there and
leave alone one that is not, are its intervals honest, and what does pooling narrow?

Each session (identify.signal.simulated_session) is one random rig and friction (the
Monte Carlo's draws: the rig +-10 % off what the lab tells, friction about Table III)
released `--captures` times over `--span` hours by a trembling hand, each capture 35 s
at 10 kHz through imperfect encoders; each capture is identified by the recommended
estimator, then the session's results are put together (identify.session.pool_results).
Two kinds of session: "steady" (no drift) and "drift" (mu_v1 rising 10 % over the
session, linearly in session time); `--outliers` adds a third, one capture of a knocked
rig (its mu_v1 x 1.3).

Prints, per kind: the verdicts; false alarms (a steady session called anything but "no
drift"); the drift found (mu_v1 moved, and no other level) and the share of mu_v1's
slope intervals holding the true slope; the pooled rig quantities the data fix alone
(tilt, reduced length, L1): their coverage and how much narrower their intervals are
than one capture's (median ratio), and how honest one capture's own intervals are (their
coverage, and the rms of each capture's error over its standard error: the pooling takes
those errors as a floor, so they decide its coverage); the pooled friction's coverage;
and the time: the captures' identifications against the pooling.

    python bench/bench_session_pooled.py [--sessions 40] [--captures 10] [--span 8]
                                         [--duration 35] [--seed 1] [--workers 2]
                                         [--outliers N] [--records JSONL]
                                         [--keep DIR | --from DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import statistics
import time
from collections import Counter, defaultdict

import numpy as np

from hilrig.identify import (
    TABLE_III_TRUTH,
    IdentificationResult,
    RigParams,
    identify,
    pool_results,
)
from hilrig.identify.model import rig_quantities
from hilrig.identify.signal import SimulatedSession, simulated_session

LEVELS = ("mu_d0", "mu_v0", "mu_d1", "mu_v1")
DATA_ONLY = ("tilt_deg", "reduced_length", "L1")
#: the verdict of a session none of whose captures is fit to pool
NO_ANSWER = "no answer"


def _identify(job):
    k, m = job
    return k, identify(m)


def _session(kind: str, seed: int, args: argparse.Namespace) -> SimulatedSession:
    kw: dict = {}
    if kind == "drift":
        kw["drift_per_hour"] = {"mu_v1": 0.1 / args.span}
    if kind == "outlier":
        kw["outlier"] = args.captures // 2
    return simulated_session(np.random.default_rng(seed), RigParams(), TABLE_III_TRUTH,
                             args.captures, args.span, duration=args.duration, **kw)


def _keep(directory: str, kind: str, s: int, session: SimulatedSession, results) -> None:
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{kind}-{s:03d}.json"), "w") as f:
        json.dump({"hours": session.hours.tolist(), "friction": session.friction.model_dump(),
                   "rig": session.rig.model_dump(),
                   "results": [json.loads(r.to_json()) for r in results]}, f)


def _evaluate(kind: str, s: int, hours, friction: dict, rig_true: dict, results,
              args: argparse.Namespace) -> tuple[dict, float]:
    """One session's record: its verdict, the levels that moved, the mu_v1 slope against
    the truth, the pooled rig's and friction's coverage; and the seconds pooling took."""
    hours = np.asarray(hours, dtype=float)
    t = time.perf_counter()
    try:
        answer = pool_results(results, hours, session_id=f"{kind}-{s}")
    except ValueError as exc:  # every capture's own fit inadequate: the session has no answer
        return {"kind": kind, "session": s, "verdict": NO_ANSWER, "summary": str(exc),
                "moved": [], "standouts": [], "left_out": [r.capture_id for r in results],
                "rig": {}, "friction": {}}, time.perf_counter() - t
    seconds = time.perf_counter() - t
    moved = sorted(k for k, v in answer.drift.slopes.items() if v.moved)
    mid = float(np.mean(hours))
    rate = 0.1 / args.span
    truth_slope = rate / (1 + rate * mid) if kind == "drift" else 0.0
    sl = answer.drift.slopes.get("mu_v1")
    rec = {"kind": kind, "session": s, "verdict": answer.verdict, "summary": answer.summary,
           "moved": moved, "slope": sl and [sl.per_unit, *sl.ci95], "truth_slope": truth_slope,
           "standouts": [x.capture_id for x in answer.drift.standouts],
           "left_out": [c.capture_id for c in answer.captures if not c.included],
           "rig": {}, "friction": {}}
    for name in DATA_ONLY:
        p = answer.rig[name]
        widths = [r.rig[name].ci95[1] - r.rig[name].ci95[0] for r in results
                  if r.rig.get(name) and r.rig[name].ci95 is not None]
        own = [r.rig[name] for r in results if r.rig.get(name) and r.rig[name].identifiable
               and r.rig[name].ci95 is not None]
        rec["rig"][name] = {"covers": _covers(p.ci95, rig_true[name]),
                            "ratio": (statistics.median(widths) / (p.ci95[1] - p.ci95[0])
                                      if p.ci95 and widths else None),
                            "own_covers": [_covers(q.ci95, rig_true[name]) for q in own],
                            "own_z": [_z(q.value, q.ci95, rig_true[name]) for q in own]}
    if kind == "steady":
        for name in LEVELS:
            rec["friction"][name] = _covers(answer.parameters[name].ci95, friction[name])
    if kind == "drift" and sl is not None:
        rec["slope_covers"] = sl.ci95[0] <= truth_slope <= sl.ci95[1]
        # its error over its standard error (the interval's half-width over its t quantile)
        half = (sl.ci95[1] - sl.ci95[0]) / 2
        rec["slope_z"] = (sl.per_unit - truth_slope) / (half / _t_quantile(sl.df)) \
            if half > 0 else math.inf
    return rec, seconds


def _kept_session(directory: str, kind: str, s: int) -> list[IdentificationResult] | None:
    path = os.path.join(directory, f"{kind}-{s:03d}.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return [_result_of(r) for r in json.load(f)["results"]]


def _result_of(doc: dict) -> IdentificationResult:
    """A kept result; one kept before unbounded intervals became null (judged) has
    [null, null] there, read as no interval."""
    for group in ("parameters", "rig"):
        for p in doc.get(group, {}).values():
            if p.get("ci95") == [None, None]:
                p["ci95"] = None
    return IdentificationResult.model_validate(doc)


def _kept(directory: str) -> list[tuple[str, int, dict]]:
    out = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json"):
            kind, s = name[:-5].rsplit("-", 1)
            with open(os.path.join(directory, name)) as f:
                out.append((kind, int(s), json.load(f)))
    return out


def _t_quantile(df: int) -> float:
    """Student's t at 97.5 % (the intervals' own quantile)."""
    from scipy.special import stdtrit
    return float(stdtrit(df, 0.975))


def _covers(ci, truth: float) -> bool:
    return ci is not None and ci[0] <= truth <= ci[1]


def _z(value, ci, truth: float) -> float:
    """One capture's error over its standard error, that of the log where the interval is
    a factor either side (as the pooling reads it)."""
    lo, hi = ci
    if lo > 0 and value > 0 and truth > 0:
        return math.log(value / truth) / (math.log(hi / lo) / (2 * 1.96))
    return (value - truth) / ((hi - lo) / (2 * 1.96))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=40, help="of each kind")
    ap.add_argument("--captures", type=int, default=10)
    ap.add_argument("--span", type=float, default=8.0, help="hours from first to last")
    ap.add_argument("--duration", type=float, default=35.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--outliers", type=int, default=0, help="sessions with a knocked capture")
    ap.add_argument("--records", help="one JSON line per session")
    ap.add_argument("--keep", metavar="DIR", help="each session's hours, truth and capture "
                    "results as JSON (to pool them again without identifying)")
    ap.add_argument("--from", dest="source", metavar="DIR",
                    help="pool the sessions a --keep run left, identifying nothing")
    args = ap.parse_args()
    # interleaved: a run stopped early has every kind
    plan = [(kind, s) for s in range(max(args.sessions, args.outliers))
            for kind in ("steady", "drift", "outlier")
            if s < (args.outliers if kind == "outlier" else args.sessions)]
    verdicts: dict[str, Counter] = defaultdict(Counter)
    tally: dict[str, list] = defaultdict(list)
    single_s: list[float] = []
    pool_s: list[float] = []
    out = open(args.records, "w") if args.records else None
    # one worker process per core, one thread each: the captures are the parallel work
    os.environ.setdefault("HILRIG_THREADS", "1")
    t_all = time.perf_counter()
    if args.source:
        kept = _kept(args.source)
        plan = [(kind, s) for kind, s, _ in kept]
        for kind, s, doc in kept:
            results = [_result_of(r) for r in doc["results"]]
            single_s += [r.compute_seconds for r in results]
            rec, seconds = _evaluate(kind, s, doc["hours"], doc["friction"],
                                     rig_quantities(RigParams(**doc["rig"])), results, args)
            pool_s.append(seconds)
            verdicts[kind][rec["verdict"]] += 1
            tally[kind].append(rec)
            if out:
                out.write(json.dumps(rec) + "\n")
            if rec["verdict"] != {"steady": "no drift", "drift": "drift"}.get(kind, ""):
                print(f"{kind} {s}: {rec['summary']}")
        if out:
            out.close()
        _report(args, plan, verdicts, tally, single_s, pool_s, time.perf_counter() - t_all)
        return
    with mp.get_context("spawn").Pool(args.workers) as pool:
        for n, (kind, s) in enumerate(plan):
            session = _session(kind, args.seed * 100_003 + s, args)
            kept = _kept_session(args.keep, kind, s) if args.keep else None
            if kept is not None:  # a --keep run stopped early goes on from there
                results = kept
            else:
                jobs = [(k, c.measurement) for k, c in enumerate(session.captures)]
                results = [r for _, r in sorted(pool.imap_unordered(_identify, jobs))]
                if args.keep:
                    _keep(args.keep, kind, s, session, results)
            single_s += [r.compute_seconds for r in results]
            rec, seconds = _evaluate(kind, s, session.hours, session.friction.model_dump(),
                                     rig_quantities(session.rig), results, args)
            pool_s.append(seconds)
            verdicts[kind][rec["verdict"]] += 1
            tally[kind].append(rec)
            if out:
                out.write(json.dumps(rec) + "\n")
                out.flush()
            print(f"{n + 1}/{len(plan)} {kind} {s}: {rec['summary']}", flush=True)
    if out:
        out.close()
    _report(args, plan, verdicts, tally, single_s, pool_s, time.perf_counter() - t_all)


def _report(args, plan, verdicts, tally, single_s, pool_s, elapsed) -> None:
    print()
    print(f"{len(plan)} sessions of {args.captures} captures ({args.duration:g} s, over "
          f"{args.span:g} h), {elapsed / 60:.1f} min on {args.workers} processes")
    for kind, c in verdicts.items():
        print(f"  {kind}: " + ", ".join(f"{v} {n}" for v, n in c.most_common()))
    steady, drift = tally["steady"], tally["drift"]
    if steady:
        alarms = sum(r["verdict"] != "no drift" for r in steady)
        print(f"false alarms (steady, not 'no drift'): {alarms}/{len(steady)} "
              f"= {100 * alarms / len(steady):.1f} %  (goal <= 5 %)")
        for name in LEVELS:
            hits = [r["friction"][name] for r in steady if name in r["friction"]]
            print(f"  pooled {name} interval holds the truth: {sum(hits)}/{len(hits)}")
    if drift:
        found = sum(r["verdict"] == "drift" and "mu_v1" in r["moved"] for r in drift)
        only = sum(r["verdict"] == "drift" and r["moved"] == ["mu_v1"] for r in drift)
        cov = [r["slope_covers"] for r in drift if "slope_covers" in r]
        print(f"drift found (mu_v1 moved): {found}/{len(drift)} = {100 * found / len(drift):.1f} %"
              f" (goal >= 90 %); mu_v1 alone: {only}")
        if cov:
            zs = [r["slope_z"] for r in drift if "slope_z" in r]
            print(f"  mu_v1 slope interval holds the true slope: {sum(cov)}/{len(cov)} = "
                  f"{100 * sum(cov) / len(cov):.1f} %  (goal 90-98 %); rms of its error over "
                  f"its standard error {math.sqrt(statistics.fmean(z * z for z in zs)):.2f}")
    knocked = tally["outlier"]
    if knocked:
        name = f"session-{args.captures // 2:02d}"
        named = sum(name in r["standouts"] for r in knocked)
        alone = sum(r["standouts"] == [name] for r in knocked)
        print(f"knocked capture ({name}, mu_v1 x 1.3) stands out: {named}/{len(knocked)}, "
              f"alone: {alone}")
    both = [r for r in steady + drift if r["verdict"] != NO_ANSWER]
    unanswered = [f"{r['kind']} {r['session']}" for r in steady + drift
                  if r["verdict"] == NO_ANSWER]
    if unanswered:
        print(f"sessions with no answer (every capture's own fit inadequate): "
              f"{len(unanswered)} ({', '.join(unanswered)}); counted above, as a false alarm "
              "or a drift not found")
    for name in DATA_ONLY if both else ():  # (a run of knocked sessions alone: none)
        covers = [r["rig"][name]["covers"] for r in both]
        ratios = [r["rig"][name]["ratio"] for r in both if r["rig"][name]["ratio"]]
        print(f"rig {name}: pooled interval holds the truth {sum(covers)}/{len(covers)} = "
              f"{100 * sum(covers) / len(covers):.1f} % (goal 90-98 %); one capture's interval "
              f"/ pooled: median {statistics.median(ratios):.2f}x (goal >= 2.5x)")
        # the pooling takes each capture's stated error as a floor (identify.session
        # ._meta): how honest those are decides the pooled coverage
        own = [c for r in both for c in r["rig"][name].get("own_covers", [])]
        zs = np.array([z for r in both for z in r["rig"][name].get("own_z", [])])
        if own:
            print(f"  one capture's own interval holds it {sum(own)}/{len(own)} = "
                  f"{100 * sum(own) / len(own):.1f} %; rms of its error over its standard "
                  f"error {float(np.sqrt(np.mean(zs ** 2))):.2f} (1 when calibrated)")
    if single_s:
        one = statistics.median(single_s)
        per_session = sum(single_s) / len(plan)
        print(f"time: one capture's identification median {one:.2f} s; a session's "
              f"{args.captures} identifications {per_session:.1f} s of compute = "
              f"{per_session / one:.1f} x one capture; pooling them "
              f"{1e3 * statistics.median(pool_s):.1f} ms (median) = "
              f"{statistics.median(pool_s) / one:.4f} x one capture")



if __name__ == "__main__":
    main()
