"""What the Furuta estimator's restart rounds cost, which start wins them, and whether a
start's first stage tells early that it will not.

The slow captures are those that run restart rounds (identify.methods.estimator.furuta
._select): the first fit far above the noise restarted from RESTART_OMEGA_T (and with
drag first where its score test asks), and the chosen model restarted while it stays
above the noise. Here every start of every round is finished, whatever the estimator
does, and then the estimator goes on as it would (so the rest of its selection, and the
rounds that follow, are its own). Per start: its first stage's chi^2 (the short
segments, _fit.short_fit) and time, and the finished fit's BIC, residuals over the noise
and time.

Prints every round, then: which start won how many rounds, the largest first-stage chi^2
(over the round's best) of a start that won, and of one that lost; and, replayed from
the recorded starts, what each order of RESTART_OMEGA_T would have cost in finished
starts and in how many rounds it would have kept a worse fit than the estimator's order.
The replay stops a round as the estimator does (below the excess, no transition
escaped), so it is exact for the round and says nothing of the selection after it.

The captures: bench_coverage's draws (--coverage N, the conditions in turn) and
bench_session_pooled's steady and drift sessions (--sessions N of each kind), --seed as
there. Each capture is identified on one thread, --workers at a time.

    python bench/bench_restarts.py [--coverage 60] [--sessions 0] [--seed 1] [--workers 2]
                                   [--records JSONL]
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing as mp
import os
import time
from typing import Any

os.environ["HILRIG_THREADS"] = "1"  # one capture per process, --workers side by side

import numpy as np  # noqa: E402

import hilrig.identify.methods.estimator.furuta._select as select  # noqa: E402
from hilrig.identify import TABLE_III_TRUTH, RigParams, identify  # noqa: E402
from hilrig.identify.methods.estimator.furuta import fit_from_short, short_fit  # noqa: E402
from hilrig.identify.signal import (  # noqa: E402
    CONDITIONS,
    random_realistic_capture,
    simulated_session,
)

#: BICs closer than this are the same fit (starts that end in one valley differ by less)
TIE_BIC = 10.0
#: the rounds of the capture being identified (one capture per process at a time)
_ROUNDS: list[dict[str, Any]] = []


def _finished(m, prior, laws, extras, omega) -> dict[str, Any]:
    t0 = time.perf_counter()
    short = short_fit(m, prior, laws=laws, extras=extras, omega_t_start=omega)
    t1 = time.perf_counter()
    fit = select._refined_if_asked(fit_from_short(short), m)
    return {"omega": omega, "extras": list(extras), "first_chi2": short.chi2,
            "first_s": t1 - t0, "seconds": time.perf_counter() - t0, "bic": fit.bic,
            "excess": fit.excess.tolist(),
            "escaped": bool(select.escaped_transition(fit, select._floor_noise(m)))}


def _round(kind: str, m, prior, fit, starts, laws) -> None:
    _ROUNDS.append({"loop": kind, "bic": fit.bic, "excess": fit.excess.tolist(),
                    "escaped": bool(select.escaped_transition(fit, select._floor_noise(m))),
                    "starts": [_finished(m, prior, laws, extras, omega)
                               for omega, extras in starts]})


_first, _chosen = select._restarted_first, select._restarted_chosen


def _restarted_first(m, prior, fit, progress):
    starts, _ = select._restarts(fit)
    if starts:
        _round("first", m, prior, fit, starts, select.BROWN_MCPHEE)
    return _first(m, prior, fit, progress)


def _restarted_chosen(m, prior, fit, fits, progress):
    if select.STRIBECK in fit.problem.laws and select.chosen_restart_asked(
            fit, select._floor_noise(m)):
        _round("chosen", m, prior, fit, [(o, fit.extras) for o in select.RESTART_OMEGA_T],
               fit.problem.laws)
    return _chosen(m, prior, fit, fits, progress)


select._restarted_first, select._restarted_chosen = _restarted_first, _restarted_chosen


def _capture(spec: tuple[str, int, int, int]):
    """The measurement of ('coverage', seed, k, 0) or (kind, seed, session, k)."""
    source, seed, a, b = spec
    if source == "coverage":
        rng = np.random.default_rng(seed)
        for k in range(a + 1):
            cap = random_realistic_capture(rng, RigParams(), TABLE_III_TRUTH, 35.0,
                                           condition=CONDITIONS[k % len(CONDITIONS)])
        return cap.measurement
    kw = {"drift_per_hour": {"mu_v1": 0.1 / 8.0}} if source == "drift" else {}
    session = simulated_session(np.random.default_rng(seed * 100_003 + a), RigParams(),
                                TABLE_III_TRUTH, 10, 8.0, duration=35.0, **kw)
    return session.captures[b].measurement


def _job(spec):
    m = _capture(spec)
    _ROUNDS.clear()
    t = time.perf_counter()
    identify(m)
    return {"capture": list(spec), "seconds": time.perf_counter() - t, "rounds": list(_ROUNDS)}


def _replay(rnd: dict[str, Any], order: tuple[float, ...]) -> tuple[float, float]:
    """(seconds of the starts finished, BIC kept) of the round with RESTART_OMEGA_T in
    `order` (a drag-first start stays first), stopped as the estimator stops it."""
    limit = select.RESTART_EXCESS if rnd["loop"] == "first" else select.CHOSEN_RESTART_EXCESS
    drag_first = [s for s in rnd["starts"] if rnd["loop"] == "first" and s["extras"]]
    by_omega = {s["omega"]: s for s in rnd["starts"] if s not in drag_first}
    bic, excess, escaped = rnd["bic"], max(rnd["excess"]), rnd["escaped"]
    seconds = 0.0
    for s in drag_first + [by_omega[o] for o in order]:
        if excess <= limit and not (rnd["loop"] == "chosen" and escaped):
            break
        seconds += s["seconds"]
        if s["bic"] < bic:
            bic, excess, escaped = s["bic"], max(s["excess"]), s["escaped"]
    return seconds, bic


def _report(records: list[dict[str, Any]]) -> None:
    rounds = [(r["capture"], rnd) for r in records for rnd in r["rounds"]]
    total = sum(r["seconds"] for r in records)
    with_rounds = sum(r["seconds"] for r in records if r["rounds"])
    print(f"\n{len(records)} captures, {len(rounds)} restart rounds "
          f"({sum(rnd['loop'] == 'first' for _, rnd in rounds)} of the first fit); "
          f"the {sum(bool(r['rounds']) for r in records)} captures with rounds took "
          f"{100 * with_rounds / total:.0f} % of {total:.0f} s (every start finished)")
    wins: dict[str, int] = {}
    won, lost = [], []
    for capture, rnd in rounds:
        best = min(s["first_chi2"] for s in rnd["starts"])
        winner = min(rnd["starts"], key=lambda s: s["bic"])
        kept = winner["bic"] < rnd["bic"] - TIE_BIC
        print(f"{capture} {rnd['loop']}: before {np.round(rnd['excess'], 2).tolist()} of the "
              "noise")
        for s in rnd["starts"]:
            ratio = s["first_chi2"] / best
            mark = " <- best" if kept and s is winner else ""
            (won if kept and s is winner else lost).append(ratio)
            print(f"   omega_t {s['omega']:<6g} {'+'.join(s['extras']) or '-':<26} first stage "
                  f"{ratio:9.1f} x best, {s['first_s']:5.2f} s; finished "
                  f"{s['seconds']:5.2f} s, {np.round(s['excess'], 2).tolist()} of the noise, "
                  f"BIC {s['bic'] - rnd['bic']:+.0f}{mark}")
        key = f"{winner['omega']:g}{'+drag' if winner['extras'] and rnd['loop'] == 'first' else ''}"
        wins[key if kept else "none"] = wins.get(key if kept else "none", 0) + 1
    if not rounds:
        return
    print(f"rounds won by start (by more than {TIE_BIC:g} in BIC; none: no start beat the "
          "fit before the round):", ", ".join(f"{k} {v}" for k, v in sorted(wins.items())))
    print(f"first stage over the round's best: winners up to {max(won, default=np.nan):.1f} x; "
          f"losers {np.median(lost):.1f} x median, up to {max(lost):.0f} x")
    base = tuple(select.RESTART_OMEGA_T)
    ref = [_replay(rnd, base) for _, rnd in rounds]
    print(f"replayed orders of RESTART_OMEGA_T (the estimator's {base}: "
          f"{sum(s for s, _ in ref):.1f} s of starts finished):")
    rows = []
    for order in itertools.permutations(base):
        got = [_replay(rnd, order) for _, rnd in rounds]
        worse = sum(b > r_b + TIE_BIC for (_, b), (_, r_b) in zip(got, ref))
        better = sum(b < r_b - TIE_BIC for (_, b), (_, r_b) in zip(got, ref))
        rows.append((sum(s for s, _ in got), order, worse, better))
    for seconds, order, worse, better in sorted(rows):
        print(f"  {str(order):<28} {seconds:7.1f} s  rounds worse {worse}, better {better}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--coverage", type=int, default=60, help="bench_coverage's draws")
    ap.add_argument("--sessions", type=int, default=0, help="of each kind (steady, drift)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--records", help="one JSON line per capture")
    args = ap.parse_args()
    specs = [("coverage", args.seed, k, 0) for k in range(args.coverage)]
    specs += [(kind, args.seed, s, k) for s in range(args.sessions)
              for kind in ("steady", "drift") for k in range(10)]
    records = []
    out = open(args.records, "w") if args.records else None  # noqa: SIM115
    t0 = time.perf_counter()
    with mp.get_context("fork").Pool(args.workers) as pool:
        for n, rec in enumerate(pool.imap_unordered(_job, specs), 1):
            records.append(rec)
            if out:
                out.write(json.dumps(rec) + "\n")
                out.flush()
            print(f"  {n}/{len(specs)} {rec['capture']}: {rec['seconds']:.1f} s, "
                  f"{len(rec['rounds'])} round(s)  [{time.perf_counter() - t0:.0f} s]",
                  flush=True)
    if out:
        out.close()
    _report(records)


if __name__ == "__main__":
    main()
