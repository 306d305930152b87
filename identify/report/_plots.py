"""Figures in the manner of seed 000 Figures 4-7, and what a researcher would add, as PNG files.

Fig. 4 observer error norm and gain, Fig. 5 parameter trajectories (UAS), Fig. 6
measured against identified responses, Fig. 7 amplitude spectra (every curve over the
same span: from the release, where the simulations start), Fig. 8 residuals per joint;
a method that gives no Brown-McPhee parameters to simulate is named in each figure with
the reason. `summary_figure` is one result on a page: measured against simulated, the
residuals, and the parameters with their 95 % intervals.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..methods import UASRun, simulate_capture
from ..model import JOINT_NAMES, PARAM_NAMES
from ..results import IdentificationResult
from ..signal import Measurement


def _pyplot() -> Any:
    """matplotlib.pyplot, imported here on first use (importing identify never loads it)."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a lab server
    import matplotlib.pyplot as plt

    return plt


def _simulated(m: Measurement, r: IdentificationResult, ref: IdentificationResult
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """The method's friction simulated from the reference fit's release state."""
    try:
        params = r.friction_params().as_array()
    except ValueError:
        return None  # the method does not give Brown-McPhee parameters
    x0 = np.array(ref.diagnostics["initial_state"])
    rows, sim = simulate_capture(m, params, x0, float(ref.diagnostics["release_time_s"]))
    return rows, sim


def write_figures(m: Measurement, results: list[IdentificationResult], outdir: Path,
                  uas_run: UASRun | None = None,
                  progress: Callable[[float, str], None] | None = None) -> list[Path]:
    """Write the figures; `results` must include one with initial_state (grey-box)."""
    say = progress or (lambda fraction, message: None)
    plt = _pyplot()
    outdir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    ref = next(r for r in results if "initial_state" in r.diagnostics)
    if uas_run is not None:
        say(0.0, "figures 4-5: the UAS observer")
        written += _uas_figures(plt, uas_run, outdir)
    say(0.3, "simulating each method's response")
    sims = {r.method: _simulated(m, r, ref) for r in results}
    say(0.6, "figures 6-8: responses, spectra, residuals")
    written.append(_responses_figure(plt, m, sims, outdir))
    written.append(_spectra_figure(plt, m, sims, outdir))
    written.append(_residuals_figure(plt, m, sims, outdir))
    say(1.0, "figures written")
    return written


def _absent(fig: Any, sims: Simulations) -> None:
    """Name the methods with no curve, and why, at the foot of a figure."""
    missing = [method for method, sim in sims.items() if sim is None]
    if missing:
        fig.text(0.01, 0.005, "not drawn: " + ", ".join(missing) + " (no Brown-McPhee "
                 "parameters to simulate: a piecewise or observer model)", fontsize=7,
                 color="0.35")


def _uas_figures(plt: Any, run: UASRun, outdir: Path) -> list[Path]:
    """Fig. 4 (observer error norm, gain) and Fig. 5 (parameter trajectories and z*)."""
    fig, ax = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    ax[0].semilogy(run.t, run.e_norm)
    ax[0].axhline(run.settings.error_threshold, color="k", ls="--", lw=0.8,
                  label="threshold")
    ax[0].set_ylabel("||e|| (rad/s)")
    ax[0].legend()
    ax[1].plot(run.t, run.nussbaum, label="N(k)")
    ax[1].plot(run.t, run.k, label="k")
    ax[1].set_ylabel("gain")
    ax[1].set_xlabel("time (s)")
    ax[1].legend()
    fig.suptitle("UAS observer error and gain (seed 000 Fig. 4)")
    written = [_save(fig, outdir / "fig4_uas_error_gain.png", plt)]

    fig, axes = plt.subplots(2, 5, figsize=(14, 5), sharex=True)
    for k, (a, name) in enumerate(zip(axes.ravel(), PARAM_NAMES)):
        a.plot(run.t, run.z[:, k])
        a.axhline(run.z_star[k], color="r", ls="--", lw=0.8, label="z* (bounds)")
        a.set_title(name, fontsize=9)
        a.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("UAS parameter trajectories and the bound-determined point z* (Fig. 5)")
    written.append(_save(fig, outdir / "fig5_uas_parameters.png", plt))
    return written


Simulations = dict[str, tuple[np.ndarray, np.ndarray] | None]


def _responses_figure(plt: Any, m: Measurement, sims: Simulations, outdir: Path) -> Path:
    """Fig. 6: measured angles and every method's simulated response, in degrees."""
    t = m.t
    deg = 180.0 / np.pi
    fig, ax = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for j, name in enumerate(JOINT_NAMES):
        ax[j].plot(t, m.angles[:, j] * deg, "k", lw=1.2, label="measured")
        for method, sim in sims.items():
            if sim is not None:
                rows, s = sim
                ax[j].plot(t[rows], s[:, j] * deg, lw=0.8, label=method)
        ax[j].set_ylabel(f"{name} (deg)")
    return _finish(plt, fig, ax, "time (s)", "Measured and identified responses (seed 000 "
                   "Fig. 6)", sims, outdir / "fig6_responses.png")


def _span(sims: Simulations) -> np.ndarray | None:
    """The rows every simulation covers (from the release): the span all curves share."""
    spans = [sim[0] for sim in sims.values() if sim is not None]
    if not spans:
        return None
    shared = spans[0]
    for rows in spans[1:]:
        shared = np.intersect1d(shared, rows)
    return shared


def _spectra_figure(plt: Any, m: Measurement, sims: Simulations, outdir: Path) -> Path:
    """Fig. 7: single-sided amplitude spectra 2 |FFT(x - mean x)| / n of the measured and
    every simulated response, all over the same span (the hold before the release would
    add to the measured spectrum what no model simulates)."""
    span = _span(sims)
    rows = span if span is not None else np.arange(m.angles.shape[0])
    fig, ax = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for j, name in enumerate(JOINT_NAMES):
        curves = [("measured", m.angles[rows, j], "k")]
        for method, sim in sims.items():
            if sim is not None:
                at = np.searchsorted(sim[0], rows)
                curves.append((method, sim[1][at, j], "-"))
        peak = 0.0
        for label, series, style in curves:
            x = series - series.mean()
            f = np.fft.rfftfreq(x.size, 1.0 / m.rate_hz)
            a = np.abs(np.fft.rfft(x)) * 2 / x.size
            peak = max(peak, float(a.max()))
            ax[j].semilogy(f, a, style, lw=0.8, label=label)
        ax[j].set_xlim(0, 5)
        ax[j].set_ylim(peak * 1e-5, peak * 2)  # five decades: what a fit can be judged on
        ax[j].set_ylabel(f"{name} amplitude (rad)")
    t0 = float(m.t[rows[0]])
    return _finish(plt, fig, ax, "frequency (Hz)", f"Amplitude spectra from the release at "
                   f"{t0:.2f} s (seed 000 Fig. 7)", sims, outdir / "fig7_spectra.png")


#: a method whose residuals reach beyond this many times the median method's is drawn
#: off scale: seed 000's UAS residual (+-100 deg) flattened every other method's to a line
OFF_SCALE_FACTOR = 10.0


def residual_limit(residuals: dict[str, np.ndarray]) -> tuple[float, list[str]]:
    """The half-height of a residual axis and the methods drawn beyond it.

    Each method's reach is the 99.5th percentile of its |residual|; the axis holds every
    method within OFF_SCALE_FACTOR of the median reach (with a margin), so one diverged
    method cannot hide how the others differ.
    """
    reach = {k: float(np.percentile(np.abs(r[np.isfinite(r)]), 99.5))
             for k, r in residuals.items() if np.isfinite(r).any()}
    if not reach:
        return 1.0, []
    typical = float(np.median(list(reach.values())))
    kept = [v for v in reach.values() if v <= OFF_SCALE_FACTOR * typical] or [typical]
    limit = 1.2 * max(kept) or 1.0
    return limit, [k for k, v in reach.items() if v > limit]


def _residuals_figure(plt: Any, m: Measurement, sims: Simulations, outdir: Path) -> Path:
    """Fig. 8: measured minus simulated, per joint and method, in degrees; a method far
    beyond the others is drawn off scale and said so in the legend."""
    deg = 180.0 / np.pi
    fig, ax = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for j, name in enumerate(JOINT_NAMES):
        residuals = {method: (m.angles[sim[0], j] - sim[1][:, j]) * deg
                     for method, sim in sims.items() if sim is not None}
        limit, off = residual_limit(residuals)
        for method, sim in sims.items():
            if sim is not None:
                r = residuals[method]
                label = (f"{method} (off scale: 99.5 % within "
                         f"{np.percentile(np.abs(r), 99.5):.3g} deg)" if method in off
                         else method)
                ax[j].plot(m.t[sim[0]], r, lw=0.6, label=label)
        ax[j].set_ylim(-limit, limit)
        ax[j].axhline(0.0, color="k", lw=0.5)
        ax[j].set_ylabel(f"{name} residual (deg)")
    return _finish(plt, fig, ax, "time (s)", "Residuals: measured minus each method's "
                   "simulated response", sims, outdir / "fig8_residuals.png")


def summary_figure(m: Measurement, result: IdentificationResult, ref: IdentificationResult,
                   path: Path) -> Path:
    """One result on a page: measured and simulated angles, the residuals, and every
    identified parameter as its value against its 95 % interval (relative to the value)."""
    plt = _pyplot()
    sim = _simulated(m, result, ref)
    if sim is None:
        raise ValueError(f"{result.method}: no Brown-McPhee parameters to simulate")
    rows, s = sim
    deg = 180.0 / np.pi
    fig = plt.figure(figsize=(11, 8))
    grid = fig.add_gridspec(3, 2, width_ratios=(2.2, 1))
    for j, name in enumerate(JOINT_NAMES):
        a = fig.add_subplot(grid[j, 0])
        a.plot(m.t, m.angles[:, j] * deg, "k", lw=1.0, label="measured")
        a.plot(m.t[rows], s[:, j] * deg, "C1", lw=0.8, label=f"{result.method}")
        fit = result.fit_percent.get(name)
        a.set_ylabel(f"{name} (deg)")
        a.set_title(f"{name}: fit {fit:.4f} %" if fit is not None else name, fontsize=9)
        a.legend(fontsize=7, loc="upper right")
    r = fig.add_subplot(grid[2, 0])
    for j, name in enumerate(JOINT_NAMES):
        r.plot(m.t[rows], (m.angles[rows, j] - s[:, j]) * deg, lw=0.3, alpha=0.7, label=name)
    r.set_ylabel("residual (deg)")
    r.set_xlabel("time (s)")
    r.legend(fontsize=7)
    p = fig.add_subplot(grid[:, 1])
    # the friction and the rig's identified quantities, each against its own value
    shown = [(k, e) for k, e in [*result.parameters.items(), *result.rig.items()]
             if e.value and e.ci95]
    for y, (_, e) in enumerate(shown):
        value = float(e.value or 1.0)
        lo, hi = e.ci95 or (value, value)
        p.errorbar([1.0], [y], xerr=[[abs(1 - lo / value)], [abs(hi / value - 1)]], fmt="o",
                   color="C0" if e.identifiable else "0.6", capsize=3)
    p.set_yticks(range(len(shown)), [f"{k} = {e.value:.4g}" for k, e in shown], fontsize=7)
    p.set_xlabel("value and 95 % interval, relative")
    p.invert_yaxis()
    p.set_title("95 % intervals (grey: not identified)", fontsize=9)
    fig.suptitle(f"{result.method} on capture {result.capture_id or '?'}: "
                 f"{result.capture_seconds:.1f} s at {result.sample_rate_hz:g} Hz, computed in "
                 f"{result.compute_seconds:.2f} s")
    path.parent.mkdir(parents=True, exist_ok=True)
    return _save(fig, path, plt)


def _finish(plt: Any, fig: Any, ax: Any, xlabel: str, title: str, sims: Simulations,
            path: Path) -> Path:
    """A per-joint figure's legend, axis label, title and note of the methods not drawn."""
    ax[0].legend(fontsize=8, ncol=3)
    ax[1].set_xlabel(xlabel)
    fig.suptitle(title)
    _absent(fig, sims)
    return _save(fig, path, plt)


def _save(fig: Any, path: Path, plt: Any) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
