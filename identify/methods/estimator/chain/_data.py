"""From a chain rig's record to what its fit sees: segments, noise, start states, a start.

The stages are the ones every rig kind shares (identify.methods.estimator._stages); here only
what a chain rig adds:

- The fit's rate is 500 Hz; the RK4 simulator steps 2 ms exactly (a swing of 15 rad/s
  moves 0.03 rad a step, where RK4's local error is (omega h)^5 / 120, far below the
  noise).
- Runs are cut into segments of `segment_s` (a chaotic swing is followed one segment at
  a time), each starting from the state a cubic fitted to its first 20 ms gives (the
  same rule held-out validation uses for any parameter set).
- The fit starts from seed 002's regression with a Coulomb column per joint on the
  decimated angles' derivatives, solved by least squares with the normaliser's column
  moved to the right-hand side (eq. 14).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ....model import (
    ChainParams,
    ChainRig,
    chain_regressor,
    inertial_normaliser,
    link_pairs,
    quantisation_rms,
    unpack_inertial,
)
from ....signal import Decimated, Record, require_motion
from .._stages import cubic_state, decimated_runs, noise_sigma
from ._problem import VT_COULOMB, ChainData

FIT_RATE_HZ = 500.0
#: the friction laws without Stribeck's terms are ranked at FIT_RATE_HZ / SCOUT_THIN
SCOUT_THIN = 2
#: the RK4 step that resolves a Stribeck transition (v_t 0.05 rad/s) at a swing's reversal:
#: on a simulated double pendulum joint 1's Fs came out 53 % low at 2 ms, within 3 % at
#: 0.5 ms and the same at 0.125 ms
MAX_STEP_S = 5e-4
#: rad/s: a joint slower than this (ten times that v_t) is near a reversal, where the
#: friction changes within a sample step and the steps are MAX_STEP_S
SLOW_RAD_S = 0.5
START_WINDOW_S = 0.02  # the cubic that gives a segment's start state spans 20 ms
MIN_SEGMENT_S = 0.3
DEFAULT_SEGMENT_S = {"single": 10.0, "nlink": 2.5}


def record_runs(record: Record, exclude: Sequence[tuple[float, float]] = (),
                rate_hz: float = FIT_RATE_HZ) -> list[tuple[np.ndarray, np.ndarray]]:
    """The free motion's gap-free runs outside `exclude`: (t (k,), angles (k, n)) at
    <= rate_hz, t on the record's own clock."""
    d, rs = decimated_runs(record, exclude, rate_hz)
    return [(d.t[s], d.q[s]) for s in rs]


def start_state(t: np.ndarray, q: np.ndarray) -> np.ndarray:
    """A segment's (angles, velocities) at t[0]: the cubic over its first START_WINDOW_S."""
    return cubic_state(t, q, START_WINDOW_S)


def free_runs(record: Record, rig: ChainRig, exclude: Sequence[tuple[float, float]] = ()
              ) -> tuple[Decimated, list[slice]]:
    """The record's free motion a fit may see, decimated to FIT_RATE_HZ, and its gap-free
    runs: without the hold before the release and the excluded (held-out) spans. The
    record is the rig's (check_record, which identify_chain runs before anything else)."""
    return decimated_runs(record, exclude, FIT_RATE_HZ)


def check_record(record: Record, rig: ChainRig) -> None:
    """A ValueError if the record cannot be the rig's: another number of joints, or a
    joint that never moved (identify.signal.require_motion)."""
    if record.joints != rig.links:
        raise ValueError(f"the record has {record.joints} joint(s), rig kind {rig.kind} "
                         f"has {rig.links}")
    require_motion(record, [f"joint {n}" for n in rig.joint_names])


def refine_substeps(dt: float) -> int:
    """RK4 substeps per sample that keep the step within MAX_STEP_S."""
    return max(1, int(np.ceil(dt / MAX_STEP_S - 1e-9)))


def slow_steps(q: np.ndarray, dt: float) -> np.ndarray:
    """(k,) bool: the step from each sample to the next has a joint's relative velocity
    below SLOW_RAD_S at either end or changing sign (the last sample's step: False)."""
    w = np.gradient(q, dt, axis=0)
    w[:, 1:] -= w[:, :-1].copy()  # a joint turns with the link below it
    slow = np.abs(w) < SLOW_RAD_S
    turn = np.signbit(w[:-1]) != np.signbit(w[1:])
    out = np.zeros(q.shape[0], bool)
    out[:-1] = (slow[:-1] | slow[1:] | turn).any(axis=1)
    return out


