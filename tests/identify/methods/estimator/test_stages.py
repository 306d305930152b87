"""The stages every rig kind shares (identify.methods.estimator._stages)."""

import math

import numpy as np

from identify.methods.estimator import WALD_LOG_SD, bound_sd, weakly_determined


def test_the_cramer_rao_bound_is_the_inverse_informations_diagonal():
    info = np.array([[4.0, 1.0], [1.0, 2.0]])
    np.testing.assert_allclose(bound_sd(info), np.sqrt(np.diag(np.linalg.inv(info))))


def test_a_direction_the_data_do_not_see_has_no_bound():
    # a term run down to where the motion no longer feels it: its column is all but zero,
    # and the pseudo-inverse would give it a variance of about nothing
    j = np.array([[1.0, 1e-12], [0.5, 0.0], [0.2, 1e-12]])
    sd = bound_sd(j.T @ j)
    assert np.isfinite(sd[0]) and sd[1] == np.inf


def test_a_log_fitted_value_is_weakly_determined_above_its_wald_limit_and_not_below():
    assert not weakly_determined(WALD_LOG_SD)
    assert weakly_determined(WALD_LOG_SD * 1.01)
    assert weakly_determined(math.inf) and weakly_determined(math.nan)
