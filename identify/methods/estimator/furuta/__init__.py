"""The Furuta rig as the estimator fits it: its multiple-shooting problem (forward
sensitivities), the nominal rig as a prior, the fit, the model choice and the result.
"""

from typing import TYPE_CHECKING

from ...._lazy import lazy_exports

if TYPE_CHECKING:
    from ._fit import (
        FIT_RATE_HZ,
        OVERLAP_S,
        SEGMENT_S,
        ShootingFit,
        ShortFit,
        finer_where_stuck,
        fit_from_short,
        fit_shooting,
        segment_states,
        short_fit,
    )
    from ._prior import (
        CAD_UNCERTAINTY,
        RIG_VARIABLES,
        TILT_UNCERTAINTY_DEG,
        WEIGHED_UNCERTAINTY,
        RigPrior,
    )
    from ._problem import (
        COARSE_FLOOR,
        EXTRA_TERMS,
        FINE_FLOOR,
        FINE_START,
        FRICTION_FREE,
        NEAR_MARGIN,
        Segments,
        ShootingProblem,
        friction_bounds,
    )
    from ._result import (
        identify_multiple_shooting,
        segment_angles,
    )
    from ._rig import (
        NOT_SEPARABLE,
        SCALE_FREE,
        rig_estimates,
    )
    from ._select import (
        finer_floor_asked,
        score_statistic,
        select_model,
        unresolved_joints,
    )

_EXPORTS = {
    "._fit": (
        "FIT_RATE_HZ", "OVERLAP_S", "SEGMENT_S", "ShootingFit", "ShortFit", "finer_where_stuck",
        "fit_from_short", "fit_shooting", "segment_states", "short_fit",
    ),
    "._prior": (
        "CAD_UNCERTAINTY", "RIG_VARIABLES", "TILT_UNCERTAINTY_DEG", "WEIGHED_UNCERTAINTY",
        "RigPrior",
    ),
    "._problem": (
        "COARSE_FLOOR", "EXTRA_TERMS", "FINE_FLOOR", "FINE_START", "FRICTION_FREE", "NEAR_MARGIN",
        "Segments", "ShootingProblem", "friction_bounds",
    ),
    "._result": (
        "identify_multiple_shooting", "segment_angles",
    ),
    "._rig": (
        "NOT_SEPARABLE", "SCALE_FREE", "rig_estimates",
    ),
    "._select": (
        "finer_floor_asked", "score_statistic", "select_model", "unresolved_joints",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "CAD_UNCERTAINTY", "COARSE_FLOOR", "EXTRA_TERMS", "FINE_FLOOR", "FINE_START", "FIT_RATE_HZ",
    "FRICTION_FREE", "NEAR_MARGIN", "NOT_SEPARABLE", "OVERLAP_S", "RIG_VARIABLES", "RigPrior",
    "SCALE_FREE", "SEGMENT_S", "Segments", "ShootingFit", "ShootingProblem", "ShortFit",
    "TILT_UNCERTAINTY_DEG", "WEIGHED_UNCERTAINTY", "finer_floor_asked", "finer_where_stuck",
    "fit_from_short", "fit_shooting", "friction_bounds", "identify_multiple_shooting",
    "rig_estimates", "score_statistic", "segment_angles", "segment_states", "select_model",
    "short_fit",
    "unresolved_joints",
]
