"""Figures in the manner of seed 000 Figures 4-7, written as PNG files.

Fig. 4 observer error norm and gain, Fig. 5 parameter trajectories (UAS), Fig. 6
measured against identified responses, Fig. 7 amplitude spectra.
"""

from __future__ import annotations

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
                  uas_run: UASRun | None = None) -> list[Path]:
    """Write the figures; `results` must include one with initial_state (grey-box)."""
    plt = _pyplot()
    outdir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    ref = next(r for r in results if "initial_state" in r.diagnostics)
    if uas_run is not None:
        written += _uas_figures(plt, uas_run, outdir)
    sims = {r.method: _simulated(m, r, ref) for r in results}
    written.append(_responses_figure(plt, m, sims, outdir))
    written.append(_spectra_figure(plt, m, sims, outdir))
    return written


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
    ax[0].legend(fontsize=8, ncol=3)
    ax[1].set_xlabel("time (s)")
    fig.suptitle("Measured and identified responses (seed 000 Fig. 6)")
    return _save(fig, outdir / "fig6_responses.png", plt)


def _spectra_figure(plt: Any, m: Measurement, sims: Simulations, outdir: Path) -> Path:
    """Fig. 7: single-sided amplitude spectra 2 |FFT(x - mean x)| / n, measured and simulated."""
    fig, ax = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    for j, name in enumerate(JOINT_NAMES):
        for label, series, style in [("measured", m.angles[:, j], "k")] + [
                (method, sim[1][:, j], None) for method, sim in sims.items() if sim is not None]:
            x = series - series.mean()
            f = np.fft.rfftfreq(x.size, 1.0 / m.rate_hz)
            a = np.abs(np.fft.rfft(x)) * 2 / x.size
            ax[j].semilogy(f, np.maximum(a, 1e-12), style or "-", lw=0.8, label=label)
        ax[j].set_xlim(0, 5)
        ax[j].set_ylabel(f"{name} amplitude (rad)")
    ax[0].legend(fontsize=8, ncol=3)
    ax[1].set_xlabel("frequency (Hz)")
    fig.suptitle("Amplitude spectra (seed 000 Fig. 7)")
    return _save(fig, outdir / "fig7_spectra.png", plt)


def _save(fig: Any, path: Path, plt: Any) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
