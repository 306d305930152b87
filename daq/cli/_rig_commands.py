"""What the offline commands (simulate, identify, compare) ask of a rig kind.

Each of the estimator's rig kinds (identify.model.rig_family: furuta, chain) supplies its
part of the three commands as one RigCommands, plus how the `[rig]` kind of the config
fills the options the command line left out; the commands resolve the kind
(daq.cli._kinds.rig_family_of) and call its part, never branching on a kind's name.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from ..acquisition import Capture
from ..config import RigKindConfig, Settings

__all__ = ["RigCommands", "as_given"]


def as_given(args: argparse.Namespace, _config: RigKindConfig) -> argparse.Namespace:
    """A kind whose config adds nothing to the command line's options."""
    return args


@dataclass(frozen=True)
class RigCommands:
    """One rig kind's part of the offline commands."""

    #: write a simulated record of the kind (`--out`) as the settings and options say
    simulate: Callable[[argparse.Namespace, Settings], int]
    #: identify a file (or a capture already read, which recorded its kind)
    identify: Callable[[argparse.Namespace, Capture | None], int]
    #: compare the methods that apply to the kind on a file
    compare: Callable[[argparse.Namespace], int]
    #: the options as the config's [rig] kind fills them where --rig was not given
    from_config: Callable[[argparse.Namespace, RigKindConfig], argparse.Namespace] = as_given
    #: identify several files of one rig and put them together (--pooled); None: the kind
    #: has no pooled identification yet
    identify_pooled: Callable[[argparse.Namespace, Capture | None], int] | None = None
