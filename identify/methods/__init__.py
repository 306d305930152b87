"""Identification methods on a Measurement, the pipeline they share, and the registry.

Above identify.results, identify.signal, identify.model and identify.solvers; beside
identify.seeds (neither imports the other); below identify.report.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ._grey_box import (
        STRIBECK_RESTARTS,
        fit_with_restarts,
        identify_grey_box,
    )
    from ._joint_regression import (
        JointRegression,
        regress_joint,
        regression_estimate,
    )
    from ._names import (
        DEFAULT_METHOD,
        ESTIMATOR,
        GREY_BOX,
        INTEGRAL,
        METHOD_NAMES,
        OUTPUT_ERROR,
        REGRESSION,
        SIMPLEX,
        UAS,
    )
    from ._oe_problem import (
        LOG_BOUNDS,
        Experiment,
        InitialState,
        OEFit,
        OutputErrorProblem,
        fit_output_error,
        fit_output_error_many,
        residual_inflation,
        substep_schedule,
        whiteness,
    )
    from ._output_error import (
        SEED_INITIAL_GUESS,
        identify_output_error,
        identify_output_error_many,
        profile_interval,
    )
    from ._pipeline import (
        FREE,
        FREE_NAMES,
        Prepared,
        StartState,
        build_result,
        capture_fit,
        decay_start_s,
        first_defined_state,
        noise_floor,
        parameter_estimates,
        prepare,
        regression_start,
        release_state,
        simulate_capture,
    )
    from ._registry import (
        METHODS,
        SEED_METHODS,
        Method,
        identify,
    )
    from ._regression import (
        FrictionRegression,
        friction_regression,
        identify_regression,
        reversal_mask,
    )
    from ._simplex import (
        identify_simplex,
    )
    from ._uas import (
        identify_uas,
    )
    from ._uas_run import (
        UASRun,
        run_uas,
    )
    from ._uas_settings import (
        TABLE_II_UPPER,
        TABLE_III_INITIAL_GUESS,
        UASSettings,
    )
    from .estimator import (
        DEFAULT_SEGMENT_S,
        LAW_TERMS,
        LAWS_AUTO,
        MIN_SEGMENT_S,
        ChainData,
        ChainFit,
        ChainProblem,
        Scale,
        fit_chain,
        fit_law,
        held_out_segments,
        identify_chain,
        meaning,
        record_runs,
        result_params,
        segment_fits,
        start_state,
        validate_chain,
    )
    from .integral import (
        identify_integral,
    )

_EXPORTS = {
    ".estimator": (
        "ChainData", "ChainFit", "ChainProblem", "DEFAULT_SEGMENT_S", "LAWS_AUTO", "LAW_TERMS",
        "MIN_SEGMENT_S", "Scale", "fit_chain", "fit_law", "held_out_segments", "identify_chain",
        "meaning", "record_runs", "result_params", "segment_fits", "start_state", "validate_chain",
    ),
    "._names": (
        "DEFAULT_METHOD", "ESTIMATOR", "GREY_BOX", "INTEGRAL", "METHOD_NAMES", "OUTPUT_ERROR",
        "REGRESSION", "SIMPLEX", "UAS",
    ),
    "._grey_box": (
        "STRIBECK_RESTARTS", "fit_with_restarts", "identify_grey_box",
    ),
    "._joint_regression": (
        "JointRegression", "regress_joint", "regression_estimate",
    ),
    "._oe_problem": (
        "LOG_BOUNDS", "Experiment", "InitialState", "OEFit", "OutputErrorProblem",
        "fit_output_error", "fit_output_error_many", "residual_inflation", "substep_schedule",
        "whiteness",
    ),
    "._output_error": (
        "SEED_INITIAL_GUESS", "identify_output_error", "identify_output_error_many",
        "profile_interval",
    ),
    "._pipeline": (
        "FREE", "FREE_NAMES", "Prepared", "StartState", "build_result", "capture_fit",
        "decay_start_s", "first_defined_state", "noise_floor", "parameter_estimates",
        "prepare", "regression_start", "release_state", "simulate_capture",
    ),
    "._registry": (
        "METHODS", "SEED_METHODS", "Method", "identify",
    ),
    "._regression": (
        "FrictionRegression", "friction_regression", "identify_regression", "reversal_mask",
    ),
    "._simplex": (
        "identify_simplex",
    ),
    "._uas": (
        "identify_uas",
    ),
    "._uas_run": (
        "UASRun", "run_uas",
    ),
    "._uas_settings": (
        "TABLE_II_UPPER", "TABLE_III_INITIAL_GUESS", "UASSettings",
    ),
    ".integral": (
        "identify_integral",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_SEGMENT_S", "MIN_SEGMENT_S", "held_out_segments", "record_runs",
    "start_state",
    "LAWS_AUTO", "LAW_TERMS", "ChainData", "ChainFit", "ChainProblem", "Scale", "fit_chain",
    "fit_law", "identify_chain", "meaning", "result_params", "segment_fits", "validate_chain",
    "DEFAULT_METHOD", "ESTIMATOR", "METHOD_NAMES", "FREE", "FREE_NAMES", "GREY_BOX", "INTEGRAL",
    "LOG_BOUNDS", "METHODS", "SEED_METHODS",
    "OUTPUT_ERROR", "REGRESSION", "SEED_INITIAL_GUESS", "SIMPLEX", "STRIBECK_RESTARTS",
    "TABLE_III_INITIAL_GUESS", "TABLE_II_UPPER", "UAS", "Experiment", "FrictionRegression",
    "InitialState", "JointRegression", "Method", "OEFit", "OutputErrorProblem", "Prepared",
    "StartState", "UASRun", "UASSettings", "build_result", "capture_fit", "decay_start_s",
    "first_defined_state", "fit_output_error", "fit_output_error_many", "fit_with_restarts",
    "friction_regression", "identify", "identify_grey_box", "identify_integral",
    "identify_output_error", "identify_output_error_many", "identify_regression",
    "identify_simplex", "identify_uas", "noise_floor", "parameter_estimates", "prepare",
    "profile_interval", "regress_joint", "regression_estimate", "regression_start",
    "release_state", "residual_inflation", "reversal_mask", "run_uas", "simulate_capture",
    "substep_schedule", "whiteness",
]
