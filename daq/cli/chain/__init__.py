"""The chain rig kinds (single, nlink:N) on the command line: their part of simulate,
identify (with held-out validation and a given parameter set) and compare, and the
options only they take."""

from ._commands import CHAIN_COMMANDS, default_chain_params, given_ratios

__all__ = ["CHAIN_COMMANDS", "default_chain_params", "given_ratios"]
