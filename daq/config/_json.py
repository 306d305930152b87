"""JSON from outside, bounded before it is parsed: Python's parser recurses per level and
overflows the stack on a document nested a few thousand deep (a traceback, not an error)."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_DOCUMENT_NESTING", "MAX_NESTING", "json_nesting", "loads_bounded"]

#: the deepest JSON any command, plan or option of hilrig needs (a result nests 4)
MAX_NESTING = 32
#: the deepest message hilrig reads from others (a result's diagnostics nest about 6)
MAX_DOCUMENT_NESTING = 64
_STRINGS = re.compile(rb'"(?:\\.|[^"\\])*"')


def json_nesting(payload: bytes) -> int:
    """The deepest nesting of JSON arrays and objects (strings skipped), without parsing."""
    deepest = depth = 0
    for byte in _STRINGS.sub(b'""', payload):
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"]}":
            depth -= 1
    return deepest


def loads_bounded(payload: bytes | str, max_nesting: int = MAX_DOCUMENT_NESTING) -> Any:
    """json.loads, refusing (ValueError) a document nested deeper than max_nesting."""
    raw = payload.encode() if isinstance(payload, str) else payload
    if json_nesting(raw) > max_nesting:
        raise ValueError(f"JSON nested too deeply (more than {max_nesting} levels)")
    return json.loads(raw)
