"""A chain rig's identification as the one result shape (identify.results).

parameters: the standard parameters (seed 002: ratios to the normaliser, since a free swing
fixes no scale) and each joint's Brown-McPhee terms Fc, Fs, v_t and b, every one with its
95 % interval. Terms outside the chosen friction law are reported as not identified, with
the value the simulation uses. rig: theta~ in SI units, only when the user gave one of its
quantities (a static moment weighed, an inertia) with its uncertainty.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._progress import Progress
from ....model import (
    CHAIN_FRICTION_TERMS,
    ChainParams,
    ChainRig,
    blas_on_one_thread,
    ensure_compiled,
    inertial_names,
    parse_rig_kind,
)
from ....results import IdentificationResult, ParameterEstimate, normalized_compute_time
from ....signal import Record
from ..._names import ESTIMATOR
from .._stages import at_bound as stopped_at_bound
from .._stages import excess_warning
from .._verdict import STRIBECK_NOTE, Z95, judged
from ._data import check_record
from ._fit import ChainFit, fit_chain, segment_fits
from ._problem import LAW_TERMS, VT_COULOMB

MEANING = {
    "mu": "coupling inertia of links {i} and {j} (l_{i} nu_{j})",
    "kappa": "inertia of link {i} about its joint, with the links above it as point masses",
    "nu": "static moment of link {i} and the links above it (sets the gravity torque)",
    "Fc": "Coulomb torque of joint {i}",
    "Fs": "static (breakaway) torque of joint {i}",
    "vt": "Stribeck velocity of joint {i}, rad/s",
    "b": "viscous friction of joint {i}",
    "cd": "quadratic (air) drag of joint {i}: torque c_d |w| w",
}


@dataclass(frozen=True)
class Scale:
    """One quantity of theta~ the lab measured: its name (nu1, kappa2, mu12...), value in SI
    (kg m for nu, kg m^2 for kappa and mu) and relative standard uncertainty."""

    name: str
    value: float
    rel_sd: float = 0.0


def meaning(name: str) -> str:
    """One line saying what a parameter (kappa1/nu1, Fc2/mu12, vt1...) means."""
    head, _, norm = name.partition("/")
    term = head.rstrip("0123456789")
    digits = head[len(term):]
    i, j = (digits[0], digits[1]) if term == "mu" else (digits, "")
    text = MEANING[term].format(i=i, j=j)
    return f"{text}, divided by {norm}" if norm else text


def _estimate(name: str, value: float, sd: float, at_bound: bool = False) -> ParameterEstimate:
    """A chain parameter under the rule every kind shares (estimator._verdict.judged): v_t
    fitted by its logarithm, the rest as they are; the Stribeck pair an estimate at best."""
    term = name.split("/")[0].rstrip("0123456789")
    return judged(value, sd, log=term == "vt", at_bound=at_bound,
                  caveat=STRIBECK_NOTE if term in ("Fs", "vt") else None,
                  nonnegative=term in ("Fc", "Fs", "b", "cd"), note=meaning(name))


def _parameters(fit: ChainFit, tried: list[ChainFit]) -> dict[str, ParameterEstimate]:
    problem = fit.problem
    names = problem.parameter_names()
    k = len(problem.inertial)
    out: dict[str, ParameterEstimate] = {}
    sd = fit.sd
    lo, hi = problem.bounds()
    for c in range(k):
        out[names[c]] = _estimate(names[c], float(fit.z[c]), float(sd[c]))
    norm = inertial_names(problem.data.links)[problem.norm]
    params = fit.params
    for i in range(problem.data.links):
        for col, term in enumerate(CHAIN_FRICTION_TERMS):
            name = f"vt{i + 1}" if term == "vt" else f"{term}{i + 1}/{norm}"
            if term in problem.joint_terms[i]:
                c = names.index(name)
                out[name] = _estimate(name, float(params.friction[i, col]), float(sd[c]),
                                      at_bound=term == "vt"
                                      and stopped_at_bound(float(fit.z[c]), lo[c], hi[c]))
                continue
            # a term outside the chosen law: say so, and what the law tried with it found
            other = [f for f in tried if term in f.problem.joint_terms[i]]
            note = f"not in joint {i + 1}'s chosen friction law ({problem.laws[i]})"
            if other:
                o = other[0]
                c = o.problem.parameter_names().index(name)
                val = float(o.params.friction[i, col])
                a, b = _estimate(name, val, float(o.sd[c])).ci95 or (0, 0)
                note += (f"; the {o.problem.law} fit gives {val:.4g} in [{max(a, 0.0):.4g}, "
                         f"{b:.4g}] and a BIC {o.bic - fit.bic:+.1f} worse")
            assumed = (float(params.friction[i, 0]) if term == "Fs"
                       else VT_COULOMB if term == "vt" else 0.0)
            out[name] = ParameterEstimate(value=None, ci95=None, identifiable=False,
                                          note=note, assumed=assumed)
    return out


def _cramer_rao(fit: ChainFit) -> dict[str, float]:
    """The Cramer-Rao bound of each fitted parameter as a relative standard deviation (one
    sigma; v_t is fitted by its log, so its bound is one already): what the record's noise
    allows any unbiased estimator."""
    if fit.crb is None:
        return {}
    out = {}
    for c, name in enumerate(fit.problem.parameter_names()):
        value = float(fit.z[c])
        if name.startswith("vt"):
            out[name] = float(fit.crb[c])
        elif value != 0.0:
            out[name] = float(fit.crb[c] / abs(value))
    return out


def _physical(fit: ChainFit, pars: dict[str, ParameterEstimate],
              scale: Scale) -> dict[str, ParameterEstimate]:
    """theta~ and the friction torques in SI from one measured quantity of theta~."""
    n = fit.problem.data.links
    names = inertial_names(n)
    if scale.name not in names:
        raise ValueError(f"measured quantity {scale.name!r}: expected one of {', '.join(names)}")
    params = fit.params
    factor = scale.value / float(params.inertial[names.index(scale.name)])
    norm = names[fit.problem.norm]
    out: dict[str, ParameterEstimate] = {}
    units = {"mu": "kg m^2", "kappa": "kg m^2", "nu": "kg m", "Fc": "N m", "Fs": "N m",
             "b": "N m s/rad", "cd": "N m s^2/rad^2"}
    for ratio, est in pars.items():
        head = ratio.split("/")[0]
        term = head.rstrip("0123456789")
        if term == "vt" or est.value is None or est.ci95 is None:
            continue
        value = est.value * factor
        rel = (est.ci95[1] - est.value) / Z95 / abs(est.value) if est.value else 0.0
        half = Z95 * abs(value) * math.hypot(rel, scale.rel_sd)
        out[head] = ParameterEstimate(value=value, ci95=(value - half, value + half),
                                      identifiable=est.identifiable,
                                      note=f"{units[term]}; {meaning(head)}")
    out[norm] = ParameterEstimate(
        value=factor, ci95=(factor * (1 - Z95 * scale.rel_sd), factor * (1 + Z95 * scale.rel_sd)),
        identifiable=True, note=f"{units[norm.rstrip('0123456789')]}; the normaliser, from "
                                f"{scale.name} as measured")
    return out


def _per_joint(x: np.ndarray, names: Sequence[str]) -> dict[str, float]:
    return {n: round(float(v), 3) for n, v in zip(names, x, strict=True)}


@blas_on_one_thread
def identify_chain(record: Record, rig: ChainRig, *, segment_s: float | None = None,
                   exclude: Sequence[tuple[float, float]] = (), scale: Scale | None = None,
                   progress: Progress | None = None) -> IdentificationResult:
    """Identify a single or n-link rig's standard parameters and joint friction."""
    check_record(record, rig)  # before a compile
    # once after an install, out of process and outside the compute time
    compile_s = ensure_compiled("chain", progress and (lambda f, msg: progress(0.05 * f, msg)))
    t0 = time.perf_counter()
    fit, tried, skipped = fit_chain(record, rig, segment_s=segment_s, exclude=exclude,
                           progress=progress)
    whole, per_segment, response = segment_fits(fit, rig.joint_names)
    if not np.all(np.isfinite(whole)):
        # every law started from a rig whose simulation diverges (seed 002's regression on
        # a noisy record can give one): no step moved it, and its intervals would be zero
        raise FloatingPointError(
            "the fitted model's simulation diverges (its start, seed 002's regression on "
            "this record, is an unstable rig)")
    parameters = _parameters(fit, tried)
    d = fit.problem.data
    names = rig.joint_names
    warning = excess_warning(fit.excess, names)
    diagnostics: dict[str, Any] = {
        "friction_law": fit.problem.law,
        "friction_laws": dict(zip(names, fit.problem.laws, strict=True)),
        "models_tried": [{"law": f.problem.law, "bic": round(f.bic, 1),
                          "parameters": f.problem.n_param, "iterations": f.iterations,
                          "residual_over_noise": _per_joint(f.excess, names),
                          "chosen": f is fit} for f in tried] + skipped,
        "segments": per_segment,
        "segment_count": int(d.lengths.size),
        "noise_rad": {n: float(s) for n, s in zip(names, d.sigma, strict=True)},
        "residual_over_noise": _per_joint(fit.excess, names),
        "covariance_inflation": round(fit.tau, 2),
        "held_out_s": [list(span) for span in exclude],
        "warnings": [warning] if warning else [],
        "meaning": {name: meaning(name) for name in fit.problem.parameter_names()},
        "cramer_rao": _cramer_rao(fit),
        # once after an install: the kernels compiled ahead, not in compute_seconds
        "compile_seconds": round(compile_s, 2),
    }
    if rig.friction == "auto":
        diagnostics["friction_laws_offered"] = list(LAW_TERMS)
    physical = _physical(fit, parameters, scale) if scale else {}
    elapsed = time.perf_counter() - t0  # the estimator's whole work, the fit's scoring too
    return IdentificationResult(
        method=ESTIMATOR, rig_kind=rig.kind, capture_id=record.capture_id,
        parameters=parameters, rig=physical,
        fit_percent={name: float(x) for name, x in zip(rig.joint_names, whole, strict=True)},
        compute_seconds=elapsed,
        normalized_compute_time=normalized_compute_time(elapsed, record.duration_s,
                                                        record.rate_hz),
        capture_seconds=record.duration_s, sample_rate_hz=record.rate_hz,
        samples=int(record.angles.shape[0]), lost_samples=record.lost_samples,
        tilt_deg=rig.tilt_deg, diagnostics=diagnostics, response=response)


def result_params(result: IdentificationResult) -> ChainParams:
    """The normalised parameter set a chain result simulates: its estimates, and the
    assumed values where a term is not identified."""
    values = {k.split("/")[0]: (p.value if p.value is not None else p.assumed)
              for k, p in result.parameters.items()}
    links = parse_rig_kind(result.rig_kind)[1]
    norm = next(n for n in inertial_names(links) if n not in values)
    return ChainParams.from_mapping({**{k: v for k, v in values.items() if v is not None},
                                     norm: 1.0}, links)
