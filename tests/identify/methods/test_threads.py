"""Every identification runs with numpy's and scipy's BLAS on one thread.

Its own kernels take the cores (identify.model._threads); OpenBLAS's threads, spinning
between a fit's many small products, took them back and made every method slower. The
caller's own setting comes back afterwards: a notebook's large products keep theirs.
"""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from hilrig.identify import ChainRig, Record, identify, identify_chain
from hilrig.identify.methods import METHODS
from hilrig.identify.methods.estimator.chain import _result as chain_result
from hilrig.identify.methods.estimator.furuta import _result as furuta_result
from hilrig.identify.model import blas_on_one_thread


class _Seen(Exception):
    pass


def _blas_threads() -> set[int]:
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def _probe(seen: list[set[int]]):
    def probe(*args, **kwargs):
        seen.append(_blas_threads())
        raise _Seen

    return probe


def test_blas_is_on_one_thread_inside_and_as_the_caller_had_it_after():
    seen: list[set[int]] = []
    with threadpool_limits(limits=2, user_api="blas"):
        with pytest.raises(_Seen):
            blas_on_one_thread(_probe(seen))()
        after = _blas_threads()
    assert seen == [{1}] and after == {2}


def test_every_method_by_name_runs_with_blas_on_one_thread(table3_measurement, monkeypatch):
    seen: list[set[int]] = []
    for name in METHODS:
        monkeypatch.setitem(METHODS, name, _probe(seen))
        with threadpool_limits(limits=2, user_api="blas"), pytest.raises(_Seen):
            identify(table3_measurement, name)
    assert seen == [{1}] * len(METHODS)


def test_both_estimators_called_directly_run_with_blas_on_one_thread(table3_measurement,
                                                                    monkeypatch):
    seen: list[set[int]] = []
    monkeypatch.setattr(furuta_result, "ensure_compiled", _probe(seen))
    monkeypatch.setattr(chain_result, "ensure_compiled", _probe(seen))
    t = np.arange(20_000) / 1000.0
    swing = 1.0 * np.exp(-t / 10) * np.cos(2 * np.pi * t)
    record = Record(angles=swing[:, None], sample_index=np.arange(t.size), rate_hz=1000.0,
                    resolution_rad=2 * np.pi / 40_000)
    with threadpool_limits(limits=2, user_api="blas"):
        with pytest.raises(_Seen):
            furuta_result.identify_multiple_shooting(table3_measurement)
        with pytest.raises(_Seen):
            identify_chain(record, ChainRig(kind="single"))
    assert seen == [{1}, {1}]
