"""Fast path of solver/model/tma_swizzle.py: destination_chunk's If-chain built once per table, as a template.

Building the chain is most of the time of building a TMA swizzle term. tests/solver_tests/prove/test_tma_properties.py
(test_cached_destination_chunk_is_the_built_term) checks the term equal to destination_chunk's.
"""
from __future__ import annotations

import z3

from spec import fast
from solver.model import tma_swizzle

_TEMPLATES: dict = {}     # key (see destination_chunk) -> (template, row placeholder, chunk placeholder)


@fast.fast_version_of(tma_swizzle.destination_chunk)
def destination_chunk(table, row, chunk):
    """tma_swizzle.destination_chunk(table, row, chunk), the same Z3 term: the If-chain is made over two
    placeholder constants once per table and each call substitutes `row` and `chunk` into it (Z3 shares
    equal terms, so the result is the very term destination_chunk would build).

    The key holds the table's cells, the function destination_chunk as its module names it now, the sorts
    and the context: a template is never one built by another function or for another table."""
    function = tma_swizzle.destination_chunk
    cells = tuple(tuple(r) for r in table)
    key = (cells, function, tma_swizzle.NOWHERE, row.sort(), chunk.sort(), row.ctx)
    entry = _TEMPLATES.get(key)
    if entry is None:
        row0 = z3.Const("tma_swizzle.row", row.sort())
        chunk0 = z3.Const("tma_swizzle.chunk", chunk.sort())
        entry = _TEMPLATES[key] = (function(cells, row0, chunk0), row0, chunk0)
    template, row0, chunk0 = entry
    return z3.substitute(template, (row0, row), (chunk0, chunk))
