"""A chain's forward sensitivities: the simulated angles and their exact derivatives.

The chain estimator takes its Jacobian from these, so they must be the derivatives of the
very simulation its residuals come from: by every inertial parameter and friction term
(Brown-McPhee with drag, through joint reversals, with substeps), by each segment's
initial state, and through the weights a fit's own unknowns put on them (v_t fitted as
its logarithm, Fs tied to Fc).
"""

from __future__ import annotations

import numpy as np
import pytest

from hilrig.identify import model
from hilrig.identify.model import ChainParams
from hilrig.identify.seeds import lab_chain

G = 9.81
DT = 2e-3
LENGTHS = np.array([240, 160, 90])


def _rig(n: int) -> ChainParams:
    p = lab_chain(n)
    fr = np.zeros((n, 5))
    fr[:, 0], fr[:, 1], fr[:, 2], fr[:, 3], fr[:, 4] = 0.01, 0.02, 0.05, 1e-3, 1e-4
    return ChainParams(p.inertial.copy(), fr)


def _states(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    return np.hstack([rng.uniform(1.0, 3.0, (LENGTHS.size, n)),
                      rng.uniform(-1.0, 1.0, (LENGTHS.size, n))])


def _substeps() -> np.ndarray:
    sub = np.ones(int(LENGTHS.sum()), np.int64)
    sub[::7] = 4  # as where a joint reverses
    return sub


def _simulate(flat: np.ndarray, n: int, x0: np.ndarray) -> np.ndarray:
    k = flat.size - 5 * n
    return ChainParams(flat[:k], flat[k:].reshape(n, 5)).simulate(G, x0, LENGTHS, DT,
                                                                  _substeps())


def _every_raw(p: ChainParams) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    count = p.inertial.size + p.friction.size
    return np.arange(count), np.arange(count), np.ones(count), count


def chain_sensitivity(*args, **kwargs):
    """The angles and every derivative, the unknowns' columns before the states'."""
    q, d_z, d_x0 = model.chain_sensitivity(*args, **kwargs)
    return q, np.concatenate([d_z, d_x0], axis=2)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_the_angles_are_the_plain_simulations_to_the_last_bit(n):
    p, x0 = _rig(n), _states(n)
    q, _ = chain_sensitivity(p.inertial, p.friction, G, x0, LENGTHS, DT, _substeps(),
                             *_every_raw(p))
    assert np.array_equal(q, p.simulate(G, x0, LENGTHS, DT, _substeps()))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_the_derivatives_by_every_parameter_match_central_differences(n):
    p, x0 = _rig(n), _states(n)
    _, dq = chain_sensitivity(p.inertial, p.friction, G, x0, LENGTHS, DT, _substeps(),
                              *_every_raw(p))
    flat = np.concatenate([p.inertial, p.friction.ravel()])
    assert dq.shape == (LENGTHS.sum(), n, flat.size + 2 * n)
    for c in range(flat.size):
        # a step of 1e-5: central differences' truncation and rounding balance there (a
        # wrong term is off by its own size, not by 1e-4)
        e = np.zeros(flat.size)
        e[c] = 1e-5 * max(abs(flat[c]), 1e-3)
        fd = (_simulate(flat + e, n, x0) - _simulate(flat - e, n, x0)) / (2 * e[c])
        assert np.abs(dq[:, :, c] - fd).max() <= 1e-4 * np.abs(fd).max(), c


@pytest.mark.parametrize("n", [1, 3])
def test_the_derivatives_by_each_segments_start_move_only_its_own_rows(n):
    p, x0 = _rig(n), _states(n)
    raw, col, weight, count = _every_raw(p)
    _, dq = chain_sensitivity(p.inertial, p.friction, G, x0, LENGTHS, DT, _substeps(), raw,
                              col, weight, count)
    first = np.concatenate([[0], np.cumsum(LENGTHS)])
    for c in range(2 * n):
        h = 1e-6
        up, down = x0.copy(), x0.copy()
        up[:, c] += h
        down[:, c] -= h
        fd = (p.simulate(G, up, LENGTHS, DT, _substeps())
              - p.simulate(G, down, LENGTHS, DT, _substeps())) / (2 * h)
        assert np.abs(dq[:, :, count + c] - fd).max() <= 1e-5 * np.abs(fd).max()
        # row 0 of each segment is its start: dq_i/dx_c is 1 for its own angle
        assert np.allclose(dq[first[:-1], :, count + c], np.eye(2 * n)[c, :n])


def test_a_fits_unknowns_weigh_the_raw_columns():
    """log v_t: weight v_t; Fs tied to Fc: two raw columns into one."""
    n = 2
    p, x0 = _rig(n), _states(n)
    p.friction[1, 1] = p.friction[1, 0]  # the tied law: Fs = Fc
    base = p.inertial.size
    vt_raw, fc_raw, fs_raw = base + 2, base + 5, base + 6  # joint 1's v_t, joint 2's Fc, Fs
    raw = np.array([vt_raw, fc_raw, fs_raw])
    col = np.array([0, 1, 1])
    weight = np.array([p.friction[0, 2], 1.0, 1.0])
    _, dq = chain_sensitivity(p.inertial, p.friction, G, x0, LENGTHS, DT, _substeps(), raw,
                              col, weight, 2)
    flat = np.concatenate([p.inertial, p.friction.ravel()])

    def moved(log_vt: float, fc: float) -> np.ndarray:
        f = flat.copy()
        f[vt_raw] = np.exp(log_vt)
        f[fc_raw] = f[fs_raw] = fc
        return _simulate(f, n, x0)

    lv, fc = np.log(flat[vt_raw]), flat[fc_raw]
    fd_vt = (moved(lv + 1e-5, fc) - moved(lv - 1e-5, fc)) / 2e-5
    fd_fc = (moved(lv, fc + 1e-7) - moved(lv, fc - 1e-7)) / 2e-7
    assert np.abs(dq[:, :, 0] - fd_vt).max() <= 1e-4 * np.abs(fd_vt).max()
    assert np.abs(dq[:, :, 1] - fd_fc).max() <= 1e-4 * np.abs(fd_fc).max()


def test_a_segment_that_diverges_is_nan_with_no_derivative():
    p = _rig(2)
    x0 = _states(2)
    x0[1, 2:] = np.inf
    q, dq = chain_sensitivity(p.inertial, p.friction, G, x0, LENGTHS, DT, 1, *_every_raw(p))
    rows = slice(LENGTHS[0], LENGTHS[0] + LENGTHS[1])
    assert np.isnan(q[rows]).all() and not dq[rows].any()
    assert np.isfinite(q[:LENGTHS[0]]).all()


def test_each_joints_rows_are_scaled_as_asked():
    """A fit asks for its residuals' units (1 / sigma per joint): the same derivatives."""
    p, x0 = _rig(2), _states(2)
    raw, col, weight, count = _every_raw(p)
    plain = model.chain_sensitivity(p.inertial, p.friction, G, x0, LENGTHS, DT, 1, raw, col,
                                    weight, count)
    scale = np.array([2.0, 0.25])
    scaled = model.chain_sensitivity(p.inertial, p.friction, G, x0, LENGTHS, DT, 1, raw, col,
                                     weight, count, row_scale=scale)
    assert np.array_equal(plain[0], scaled[0])
    for a, b in zip(plain[1:], scaled[1:], strict=True):
        assert np.array_equal(a * scale[None, :, None], b)
