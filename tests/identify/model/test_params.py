"""Friction parameters chosen by name: the helpers that turn names into positions."""

import pytest
from pydantic import ValidationError

from hilrig.identify.model import (
    FRICTION_TERMS,
    JOINT_NAMES,
    PARAM_NAMES,
    FrictionParams,
    joint_of,
    joint_params,
    param_index,
    param_indices,
    param_name,
    term_of,
)
from hilrig.identify.reference import TABLE_III_TRUTH


def test_parameter_names_are_each_term_of_the_arm_then_of_the_pendulum():
    assert PARAM_NAMES == joint_params(*FRICTION_TERMS)
    assert JOINT_NAMES == ("arm", "pendulum")
    assert joint_params("mu_s", "omega_t") == ("mu_s0", "omega_t0", "mu_s1", "omega_t1")


def test_names_turn_into_positions_of_the_parameter_vector():
    values = TABLE_III_TRUTH.as_array()
    for name in PARAM_NAMES:
        assert values[param_index(name)] == getattr(TABLE_III_TRUTH, name)
    assert param_indices(joint_params("mu_d", "mu_s", "mu_v", "omega_t")) == [0, 1, 2, 3,
                                                                               5, 6, 7, 8]
    assert param_indices(joint_params("Fn_t")) == [4, 9]


def test_a_name_knows_its_joint_and_term():
    assert param_name("omega_t", 1) == "omega_t1"
    assert (joint_of("mu_v0"), term_of("mu_v0")) == (0, "mu_v")
    assert (joint_of("Fn_t1"), term_of("Fn_t1")) == (1, "Fn_t")


@pytest.mark.parametrize("bad", [lambda: param_index("mu_x0"), lambda: param_name("mu_d", 2),
                                 lambda: param_name("mu", 0), lambda: joint_of("arm")])
def test_unknown_names_are_refused(bad):
    with pytest.raises(ValueError):
        bad()


def test_a_friction_is_always_stated_never_defaulted():
    with pytest.raises(ValidationError, match="mu_d0"):
        FrictionParams()  # type: ignore[call-arg]  # the missing fields are the point
    with pytest.raises(ValidationError, match="omega_t1"):
        FrictionParams(**{n: 1e-3 for n in PARAM_NAMES if n != "omega_t1"})
