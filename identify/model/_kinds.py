"""Rig kinds: `furuta` (the tilted Furuta pendulum of model.md), `single` (one free joint
swinging in a plane tilted from the vertical: a plain pendulum, a Furuta rig with a joint
clamped) or `nlink:N` (seed 002's n-link pendulum with its cart fixed, N = 1-3), and which
of the estimator's models identifies each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

RIG_KINDS = ("furuta", "single", "nlink:1", "nlink:2", "nlink:3")


def parse_rig_kind(text: str) -> tuple[str, int]:
    """'furuta' -> ('furuta', 2), 'single' -> ('single', 1), 'nlink:N' -> ('nlink', N)."""
    t = text.strip().lower()
    if t == "furuta":
        return "furuta", 2
    if t == "single":
        return "single", 1
    if t.startswith("nlink:") and t[6:].isdigit() and 1 <= int(t[6:]) <= 3:
        return "nlink", int(t[6:])
    raise ValueError(f"rig kind {text!r}: expected furuta, single or nlink:N with N = 1-3")


#: which of the estimator's rig kinds identifies each kind name: the Furuta rig's own
#: model (identify.methods.estimator.furuta), or a chain of links (estimator.chain)
RIG_FAMILIES: Mapping[str, Literal["furuta", "chain"]] = {
    "furuta": "furuta", "single": "chain", "nlink": "chain"}


def rig_family(text: str) -> Literal["furuta", "chain"]:
    """The estimator's rig kind for the rig `text` names: 'furuta' or 'chain'."""
    return RIG_FAMILIES[parse_rig_kind(text)[0]]


__all__ = ["RIG_FAMILIES", "RIG_KINDS", "parse_rig_kind", "rig_family"]
