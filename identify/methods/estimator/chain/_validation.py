"""Held-out validation of a chain rig: any parameter set scored on a span it was not fitted on.

The span is cut into segments of `segment_s` seconds (a chaotic swing is validated a
segment at a time). Each segment is simulated from the state a cubic fitted to its own
first 20 ms gives (start_state), never from a fitted state,
and scored by seed 000 eq. 53 per joint. The same rule scores every parameter set, so an
identified set and a published one compare like with like.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....model import ChainParams, ChainRig
from ....results import fit_percent
from ....signal import Record
from ._data import MIN_SEGMENT_S, cut, record_runs, refine_substeps, start_state

VALIDATION_RATE_HZ = 1000.0  # held-out spans are scored at up to 1 kHz, as published fits are


def held_out_segments(record: Record, rig: ChainRig, params: ChainParams,
                      span: tuple[float, float], segment_s: float
                      ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(t, measured (k, n), simulated (k, n)) of each segment of `span`."""
    t0, t1 = span
    if not t1 > t0:
        raise ValueError(f"validation span {t0}:{t1} is empty")
    if segment_s <= 0:
        raise ValueError(f"segment length must be positive, got {segment_s}")
    # never the hold before the release: a hand is no free swing
    outside = [(-np.inf, t0 - 1e-9), (t1 + 1e-9, np.inf)]
    p = params.normalised()
    out = []
    try:
        pieces = record_runs(record, outside, VALIDATION_RATE_HZ)
    except ValueError:  # nothing of the record's free motion lies in the span
        pieces = []
    for t, q in pieces:
        for a, b in cut(t, segment_s):
            dt = float(np.median(np.diff(t[a:b])))
            sim = p.simulate(rig.g_plane, start_state(t[a:b], q[a:b])[None, :],
                             np.array([b - a]), dt, refine_substeps(dt))
            out.append((t[a:b], q[a:b], sim))
    if not out:
        raise ValueError(f"validation span {t0}:{t1} holds no segment of {MIN_SEGMENT_S} s "
                         "or more")
    return out


def validate_chain(record: Record, rig: ChainRig, params: ChainParams, span: tuple[float, float],
                   segment_s: float) -> list[dict[str, Any]]:
    """[{"span": [t0, t1], "fit_percent": {joint: %}}] for each segment of `span`."""
    out = []
    for t, q, sim in held_out_segments(record, rig, params, span, segment_s):
        fits = fit_percent(sim, q)
        out.append({"span": [round(float(t[0]), 4), round(float(t[-1]), 4)],
                    "fit_percent": {name: round(float(x), 3) if np.isfinite(x) else None
                                    for name, x in zip(rig.joint_names, fits, strict=True)}})
    return out
