"""A chain rig's span (held out, or the whole record in a comparison): measured against
each parameter set's simulation, segment by segment as validate_chain scores them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..methods import held_out_segments, record_runs
from ..model import ChainParams, ChainRig
from ..results import fit_percent
from ..signal import Record
from ._plots import _pyplot, residual_limit


def plot_held_out(record: Record, rig: ChainRig, sets: dict[str, ChainParams],
                  span: tuple[float, float], segment_s: float, path: Path,
                  title: str | None = None) -> Path:
    """One panel per joint over `span`: the record, and each set simulated segment by
    segment as validate_chain scores them (fits in the legend); below, their errors, on
    an axis a diverged set does not flatten (residual_limit)."""
    plt = _pyplot()
    outside = [(-np.inf, span[0] - 1e-9), (span[1] + 1e-9, np.inf)]
    pieces = record_runs(record, outside, 1000.0)
    fig, axes = plt.subplots(2 * rig.links, 1, figsize=(9, 3.2 * rig.links), sharex=True,
                             squeeze=False)
    for j, name in enumerate(rig.joint_names):
        ax, err = axes[2 * j, 0], axes[2 * j + 1, 0]
        for t, q in pieces:
            ax.plot(t, q[:, j], color="black", lw=1.6, label="measured" if t is pieces[0][0]
                    else None)
        segments = {label: held_out_segments(record, rig, params, span, segment_s)
                    for label, params in sets.items()}
        limit, off = residual_limit({label: np.concatenate([1e3 * (sim[:, j] - q[:, j])
                                                           for _, q, sim in segs])
                                     for label, segs in segments.items() if segs})
        for m, (label, segs) in enumerate(segments.items()):
            mean = np.mean([fit_percent(sim, q)[j] for _, q, sim in segs])
            for k, (t, q, sim) in enumerate(segs):
                ax.plot(t, sim[:, j], lw=0.9, ls="--", color=f"C{m}",
                        label=f"{label} (fit {mean:.2f} %)" if k == 0 else None)
                err.plot(t, 1e3 * (sim[:, j] - q[:, j]), lw=0.8, color=f"C{m}",
                         label=(label + (" (off scale)" if label in off else ""))
                         if k == 0 else None)
        err.set_ylim(-limit, limit)
        ax.set_ylabel(f"{name}, rad")
        ax.legend(loc="upper right", fontsize=8)
        err.set_ylabel("error, mrad")
        err.axhline(0.0, color="grey", lw=0.5)
        err.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time, s")
    fig.suptitle(title or f"{rig.kind}: held-out {span[0]:g}-{span[1]:g} s, segments of "
                          f"{segment_s:g} s from their own first 20 ms")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