def thinned(data: ChainData, factor: int) -> ChainData:
    """Every `factor`-th sample of each segment (its first kept: the states stay the
    same), on a step `factor` times longer: the laws are ranked on it at a fraction of
    the cost."""
    if factor <= 1:
        return data
    rows = np.concatenate([np.arange(a, b, factor) for a, b in
                           zip(data.bounds[:-1], data.bounds[1:], strict=True)])
    return replace(data, q=data.q[rows], lengths=-(-data.lengths // factor),
                   dt=data.dt * factor, slow=data.slow[rows], substeps=1)


def cut(t: np.ndarray, segment_s: float) -> list[tuple[int, int]]:
    """(first, stop) rows of consecutive segments of `segment_s` seconds along the run's
    times t, each at least MIN_SEGMENT_S long (a shorter tail is left out)."""
    edges = np.searchsorted(t, np.arange(t[0], t[-1], segment_s))
    return [(int(a), int(b)) for a, b in zip(edges, list(edges[1:]) + [t.size], strict=True)
            if t[b - 1] - t[a] >= MIN_SEGMENT_S]


def chain_data(d: Decimated, runs: list[slice], rig: ChainRig, segment_s: float | None = None,
               resolution_rad: float | None = None) -> tuple[ChainData, np.ndarray]:
    """The fit's segments of the free runs and their start states (S, 2n)."""
    seg_s = segment_s or DEFAULT_SEGMENT_S[rig.kind.split(":")[0]]
    pieces = [(d.t[s][a:b], d.q[s][a:b]) for s in runs for a, b in cut(d.t[s], seg_s)]
    if not pieces:
        raise ValueError(f"no stretch of {MIN_SEGMENT_S} s or more to fit outside the held-out "
                         "spans")
    dt = float(np.median(np.diff(pieces[0][0])))
    q_all = np.vstack([q for _, q in pieces])
    # a record of angles without a stated resolution: a floor far below any encoder's
    quantum = resolution_rad or float(np.sqrt(12.0) * 1e-7)
    data = ChainData(q=q_all, lengths=np.array([q.shape[0] for _, q in pieces]),
                     t_start=np.array([t[0] for t, _ in pieces]), dt=dt,
                     sigma=noise_sigma(d, quantum), g_plane=rig.g_plane,
                     slow=np.concatenate([slow_steps(q, dt) for _, q in pieces]),
                     floor=quantisation_rms(quantum))
    return data, np.array([start_state(t, q) for t, q in pieces])


#: Hz: the rates seed 002's regression is tried at again when the fit's rate gives no
#: physical rig: longer blocks and derivative filters cut the noise that biases it (a
#: double pendulum read with 4.3 mrad of noise had a negative static moment at 500 Hz,
#: every standard parameter within 12 % at 200 Hz); a record of the wrong angle
#: convention stays unphysical at any rate
START_FALLBACK_HZ = (200.0, 100.0)


def regression_start(record: Record, rig: ChainRig, exclude: Sequence[tuple[float, float]],
                     d: Decimated, runs: list[slice]) -> ChainParams:
    """chain_regression_start on the fit's decimated runs `d`, `runs`, else on the free
    motion decimated to each of START_FALLBACK_HZ in turn; the first physical rig."""
    try:
        return chain_regression_start(d, runs, rig)
    except ValueError as first:
        for rate in START_FALLBACK_HZ:
            try:
                return chain_regression_start(*decimated_runs(record, exclude, rate), rig)
            except ValueError:
                continue
        raise first from None


def chain_regression_start(d: Decimated, runs: list[slice], rig: ChainRig) -> ChainParams:
    """Normalised parameters from the regression (viscous and Coulomb per joint) on the
    free runs' derivatives."""
    n = rig.links
    blocks = []
    for s in runs:
        q, v, a = d.q[s], d.v[s], d.a[s]
        ok = np.isfinite(v).all(axis=1) & np.isfinite(a).all(axis=1)
        if not ok.any():  # a run shorter than the derivative filters
            continue
        phi = chain_regressor(q[ok], v[ok], a[ok], rig.g_plane)
        coulomb = np.zeros(phi.shape[:2] + (n,))
        for i in range(n):
            w = v[ok, i] - (v[ok, i - 1] if i > 0 else 0.0)
            coulomb[:, i, i] = np.tanh(4.0 * w / VT_COULOMB)
            if i > 0:
                coulomb[:, i - 1, i] = -coulomb[:, i, i]
        blocks.append(np.concatenate([phi, coulomb], axis=2).reshape(-1, phi.shape[2] + n))
    if not blocks:
        raise ValueError("the record is too short to start a fit (needs 0.12 s in one piece)")
    a_mat = np.vstack(blocks)
    c = inertial_normaliser(n)
    x, *_ = np.linalg.lstsq(np.delete(a_mat, c, axis=1), -a_mat[:, c], rcond=None)
    x = np.insert(x, c, 1.0)
    k = len(link_pairs(n)) + 2 * n
    fr = np.zeros((n, 5))
    fr[:, 3] = np.maximum(x[k:k + n], 0.0)
    fr[:, 0] = fr[:, 1] = np.maximum(x[k + n:], 0.0)
    fr[:, 2] = VT_COULOMB
    inertial = x[:k]
    if np.any(inertial[len(link_pairs(n)):] <= 0):
        noise = float(noise_sigma(d, 0.0).max())
        why = (f" Or its noise ({noise * 1e3:.0f} mrad at {FIT_RATE_HZ:.0f} Hz) is too much "
               "for the regression that starts the fit" if noise > NOISY_START_RAD else "")
        raise ValueError("the regression gives a non-positive inertia or static moment: is the "
                         "angle convention (0 upright, pi hanging) the record's?" + why)
    return with_positive_mass(ChainParams(inertial, fr))


#: rad: a record noisier than this can bias seed 002's regression (its derivatives) past a
#: physical rig: 20 mrad at 1 kHz gave a double pendulum a negative inertia
NOISY_START_RAD = 5e-3
#: the smallest eigenvalue of D^-1/2 M(q) D^-1/2 (D: M's diagonal) a start keeps at any q
MASS_MARGIN = 0.2


def with_positive_mass(start: ChainParams) -> ChainParams:
    """A start whose mass matrix M(q) is positive definite at every configuration.

    On a noisy record the regression's coupling terms mu_ij come out too large against the
    links' own kappa_i (the differentiated noise attenuates the kappa_i columns): a noisy
    double pendulum's start had kappa1 kappa2 = 0.26 mu12^2, an M indefinite near
    alignment, and every fit from it diverged. A real chain has kappa_i kappa_j > mu_ij^2.
    The coupling is weakened by the factor s that restores MASS_MARGIN: as the normaliser
    is a mu, every other inertial and friction term is divided by s, which keeps each
    link's own frequency and damping.
    """
    n = start.links
    pairs = link_pairs(n)
    if not pairs:
        return start
    kappa, mu, _ = unpack_inertial(start.inertial, n)
    # M at every configuration's sign pattern of cos(q_i - q_j) is bounded by the
    # aligned chain and the sampled ones (n <= 3: a few hundred cover it)
    rng = np.random.default_rng(0)
    q = np.vstack([np.zeros(n), rng.uniform(-np.pi, np.pi, (256, n))])
    scale = 1.0 / np.sqrt(kappa)
    coupling = (mu * np.cos(q[:, :, None] - q[:, None, :])) * scale[:, None] * scale[None, :]
    worst = min(float(np.linalg.eigvalsh(c).min()) for c in coupling)  # eig of C alone
    # D^-1/2 M D^-1/2 = I + s C: its smallest eigenvalue 1 + s * worst >= MASS_MARGIN
    if 1.0 + worst >= MASS_MARGIN:
        return start
    s = (1.0 - MASS_MARGIN) / -worst
    keep = np.zeros(start.inertial.size, bool)
    keep[:len(pairs)] = True  # the couplings, the normaliser among them, stay
    inertial = np.where(keep, start.inertial, start.inertial / s)
    fr = start.friction.copy()
    fr[:, [0, 1, 3, 4]] /= s
    return ChainParams(inertial, fr)
