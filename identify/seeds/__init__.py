"""Seed models that no identification method reaches: kept, tested, importable on demand.

- the n-link pendulum with the cart fixed of seed 002 (model, simulator, standard
  parameters, regression);
- the dc servomotor with Karnopp stick-slip friction of seed 003, identified by its
  modified simplex.

Beside identify.methods (neither imports the other), above results, signal, model and
solvers. identify's root does not import this subpackage.
"""

from ._nlink import (
    NLinkIdentification,
    NLinkParams,
    accelerations,
    binomial_smoother,
    derivatives,
    filtered_regression_model,
    full_parameter_names,
    full_parameters,
    full_regressor,
    identify_nlink,
    lab_chain,
    nlink_acceleration,
    nlink_energy,
    normaliser_index,
    regression_model,
    simulate_nlink,
    standard_parameter_names,
    standard_parameters,
)
from ._servo import (
    DEFAULT_MOTOR,
    SEED_003_ESTIMATE,
    SEED_003_TRUTH,
    SERVO_PARAM_NAMES,
    DcMotor,
    ServoFit,
    StickSlipParams,
    identify_servo,
    karnopp_velocity,
    large_fast_input,
    paper_input_mix,
    servo_cost,
    servo_rhs,
    simulate_servo,
    small_slow_input,
)

__all__ = [
    "DEFAULT_MOTOR",
    "DcMotor",
    "NLinkIdentification",
    "NLinkParams",
    "SEED_003_ESTIMATE",
    "SEED_003_TRUTH",
    "SERVO_PARAM_NAMES",
    "ServoFit",
    "StickSlipParams",
    "accelerations",
    "binomial_smoother",
    "derivatives",
    "filtered_regression_model",
    "full_parameter_names",
    "full_parameters",
    "full_regressor",
    "identify_nlink",
    "identify_servo",
    "lab_chain",
    "karnopp_velocity",
    "large_fast_input",
    "nlink_acceleration",
    "nlink_energy",
    "normaliser_index",
    "paper_input_mix",
    "regression_model",
    "servo_cost",
    "servo_rhs",
    "simulate_nlink",
    "simulate_servo",
    "small_slow_input",
    "standard_parameter_names",
    "standard_parameters",
]
