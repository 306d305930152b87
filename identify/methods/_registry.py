"""Identification methods by name, as `hilrig identify --method NAME` selects them."""

from __future__ import annotations

from typing import Protocol

from .._progress import Progress
from ..model import JOINT_NAMES, blas_on_one_thread
from ..results import IdentificationResult
from ..signal import Measurement, require_motion
from ._grey_box import METHOD as GREY_BOX
from ._grey_box import identify_grey_box
from ._names import DEFAULT_METHOD, ESTIMATOR, METHOD_NAMES
from ._output_error import METHOD as OUTPUT_ERROR
from ._output_error import identify_output_error
from ._regression import METHOD as REGRESSION
from ._regression import identify_regression
from ._simplex import METHOD as SIMPLEX
from ._simplex import identify_simplex
from ._uas import METHOD as UAS
from ._uas import identify_uas
from .estimator import identify_multiple_shooting
from .integral import METHOD as INTEGRAL
from .integral import identify_integral


class Method(Protocol):
    def __call__(self, m: Measurement, progress: Progress | None = None
                 ) -> IdentificationResult: ...


METHODS: dict[str, Method] = {
    GREY_BOX: identify_grey_box,  # friction alone, the rig held at the values it is told
    OUTPUT_ERROR: identify_output_error,
    REGRESSION: identify_regression,  # seed 002
    UAS: identify_uas,  # seed 000
    INTEGRAL: identify_integral,  # seed 004
    SIMPLEX: identify_simplex,  # seed 003's optimiser on the output-error problem
    # the recommended estimator: friction and rig jointly by multiple shooting, the
    # release as it happens, the extra terms the data ask for
    ESTIMATOR: identify_multiple_shooting,
}
if tuple(sorted(METHODS)) != METHOD_NAMES or DEFAULT_METHOD != ESTIMATOR:
    raise ImportError("hilrig.identify.methods._names no longer lists the registry's methods")


@blas_on_one_thread
def identify(m: Measurement, method: str = DEFAULT_METHOD,
             progress: Progress | None = None) -> IdentificationResult:
    """Run the named method on a measurement (a ValueError, before any work, where a joint
    never moved: identify.signal.require_motion)."""
    try:
        fn = METHODS[method]
    except KeyError:
        raise ValueError(f"unknown identification method {method!r}; "
                         f"choose from {', '.join(sorted(METHODS))}") from None
    require_motion(m, JOINT_NAMES)
    return fn(m, progress=progress)
