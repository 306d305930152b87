"""Every method on one capture, side by side: the seed's Table V, a parameter table, figures;
and two methods across many captures (compare_across_captures).

The top layer of identify. matplotlib is imported only by write_figures, when called,
so importing identify (or this subpackage) never loads it.
"""

from ._across_captures import (
    ParameterShift,
    compare_across_captures,
    plot_shifts,
    shift_table,
)
from ._chain_compare import ChainRow, chain_table, compare_chain, plot_chain_compare
from ._compare import (
    SEED_TABLE_V_FIT,
    SEED_TABLE_V_SECONDS,
    compare_methods,
    parameter_table,
    table_v,
)
from ._held_out import plot_held_out
from ._plots import OFF_SCALE_FACTOR, residual_limit, summary_figure, write_figures

__all__ = [
    "ParameterShift", "compare_across_captures", "plot_shifts", "shift_table",
    "ChainRow", "chain_table", "compare_chain", "plot_chain_compare", "plot_held_out",
    "SEED_TABLE_V_FIT", "SEED_TABLE_V_SECONDS", "compare_methods", "parameter_table", "table_v",
    "summary_figure", "write_figures", "OFF_SCALE_FACTOR", "residual_limit",
]
