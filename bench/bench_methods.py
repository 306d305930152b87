"""Every identification method on the 35 s public case: the seed's Table V, measured here.

Prints compute seconds (best of --repeat after a warm-up run that compiles), normalised
computation time (seed 000 eq. 54), goodness of fit per joint (eq. 53), and the ratio to
the seed's Table V figures for its 35 s simulation (UAS 3.43 s; optimisation 4504.6 s).
"""

from __future__ import annotations

import argparse

from identify import METHODS, TABLE_III_TRUTH, Measurement, RigParams, simulated_measurement
from identify.report import compare_methods, parameter_table

SEED_UAS_S, SEED_OPT_S = 3.43, 4504.6


def public_case() -> Measurement:
    return simulated_measurement(RigParams(tilt_deg=10.0), TABLE_III_TRUTH, (0.0, 120.0), 35.0,
                                 rest_s=0.5, capture_id="public-case")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--methods", default=",".join(METHODS))
    args = ap.parse_args()
    m = public_case()
    names = args.methods.split(",")
    compare_methods(m, names)  # compile and warm caches
    runs = [compare_methods(m, names) for _ in range(args.repeat)]
    print(f"{'method':<14} {'best s':>8} {'runs s':>20} {'eq. 54':>10} {'fit arm %':>10} "
          f"{'fit pend %':>10} {'UAS/this':>9} {'optim/this':>11}")
    best_results = []
    for i, name in enumerate(names):
        rs = [run[i] for run in runs]
        best = min(rs, key=lambda r: r.compute_seconds)
        best_results.append(best)
        fa, fp = best.fit_percent.get("arm"), best.fit_percent.get("pendulum")
        print(f"{name:<14} {best.compute_seconds:>8.3f} "
              f"{','.join(f'{r.compute_seconds:.2f}' for r in rs):>20} "
              f"{best.normalized_compute_time:>10.3g} "
              f"{'n/a' if fa is None else f'{fa:.4f}':>10} "
              f"{'n/a' if fp is None else f'{fp:.4f}':>10} "
              f"{SEED_UAS_S / best.compute_seconds:>8.1f}x "
              f"{SEED_OPT_S / best.compute_seconds:>10.0f}x")
    print(f"{'seed UAS':<14} {SEED_UAS_S:>8.2f} {'':>20} {SEED_UAS_S / 35000:>10.3g} "
          f"{98.97:>10.2f} {99.53:>10.2f}")
    print(f"{'seed optim.':<14} {SEED_OPT_S:>8.1f} {'':>20} {SEED_OPT_S / 35000:>10.3g} "
          f"{12.77:>10.2f} {2.80:>10.2f}")
    print()
    print(parameter_table(best_results))


if __name__ == "__main__":
    main()
