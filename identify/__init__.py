"""Models, simulators, signal processing and identification of the tilted Furuta pendulum.

Usable offline on arrays: this package never imports daq or drivers. Its layers, each
importing only those below it (through their __init__):

    report    tables and figures comparing the methods (matplotlib, loaded on use)
    session   several captures of one rig put together: the session's answer, drift tested
    methods   identification methods, their shared pipeline, the registry
    seeds     seed models no method uses (n-link pendulum, dc servo); beside methods
    results   IdentificationResult and its figures of merit
    reference the seeds' published truths, for simulators and scorers; no estimator imports it
    signal    Measurement, differentiators, decimation, release, simulated captures
    model     rig and friction parameters, equations, simulators, encoder constants
    solvers   numerics: least squares, Levenberg-Marquardt, simplex, lsei, Mittag-Leffler

This module re-exports the public API (seeds and report are imported on demand, not
here). Progress, SOFTWARE_VERSION and utc_now are defined at the root
(identify/_progress.py, _version.py, _time.py), for every layer to use.
"""

from typing import TYPE_CHECKING

from ._lazy import lazy_exports

if TYPE_CHECKING:
    from ._progress import (
        Progress,
    )
    from ._time import (
        utc_now,
    )
    from ._version import (
        SOFTWARE_VERSION,
    )
    from .methods import (
        DEFAULT_METHOD,
        METHOD_NAMES,
        METHODS,
        Scale,
        identify,
        identify_chain,
        identify_grey_box,
        result_params,
        simulate_capture,
        validate_chain,
    )
    from .model import (
        COUNTS_PER_REV,
        PARAM_NAMES,
        QUANTUM,
        RIG_LAYOUT,
        ChainParams,
        ChainRig,
        FrictionParams,
        RigParams,
        acceleration,
        encoder_quantum,
        friction,
        friction_torque,
        inverse_dynamics,
        parse_rig_kind,
        rig_family,
        simulate,
        simulate_rk4,
        total_energy,
    )
    from .reference import (
        TABLE_III_TRUTH,
    )
    from .results import (
        IdentificationResult,
        ParameterEstimate,
        SessionResult,
        fit_percent,
        format_fit,
        normalized_compute_time,
        result_problems,
    )
    from .session import (
        identify_pooled,
        pool_results,
    )
    from .signal import (
        Measurement,
        Record,
        Release,
        contiguous_segments,
        decimate_mean,
        find_release,
        free_decay_counts,
        holoborodko_first,
        holoborodko_first_coefficients,
        holoborodko_second,
        holoborodko_second_coefficients,
        savitzky_golay_first,
        savitzky_golay_second,
        simulated_measurement,
    )

_EXPORTS = {
    "._progress": (
        "Progress",
    ),
    "._time": (
        "utc_now",
    ),
    "._version": (
        "SOFTWARE_VERSION",
    ),
    ".methods": (
        "DEFAULT_METHOD", "METHOD_NAMES", "METHODS", "Scale", "identify", "identify_chain",
        "identify_grey_box", "result_params", "simulate_capture", "validate_chain",
    ),
    ".model": (
        "COUNTS_PER_REV", "PARAM_NAMES", "QUANTUM", "RIG_LAYOUT", "ChainParams", "ChainRig",
        "FrictionParams", "RigParams", "acceleration", "encoder_quantum", "friction",
        "friction_torque", "inverse_dynamics", "parse_rig_kind", "rig_family", "simulate",
        "simulate_rk4", "total_energy",
    ),
    ".reference": (
        "TABLE_III_TRUTH",
    ),
    ".results": (
        "IdentificationResult", "ParameterEstimate", "SessionResult", "fit_percent", "format_fit",
        "normalized_compute_time", "result_problems",
    ),
    ".signal": (
        "Measurement", "Record", "Release", "contiguous_segments", "decimate_mean",
        "find_release", "free_decay_counts", "holoborodko_first",
        "holoborodko_first_coefficients", "holoborodko_second",
        "holoborodko_second_coefficients", "savitzky_golay_first", "savitzky_golay_second",
        "simulated_measurement",
    ),
    ".session": (
        "identify_pooled", "pool_results",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "lazy_exports",
    "ChainParams", "ChainRig", "Record", "Scale", "identify_chain", "parse_rig_kind", "rig_family",
    "result_params", "validate_chain",
    "COUNTS_PER_REV", "DEFAULT_METHOD", "METHOD_NAMES", "METHODS", "PARAM_NAMES", "QUANTUM",
    "RIG_LAYOUT",
    "SOFTWARE_VERSION", "TABLE_III_TRUTH", "FrictionParams", "IdentificationResult",
    "Measurement", "ParameterEstimate", "Progress", "Release", "RigParams", "acceleration",
    "contiguous_segments", "decimate_mean", "encoder_quantum", "find_release", "fit_percent",
    "format_fit", "free_decay_counts", "friction", "friction_torque", "holoborodko_first",
    "holoborodko_first_coefficients", "holoborodko_second", "holoborodko_second_coefficients",
    "SessionResult", "identify", "identify_grey_box", "identify_pooled", "inverse_dynamics",
    "normalized_compute_time", "pool_results",
    "result_problems",
    "savitzky_golay_first", "savitzky_golay_second", "simulate", "simulate_capture",
    "simulate_rk4", "simulated_measurement", "total_energy", "utc_now",
]
