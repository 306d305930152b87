"""A result's response: measured and simulated angles thinned for a plot, spans kept apart."""

from __future__ import annotations

import numpy as np

from hilrig.identify.results import Response, response_of


def test_spans_are_thinned_by_one_stride_and_kept_apart_by_a_null_row():
    t1, t2 = np.arange(0, 3, 0.001), np.arange(3, 5, 0.001)  # 3000 and 2000 samples
    q1, q2 = np.c_[np.sin(t1), np.cos(t1)], np.c_[np.sin(t2), np.cos(t2)]
    r = response_of([(t1, q1, q1 + 1e-3), (t2, q2, q2)], ("arm", "pendulum"), max_points=500)
    assert isinstance(r, Response) and r.joints == ["arm", "pendulum"]
    gap = r.t_s.index(None)
    assert all(v is None for v in (r.measured[0][gap], r.simulated[1][gap]))
    assert r.t_s.count(None) == 1 and 500 <= len(r.t_s) <= 505  # stride 10, last rows kept
    assert r.t_s[0] == 0.0 and r.t_s[gap - 1] == 2.999 and r.t_s[-1] == 4.999
    assert r.t_s[1] == 0.01
    assert r.simulated[0][1] == round(np.sin(0.01) + 1e-3, 5)
    assert len({len(r.t_s), *map(len, r.measured), *map(len, r.simulated)}) == 1


def test_a_diverged_simulation_is_null_not_nan_in_the_json():
    t = np.arange(10.0)
    q = np.c_[t, t]
    sim = q.copy()
    sim[5:, 1] = np.nan
    r = response_of([(t, q, sim)], ("theta1", "theta2"))
    assert r.simulated[1][5:] == [None] * 5 and r.simulated[0][5] == 5.0
    assert "NaN" not in r.model_dump_json()
