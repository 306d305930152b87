"""The stages every rig kind shares (identify.methods.estimator._stages)."""

import math

import numpy as np

from hilrig.identify.methods.estimator import WALD_LOG_SD, bound_sd, weakly_determined


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


def test_a_transition_escaped_from_the_starts_counts_only_where_the_noise_is_the_floor():
    from hilrig.identify.methods.estimator._stages import ESCAPE_BELOW, escaped_transition

    starts, floor = (0.01, 0.05, 0.3), 4.5e-5
    at_floor = np.array([floor, floor])
    assert escaped_transition(np.array([0.5, 0.02]), starts, at_floor, floor)  # above
    assert escaped_transition(np.array([0.02, 0.01 / ESCAPE_BELOW / 2]), starts, at_floor,
                              floor)  # below the lowest by more than the factor
    assert not escaped_transition(np.array([0.02, 0.002]), starts, at_floor, floor)
    # a joint with noise above the floor: the excess over the noise judges it instead
    assert not escaped_transition(np.array([0.5, 0.02]), starts, np.array([1e-3, floor]),
                                  floor)
    # a joint without a transition (its law has none)
    assert not escaped_transition(np.array([np.nan, 0.02]), starts, at_floor, floor)
