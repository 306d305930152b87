"""One-line error text from validation errors whose field names come from the user.

A TOML key, a JSON field or a command payload can hold any character, newlines
included; every error this package prints or replies with must still be one line.
"""
from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError


def one_line(text: str) -> str:
    """`text` with control characters escaped (``\\n`` -> the two characters ``\\n``)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def where(loc: Sequence[int | str], default: str) -> str:
    """A pydantic error location as ``a.b.0``; unusual names quoted, `default` if empty."""
    parts = [str(p) if str(p).isidentifier() or str(p).isdigit() else one_line(repr(str(p)))
             for p in loc]
    return ".".join(parts) or default


def first_error(exc: ValidationError, default: str) -> str:
    """``<where>: <message>`` of the first error, one line."""
    err = exc.errors()[0]
    return one_line(f"{where(err['loc'], default)}: {err['msg'].removeprefix('Value error, ')}")
