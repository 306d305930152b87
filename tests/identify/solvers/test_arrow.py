"""Arrow-pattern symmetric systems (identify.solvers.Arrow): the same answers as a dense
solve, from the head's Schur complement."""

import numpy as np
import pytest

from hilrig.identify.solvers import Arrow, BlockJacobian


def _jacobian(rng, rows_per_block=30, n_global=5, blocks=7, width=4) -> BlockJacobian:
    rows = rows_per_block * blocks
    parts = [(k * rows_per_block, (k + 1) * rows_per_block,
              rng.standard_normal((rows_per_block, width))) for k in range(blocks)]
    return BlockJacobian(rng.standard_normal((rows, n_global)), parts)


def _dense(j: BlockJacobian) -> np.ndarray:
    out = np.zeros(j.shape)
    out[:, :j.n_global] = j.dense
    for k, (a, b, blk) in enumerate(j.blocks):
        c = j.n_global + j.width * k
        out[a:b, c:c + j.width] = blk
    return out


def test_the_pattern_solves_as_the_dense_matrix_does():
    rng = np.random.default_rng(3)
    j = _jacobian(rng)
    m = j.gram()
    rhs = rng.standard_normal(m.shape[0])
    np.testing.assert_allclose(j.arrow.solve(m, rhs), np.linalg.solve(m, rhs), rtol=1e-9)
    np.testing.assert_allclose(j.arrow.solve(m, rhs, pseudo=True), np.linalg.solve(m, rhs),
                               rtol=1e-9)
    np.testing.assert_allclose(j.arrow.inverse_diagonal(m), np.diag(np.linalg.inv(m)),
                               rtol=1e-9)
    # the gram it is given is the dense Jacobian's
    np.testing.assert_allclose(m, _dense(j).T @ _dense(j), atol=1e-12)


def test_without_a_head_the_blocks_are_solved_alone():
    rng = np.random.default_rng(4)
    j = _jacobian(rng, n_global=0)
    m = j.gram()
    rhs = rng.standard_normal(m.shape[0])
    arrow = Arrow(0, 4)
    np.testing.assert_allclose(arrow.solve(m, rhs), np.linalg.solve(m, rhs), rtol=1e-9)
    np.testing.assert_allclose(arrow.inverse_diagonal(m), np.diag(np.linalg.inv(m)),
                               rtol=1e-9)


def test_a_head_column_no_row_sees_is_dropped_as_the_pseudo_inverse_drops_it():
    rng = np.random.default_rng(5)
    j = _jacobian(rng)
    j.dense[:, 2] = 0.0  # a term the motion no longer feels
    m = j.gram()
    g = j.rmatvec(rng.standard_normal(j.shape[0]))
    dense = np.linalg.pinv(m, hermitian=True)
    np.testing.assert_allclose(j.arrow.inverse_diagonal(m), np.diag(dense), atol=1e-9)
    # g = J^T r lies where the rows see: the promised decrement is the pseudo-inverse's
    assert g @ j.arrow.solve(m, g, pseudo=True) == pytest.approx(g @ dense @ g, rel=1e-9)
    with pytest.raises(np.linalg.LinAlgError):
        j.arrow.solve(m, g)


def test_a_matrix_that_does_not_fit_the_pattern_is_refused():
    with pytest.raises(ValueError, match="no head of 5 and blocks of 4"):
        Arrow(5, 4).solve(np.eye(11), np.ones(11))
