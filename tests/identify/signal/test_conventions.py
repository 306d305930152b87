"""A record's angles checked against the convention its file states, before any fit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hilrig.identify.signal import angle_convention_problem


def _swing(rest: float, seconds: float = 20.0, rate: float = 1000.0) -> np.ndarray:
    t = np.arange(0.0, seconds, 1.0 / rate)
    return (rest + 1.5 * np.exp(-t / 8.0) * np.cos(6.0 * t))[:, None]


@pytest.mark.parametrize("unit,zero,rest", [("rad", "upright", math.pi),
                                            ("rad", "upright", -math.pi),
                                            ("rad", "hanging", 0.0),
                                            ("rad", "hanging", 2 * math.pi),
                                            ("rad", "upright", 3 * math.pi + 0.3)])
def test_a_pendulum_that_ends_hanging_in_the_stated_convention_passes(unit, zero, rest):
    assert angle_convention_problem(_swing(rest), ["theta1"], 1000.0, unit, zero) is None


@pytest.mark.parametrize("values,stated,fix", [
    (np.degrees(_swing(math.pi)), ("rad", "upright"), ("deg", None)),
    (np.degrees(_swing(0.0)), ("rad", "hanging"), ("deg", None)),
    (_swing(0.0), ("rad", "upright"), (None, "hanging")),
    (_swing(math.pi), ("rad", "hanging"), (None, "upright")),
    (np.degrees(_swing(0.0)), ("deg", "upright"), (None, "hanging")),
    (np.degrees(_swing(math.pi)), ("rad", "hanging"), ("deg", "upright")),
])
def test_a_pendulum_resting_where_another_convention_puts_it_names_that_convention(
        values, stated, fix):
    problem = angle_convention_problem(values, ["theta1"], 1000.0, *stated)
    assert problem is not None and (problem.unit, problem.zero) == fix
    assert problem.joint == "theta1" and "theta1 ends swinging about" in problem.message


def test_an_arm_is_not_judged_by_where_it_rests():
    arm = _swing(math.pi)  # a Furuta arm may rest anywhere, half a turn from its zero too
    both = np.hstack([arm, _swing(0.0)])
    assert angle_convention_problem(both, ["theta0", "theta1"], 1000.0, "rad", "hanging",
                                    [False, True]) is None
    assert angle_convention_problem(both, ["theta0", "theta1"], 1000.0, "rad", "hanging"
                                    ) is not None


def test_a_rest_no_convention_explains_is_left_to_the_fit():
    # a rig of its own (a spring, a stop): refused by nothing here
    assert angle_convention_problem(_swing(1.2), ["theta1"], 1000.0, "rad", "upright") is None


def test_angles_wrapped_to_one_turn_are_named_with_the_sample():
    wrapped = np.mod(_swing(math.pi) + np.linspace(0, 20, 20_000)[:, None], 2 * math.pi)
    problem = angle_convention_problem(wrapped, ["theta1"], 1000.0)
    assert problem is not None and "wrapped to one turn" in problem.message
    assert "numpy.unwrap" in problem.message and problem.unit is None
    degrees = angle_convention_problem(np.degrees(wrapped), ["theta1"], 1000.0)
    assert degrees is not None and degrees.unit == "deg" and "(of 360: degrees)" in degrees.message


def test_a_bad_convention_or_shape_is_a_value_error():
    with pytest.raises(ValueError, match="unit must be one of"):
        angle_convention_problem(_swing(0.0), ["theta1"], 1000.0, "grad")
    with pytest.raises(ValueError, match="values must be"):
        angle_convention_problem(_swing(0.0), ["theta1", "theta2"], 1000.0)
