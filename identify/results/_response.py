"""The identified model's response beside the measured one, decimated for a plot.

A method's fit per joint (seed 000 eq. 53) compares the angles it simulated with those
measured; `Response` keeps a light copy of both, so a dashboard or a report can draw
the two over each other without the capture file. Spans simulated from states of their
own (the segments of multiple shooting, a chain fit's segments) are joined with one
`null` row between them: a line plot shows the restart as a gap, not a jump.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RESPONSE_POINTS", "Response", "response_of"]

#: points per joint a response keeps: ~40 ms apart on a 35 s capture, 10-20 per swing of
#: the pendulum, and about 40 kB of JSON
RESPONSE_POINTS = 1000
#: angles rounded to 1e-5 rad, a tenth of the encoder's count (1.6e-4 rad)
_ANGLE_DECIMALS = 5
_TIME_DECIMALS = 4


class Response(BaseModel):
    """Measured against simulated angles (rad) per joint, at the times t_s (s, capture time)."""

    model_config = ConfigDict(extra="forbid")

    joints: list[str]
    t_s: list[float | None] = Field(description="capture time, s; null between spans")
    measured: list[list[float | None]] = Field(description="per joint, rad")
    simulated: list[list[float | None]] = Field(description="per joint, rad; null: a gap")
    unit: str = "rad"


def response_of(pieces: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]],
                joints: Sequence[str], max_points: int = RESPONSE_POINTS) -> Response:
    """A `Response` from spans of (t (n,), measured (n, J), simulated (n, J)).

    Every span is thinned by one common stride, chosen so that all of them together keep
    at most about `max_points` rows; each keeps its first and last row. Non-finite
    values become null.
    """
    total = sum(len(t) for t, _, _ in pieces)
    stride = max(1, int(np.ceil(total / max(1, max_points))))
    t_out: list[float | None] = []
    meas: list[list[float | None]] = [[] for _ in joints]
    sim: list[list[float | None]] = [[] for _ in joints]
    for k, (t, q, s) in enumerate(pieces):
        if len(t) == 0:
            continue
        rows = np.unique(np.r_[np.arange(0, len(t), stride), len(t) - 1])
        if k and t_out:
            t_out.append(None)
            for j in range(len(joints)):
                meas[j].append(None)
                sim[j].append(None)
        t_out += _rounded(np.asarray(t)[rows], _TIME_DECIMALS)
        q2, s2 = np.asarray(q).reshape(len(t), -1), np.asarray(s).reshape(len(t), -1)
        for j in range(len(joints)):
            meas[j] += _rounded(q2[rows, j], _ANGLE_DECIMALS)
            sim[j] += _rounded(s2[rows, j], _ANGLE_DECIMALS)
    return Response(joints=list(joints), t_s=t_out, measured=meas, simulated=sim)


def _rounded(x: np.ndarray, decimals: int) -> list[float | None]:
    return [float(v) if np.isfinite(v) else None for v in np.round(x.astype(float), decimals)]
