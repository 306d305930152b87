"""The identification methods a config, a session plan or a command may name: one check,
against the registry's names, wherever a name is read."""

from __future__ import annotations

from hilrig.identify import METHOD_NAMES

__all__ = ["known_method"]


def known_method(value: str) -> str:
    """`value` if it names a method; otherwise ValueError listing the known ones."""
    if value not in METHOD_NAMES:
        raise ValueError(f"unknown method {value!r} (known: {', '.join(sorted(METHOD_NAMES))})")
    return value
