"""Every identification method on the seed's Table V condition, and on the noise-free case.

Table V (seed 000) was measured on a 35 s simulation at 1 kHz with white noise of
sigma = 0.1 rad on both angles; the seed's rows are printed under that condition's, so
they compare like with like. The noise-free 35 s case at 10 kHz follows (--condition).

Every method is timed the same way: compute_seconds covers the estimate, never the
validation simulation that gives its fit (seed 000 eq. 53). Printed: compute seconds
(best of --repeat after a warm-up run that compiles), normalised computation time
(eq. 54), fit per joint, the four main friction parameters' errors against the truth,
and the ratio to the seed's UAS (3.43 s) and optimisation (4504.6 s) times.
"""

from __future__ import annotations

import argparse

from hilrig.identify import METHODS, TABLE_III_TRUTH, Measurement, RigParams, simulated_measurement
from hilrig.identify.model import Realism
from hilrig.identify.report import compare_methods, parameter_table

SEED_UAS_S, SEED_OPT_S = 3.43, 4504.6
MAIN = ("mu_d0", "mu_v0", "mu_d1", "mu_v1")
#: name -> (what it is, sample rate, realism)
CONDITIONS: dict[str, tuple[str, float, Realism | None]] = {
    "tableV": ("seed 000 Table V: 35 s at 1 kHz, sigma 0.1 rad white noise on the angles",
               1_000.0, Realism(seed=1, noise_rad=0.1)),
    "ideal": ("noise-free: 35 s at 10 kHz, encoder quantisation only", 10_000.0, None),
}


def capture(condition: str) -> Measurement:
    _, rate, realism = CONDITIONS[condition]
    return simulated_measurement(RigParams(tilt_deg=10.0), TABLE_III_TRUTH, (0.0, 120.0), 35.0,
                                 rest_s=0.5, rate_hz=rate, realism=realism,
                                 capture_id=f"public-case-{condition}")


def run(condition: str, names: list[str], repeat: int) -> None:
    print(CONDITIONS[condition][0])
    m = capture(condition)
    compare_methods(m, names)  # compile and warm caches
    runs = [compare_methods(m, names) for _ in range(repeat)]
    truth = TABLE_III_TRUTH.model_dump()
    print(f"{'method':<14} {'best s':>8} {'runs s':>20} {'eq. 54':>10} {'fit arm %':>10} "
          f"{'fit pend %':>10} " + " ".join(f"{n + ' %':>9}" for n in MAIN)
          + f" {'UAS/this':>9} {'optim/this':>11}")
    best_results = []
    for i, name in enumerate(names):
        rs = [r[i] for r in runs]
        best = min(rs, key=lambda r: r.compute_seconds)
        best_results.append(best)
        fa, fp = best.fit_percent.get("arm"), best.fit_percent.get("pendulum")
        errs = []
        for n in MAIN:
            p = best.parameters[n]
            v = p.value if p.value is not None else p.assumed
            errs.append("n/a" if v is None else f"{100 * (v / truth[n] - 1):+.1f}")
        print(f"{name:<14} {best.compute_seconds:>8.3f} "
              f"{','.join(f'{r.compute_seconds:.2f}' for r in rs):>20} "
              f"{best.normalized_compute_time:>10.3g} "
              f"{'n/a' if fa is None else f'{fa:.4f}':>10} "
              f"{'n/a' if fp is None else f'{fp:.4f}':>10} "
              + " ".join(f"{e:>9}" for e in errs)
              + f" {SEED_UAS_S / best.compute_seconds:>8.1f}x "
              f"{SEED_OPT_S / best.compute_seconds:>10.0f}x")
    if condition == "tableV":
        print(f"{'seed UAS':<14} {SEED_UAS_S:>8.2f} {'':>20} {SEED_UAS_S / 35000:>10.3g} "
              f"{98.97:>10.2f} {99.53:>10.2f}")
        print(f"{'seed optim.':<14} {SEED_OPT_S:>8.1f} {'':>20} {SEED_OPT_S / 35000:>10.3g} "
              f"{12.77:>10.2f} {2.80:>10.2f}")
    print()
    print(parameter_table(best_results))
    print()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--condition", default="tableV,ideal",
                    help=f"comma-separated, of {', '.join(CONDITIONS)}")
    args = ap.parse_args()
    for condition in args.condition.split(","):
        run(condition, args.methods.split(","), args.repeat)


if __name__ == "__main__":
    main()
