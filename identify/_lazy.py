"""Exports loaded on first use (PEP 562), so that importing a package costs only what is used.

A command that reads a setting or lists the catalog needs the rig's parameter models, not
the compiled simulators and solvers behind them (numba and scipy.optimize are most of a
second to import). A package lists its exports by submodule and imports them, for type
checkers, under TYPE_CHECKING; at run time `lazy_exports` loads each on first access.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: Mapping[str, Sequence[str]]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(__getattr__, __dir__) for `package`, whose exports are {submodule: names}."""
    where = {name: module for module, names in exports.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # the next access is a plain lookup
        return value

    def __dir__() -> list[str]:
        return sorted(set(where) | set(vars(sys.modules[package])))

    return __getattr__, __dir__
