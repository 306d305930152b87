"""JSON from outside, bounded before it is parsed: Python's parser recurses per level and
overflows the stack on a document nested a few thousand deep (a traceback, not an error)."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_DOCUMENT_BYTES", "MAX_DOCUMENT_NESTING", "MAX_NESTING", "json_nesting",
           "loads_bounded"]

#: the deepest JSON any command, plan or option of hilrig needs (a result nests 4)
MAX_NESTING = 32
#: the deepest message hilrig reads from others (a result's diagnostics nest about 6)
MAX_DOCUMENT_NESTING = 64
#: the largest: a result with its response is about 100 kB (the rig takes at most 1 MiB
#: of a worker's, mqtt/_jobs.py)
MAX_DOCUMENT_BYTES = 4 << 20
#: a string (skipped whole: brackets in it do not nest), or a bracket
_TOKENS = re.compile(rb'"(?:\\.|[^"\\])*"|[\[\]{}]')


def json_nesting(payload: bytes) -> int:
    """The deepest nesting of JSON arrays and objects (strings skipped), without parsing.

    One token at a time: the memory it takes does not grow with the payload (a copy with
    its strings replaced took about 117 bytes per byte of a 20 MB document).
    """
    deepest = depth = 0
    for token in _TOKENS.finditer(payload):
        first = payload[token.start()]
        if first in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif first in b"]}":
            depth -= 1
    return deepest


def loads_bounded(payload: bytes | str, max_nesting: int = MAX_DOCUMENT_NESTING,
                  max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """json.loads, refusing (ValueError) a document larger than max_bytes or nested deeper
    than max_nesting, before parsing it."""
    raw = payload.encode() if isinstance(payload, str) else payload
    if len(raw) > max_bytes:
        raise ValueError(f"a JSON document of {len(raw)} bytes, more than {max_bytes}")
    if json_nesting(raw) > max_nesting:
        raise ValueError(f"JSON nested too deeply (more than {max_nesting} levels)")
    return json.loads(raw)
