"""The recommended estimator ("shooting"), one for every rig kind.

The stages every kind shares (_stages: free motion, decimation, noise, start states, the
covariance's inflation, Schwarz's criterion, the too-wide and Wald limits, the adequacy
check), the identifiability rule its parameters are reported by (_verdict) and the
score test before an extra term (_score) are written once; each rig kind
(furuta, chain) supplies its model, its parameters, its start and its candidates.
"""

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from ._score import could_win_bic, not_fitted_note, score
    from ._stages import (
        ADEQUATE_EXCESS,
        UNIDENTIFIABLE_FACTOR,
        WALD_LOG_SD,
        WEAK_NOTE,
        bound_sd,
        cubic_state,
        decimated_runs,
        excess_warning,
        free_motion,
        joint_inflation,
        log_interval,
        noise_sigma,
        schwarz_bic,
        too_wide,
        weakly_determined,
        widening,
    )
    from ._verdict import STRIBECK_NOTE, Z95, judged
    from .chain import (
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
    from .furuta import identify_multiple_shooting

_EXPORTS = {
    "._score": (
        "could_win_bic", "not_fitted_note", "score",
    ),
    "._stages": (
        "ADEQUATE_EXCESS", "UNIDENTIFIABLE_FACTOR", "WALD_LOG_SD", "WEAK_NOTE", "bound_sd",
        "cubic_state", "decimated_runs", "excess_warning", "free_motion", "joint_inflation",
        "log_interval", "noise_sigma", "schwarz_bic", "too_wide", "weakly_determined",
        "widening",
    ),
    "._verdict": (
        "STRIBECK_NOTE", "Z95", "judged",
    ),
    ".chain": (
        "ChainData", "ChainFit", "ChainProblem", "DEFAULT_SEGMENT_S", "LAWS_AUTO", "LAW_TERMS",
        "MIN_SEGMENT_S", "Scale", "fit_chain", "fit_law", "held_out_segments", "identify_chain",
        "meaning", "record_runs", "result_params", "segment_fits", "start_state", "validate_chain",
    ),
    ".furuta": (
        "identify_multiple_shooting",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ADEQUATE_EXCESS", "ChainData", "ChainFit", "ChainProblem", "DEFAULT_SEGMENT_S",
    "LAWS_AUTO", "LAW_TERMS", "MIN_SEGMENT_S", "STRIBECK_NOTE", "Scale",
    "UNIDENTIFIABLE_FACTOR", "WALD_LOG_SD", "WEAK_NOTE", "Z95", "bound_sd", "could_win_bic",
    "cubic_state", "decimated_runs", "excess_warning", "fit_chain", "fit_law", "free_motion",
    "held_out_segments", "identify_chain", "identify_multiple_shooting", "joint_inflation",
    "judged", "log_interval", "meaning", "noise_sigma", "not_fitted_note", "record_runs",
    "result_params", "schwarz_bic", "score", "segment_fits", "start_state", "too_wide",
    "validate_chain", "weakly_determined", "widening",
]
