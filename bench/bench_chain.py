"""Single and n-link rigs: how fast and how right the chain pipeline is, and how it does on
the real multi-arm records against their builders' published parameters.

Simulated cases (seed 002's laboratory pendulum with Coulomb and Stribeck friction per
joint, released from 115 deg by a trembling hand with a push; 40,000 counts/rev,
+-1 count jitter, 0.3 count interpolation error, 0.2 % of frames lost; 1 kHz): the
identification time (the goal: an nlink:3 capture of 40 s in at most 10 s on this
2-core machine), seed 002's filtered regression's time on the same record as a baseline
measured in this run, and the worst error of the standard parameters and of the joints'
Coulomb and viscous terms. Each case names the Brown-McPhee law; nlink3auto lets the
pipeline choose among its laws (four or five fits instead of three).

Real records (tests/data/multiarm): fitted on the builders' identification span, scored
on their validation chunks with hilrig's parameters and the published ones, the same
rule for both.

    python bench/bench_chain.py [--cases single0,single30,nlink2,nlink3,nlink3auto,real]
                                [--figure docs/real-single-held-out.png]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from hilrig.identify import (
    ChainParams,
    ChainRig,
    ParameterEstimate,
    Record,
    identify_chain,
    result_params,
    validate_chain,
)
from hilrig.identify.model import Realism, inertial_names, inertial_normaliser
from hilrig.identify.seeds import identify_nlink, lab_chain
from hilrig.identify.signal import chain_record

DATA = Path(__file__).parents[1] / "tests" / "data" / "multiarm"
REALISM = Realism(seed=7, hand_tremor_rad=0.002, push_rad_s=(0.05, -0.1), jitter_counts=1,
                  interpolation_counts=0.3, lost_frames=0.002)
SIMULATED = {"single0": ("single", 0.0, 30.0, "brown-mcphee"),
             "single30": ("single", 30.0, 30.0, "brown-mcphee"),
             "nlink2": ("nlink:2", 0.0, 30.0, "brown-mcphee"),
             "nlink3": ("nlink:3", 0.0, 40.0, "brown-mcphee"),
             "nlink3auto": ("nlink:3", 0.0, 40.0, "auto")}
PUBLISHED = {
    "single": ChainParams.physical([0.14758], [0.14775], [], [1.0912e-4], [2.2394e-4]),
    "double": ChainParams.physical([0.093844, 0.137596], [0.108565, 0.116779], [0.172719],
                                   [4.3753e-4, 1.26883e-3], [2.3714e-4, 1.0e-5]),
}


def simulated(case: str) -> None:
    kind, tilt, duration, law = SIMULATED[case]
    rig = ChainRig(kind=kind, tilt_deg=tilt, friction=law)
    true = lab_chain(rig.links)
    rec = chain_record(rig, true, [np.radians(115.0)] * rig.links + [0.0] * rig.links,
                       duration, REALISM, rest_s=1.0)
    t0 = time.perf_counter()
    q = rec.angles[int(1.2 * rec.rate_hz):]
    identify_nlink([q], h=1.0 / rec.rate_hz, g=rig.g_plane, filtered=True)
    t_reg = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = identify_chain(rec, rig)
    t_fit = time.perf_counter() - t0
    est, tn = result_params(res), true.normalised()
    c = inertial_normaliser(rig.links)
    std = np.delete(np.abs(est.inertial / tn.inertial - 1), c).max() * 100
    fr = np.abs(est.friction[:, [0, 3]] / tn.friction[:, [0, 3]] - 1).max() * 100
    stribeck = np.abs(est.friction[:, [1, 2]] / tn.friction[:, [1, 2]] - 1).max() * 100
    print(f"{case:10} {duration:4.0f} s  identify {t_fit:6.2f} s  (regression {t_reg:5.2f} s, "
          f"x{t_fit / t_reg:5.0f})  fit {min(res.fit_percent.values()):.4f} %  worst error: "
          f"standard {std:.2f} %, Fc and b {fr:.2f} %, Fs and vt {stribeck:.1f} %; law "
          f"{res.diagnostics['friction_law']}")


def real(figure: Path | None) -> None:
    for name, kind, fit_to, seg in (("single", "single", 36.668, 9.167),
                                    ("double", "nlink:2", 69.342, 2.667)):
        d = np.loadtxt(DATA / f"{name}_pendulum_1khz.csv", delimiter=",", skiprows=1)
        rec = Record.from_times(d[:, 0], d[:, 1:])
        rig = ChainRig(kind=kind)
        span = (fit_to, float(d[-1, 0]))
        t0 = time.perf_counter()
        res = identify_chain(rec, rig, exclude=[span],
                             segment_s=seg if kind == "single" else None)
        took = time.perf_counter() - t0
        ours = validate_chain(rec, rig, result_params(res), span, seg)
        theirs = validate_chain(rec, rig, PUBLISHED[name], span, seg)
        print(f"real {name}: identified in {took:.1f} s, law {res.diagnostics['friction_law']}")
        for a, b in zip(ours, theirs, strict=True):
            print(f"  {a['span'][0]:7.3f}-{a['span'][1]:7.3f} s  hilrig "
                  + " / ".join(f"{v:.3f}" for v in a["fit_percent"].values()) + "  published "
                  + " / ".join(f"{v:.3f}" for v in b["fit_percent"].values()))
        norm = inertial_names(rig.links)[inertial_normaliser(rig.links)]
        pub = PUBLISHED[name].normalised()
        for i, iname in enumerate(inertial_names(rig.links)):
            if iname != norm:
                est = res.parameters[f"{iname}/{norm}"]
                print(f"  {iname}/{norm}: {est.value:.5g} {est.ci95}  published "
                      f"{pub.inertial[i]:.5g}")
        for j in range(rig.links):
            print(f"  b{j + 1}/{norm} published {pub.friction[j, 3]:.4g}; hilrig "
                  + ", ".join(_shown(k, p) for k, p in res.parameters.items()
                              if k.endswith(f"{j + 1}/{norm}")
                              and not k.startswith(("kappa", "nu", "mu"))))
        if figure is not None and name == "single":
            from hilrig.identify.report import plot_held_out

            path = plot_held_out(rec, rig, {"hilrig": result_params(res),
                                            "published": PUBLISHED[name]}, span, seg, figure)
            print(f"  figure: {path}")


def _shown(name: str, p: ParameterEstimate) -> str:
    """name=value, or name~value (n/i) for one reported not identified (its assumed or
    estimated value), or name=- for a term the law leaves out with nothing assumed."""
    if p.value is not None:
        return f"{name}={p.value:.6g}"
    return f"{name}~{p.assumed:.6g} (n/i)" if p.assumed is not None else f"{name}=-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="single0,single30,nlink2,nlink3,nlink3auto,real")
    ap.add_argument("--figure", type=Path)
    args = ap.parse_args()
    cases = args.cases.split(",")
    identify_chain(chain_record(ChainRig(kind="single"), lab_chain(1), [2.0, 0.0], 2.0),
                   ChainRig(kind="single", friction="viscous"))  # compile first, not timed
    for case in cases:
        if case == "real":
            real(args.figure)
        else:
            simulated(case)


if __name__ == "__main__":
    main()
