"""How a session's trends read in words: an interval always shows its width."""

from __future__ import annotations

from hilrig.identify.results import covariate_unit, percent, percent_interval


def test_a_narrow_interval_is_printed_to_the_digits_that_tell_its_bounds_apart():
    # two significant figures alone printed +1.2 [+1.2, +1.2]
    assert percent_interval(0.011907, (0.011778, 0.012035), "%/h") == \
        "+1.19 %/h [+1.18, +1.20]"


def test_a_wide_interval_keeps_a_decimal_below_ten_percent_and_none_above():
    assert percent_interval(0.012, (-0.008, 0.032)) == "+1.2 % [-0.8, +3.2]"
    assert percent_interval(0.27, (0.198, 0.348)) == "+27 % [+20, +35]"


def test_a_degenerate_interval_falls_back_to_two_significant_figures():
    assert percent_interval(0.012, (0.012, 0.012)) == "+1.2 % [+1.2, +1.2]"
    assert percent_interval(0.012, (float("-inf"), float("inf"))) == "+1.2 % [-inf, +inf]"


def test_a_trend_in_session_time_is_per_hour_and_in_a_covariate_per_its_unit():
    assert covariate_unit("hours") == "h"
    assert covariate_unit("temperature_c") == "temperature_c"
    assert percent(0.0278) == "+2.8" and percent(0.27) == "+27"
