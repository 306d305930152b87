"""Monte Carlo: do the recommended estimator's 95 % intervals cover the truth ~95 % of the time?

Simulates captures with random friction truths (x0.5-2 of Table III, mu_s = mu_d x
1.05-1.6), tilts (5-20 deg) and release angles (60-150 deg pendulum, -20..20 deg arm),
identifies each, and counts how
often each reported-identifiable parameter's interval contains its truth.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from identify import TABLE_III_TRUTH, FrictionParams, RigParams, identify, simulated_measurement


def random_case(rng: np.random.Generator, duration: float):
    truth = TABLE_III_TRUTH.as_array() * np.exp(rng.uniform(np.log(0.5), np.log(2.0), 10))
    truth[[4, 9]] = TABLE_III_TRUTH.as_array()[[4, 9]]
    # static above dynamic friction: the Stribeck effect the model describes
    truth[[1, 6]] = truth[[0, 5]] * rng.uniform(1.05, 1.6, 2)
    fr = FrictionParams.from_array(truth)
    rig = RigParams(tilt_deg=float(rng.uniform(5, 20)))
    pose = (float(rng.uniform(-20, 20)), float(rng.uniform(60, 150)) * rng.choice([-1, 1]))
    m = simulated_measurement(rig, fr, pose, duration, rest_s=0.5)
    return m, fr, rig, pose


def coverage(n: int, seed: int, duration: float, method: str = "grey-box") -> dict:
    rng = np.random.default_rng(seed)
    hits = total = 0
    per_param: dict[str, list[int]] = {}
    worst_fit = 100.0
    times = []
    for _ in range(n):
        m, fr, rig, pose = random_case(rng, duration)
        res = identify(m, method=method)
        times.append(res.compute_seconds)
        worst_fit = min(worst_fit, *res.fit_percent.values())
        for name, p in res.parameters.items():
            if p.identifiable and p.ci95 is not None:
                ok = int(p.ci95[0] <= getattr(fr, name) <= p.ci95[1])
                hits += ok
                total += 1
                per_param.setdefault(name, []).append(ok)
    return {"hits": hits, "total": total, "per_param": per_param, "worst_fit": worst_fit,
            "seconds": times}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--captures", type=int, default=20)
    ap.add_argument("--duration", type=float, default=35.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    t0 = time.perf_counter()
    out = coverage(args.captures, args.seed, args.duration)
    print(f"{args.captures} captures of {args.duration:g} s in {time.perf_counter() - t0:.1f} s; "
          f"identification {np.median(out['seconds']):.2f} s median, {max(out['seconds']):.2f} max")
    print(f"coverage of 95 % intervals: {out['hits']}/{out['total']} = "
          f"{out['hits'] / max(1, out['total']):.3f}; worst fit {out['worst_fit']:.4f} %")
    for name, oks in out["per_param"].items():
        print(f"  {name:9s} {sum(oks)}/{len(oks)}")


if __name__ == "__main__":
    main()
