"""What a method returns: the IdentificationResult and its figures of merit.

Above identify.signal and identify.model, below the methods.
"""

from ._adequacy import ADEQUATE_EXCESS
from ._checks import NON_NEGATIVE, result_problems
from ._frames import ESTIMATE_COLUMNS, estimate_rows, require_pandas
from ._metrics import fit_percent, format_fit, normalized_compute_time
from ._response import RESPONSE_POINTS, Response, response_of
from ._result import RESULT_SCHEMA, IdentificationResult, ParameterEstimate
from ._session_result import (
    SESSION_RESULT_SCHEMA,
    VERDICTS,
    CaptureInSession,
    DriftReport,
    LevelSlope,
    SessionResult,
    Standout,
)
from ._session_summary import (
    covariate_unit,
    percent,
    percent_interval,
    session_summary_text,
)
from ._summary import summary_line, summary_text

__all__ = [
    "ADEQUATE_EXCESS", "RESULT_SCHEMA", "IdentificationResult",
    "ParameterEstimate", "fit_percent", "format_fit",
    "normalized_compute_time", "RESPONSE_POINTS", "Response", "response_of", "NON_NEGATIVE",
    "result_problems", "ESTIMATE_COLUMNS", "estimate_rows", "summary_line", "summary_text",
    "require_pandas", "SESSION_RESULT_SCHEMA", "VERDICTS", "CaptureInSession", "DriftReport",
    "LevelSlope", "SessionResult", "Standout", "covariate_unit", "percent", "percent_interval",
    "session_summary_text",
]
