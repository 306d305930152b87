"""Single and n-link rigs as the estimator fits them: segments of a record, output error on
a friction law ladder, the result in the standard parameters, held-out validation.
"""

from typing import TYPE_CHECKING

from ...._lazy import lazy_exports

if TYPE_CHECKING:
    from ._data import (
        DEFAULT_SEGMENT_S,
        MASS_MARGIN,
        MIN_SEGMENT_S,
        record_runs,
        start_state,
        with_positive_mass,
    )
    from ._fit import (
        LAWS_AUTO,
        ChainFit,
        fit_chain,
        fit_law,
        segment_fits,
    )
    from ._problem import (
        LAW_TERMS,
        ChainData,
        ChainProblem,
    )
    from ._result import (
        Scale,
        identify_chain,
        meaning,
        result_params,
    )
    from ._validation import (
        held_out_segments,
        validate_chain,
    )

_EXPORTS = {
    "._data": (
        "DEFAULT_SEGMENT_S", "MASS_MARGIN", "MIN_SEGMENT_S", "record_runs", "start_state",
        "with_positive_mass",
    ),
    "._fit": (
        "LAWS_AUTO", "ChainFit", "fit_chain", "fit_law", "segment_fits",
    ),
    "._problem": (
        "LAW_TERMS", "ChainData", "ChainProblem",
    ),
    "._result": (
        "Scale", "identify_chain", "meaning", "result_params",
    ),
    "._validation": (
        "held_out_segments", "validate_chain",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "ChainData", "ChainFit", "ChainProblem", "DEFAULT_SEGMENT_S", "LAWS_AUTO", "LAW_TERMS",
    "MASS_MARGIN", "MIN_SEGMENT_S", "Scale", "fit_chain", "fit_law", "held_out_segments",
    "identify_chain", "meaning", "record_runs", "result_params", "segment_fits", "start_state",
    "validate_chain", "with_positive_mass",
]
