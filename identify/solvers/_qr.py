"""The triangular factor of a QR decomposition, typed as what it is."""

from __future__ import annotations

from typing import cast

import numpy as np


def qr_r(a: np.ndarray) -> np.ndarray:
    """R of a = Q R, without forming Q: numpy.linalg.qr(a, mode="r").

    numpy's stubs type every qr() result as the (Q, R) pair; with mode="r" it is R alone.
    """
    return cast(np.ndarray, np.linalg.qr(a, mode="r"))
