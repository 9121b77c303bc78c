"""first_misread's memo of line differences (spec.fast.cases_desc_case._line_differences), shared between
cases whose lines are computed from the same values up to a move of the descriptor's K parts by a
multiple of the swizzles' period: against first_misread_by_element (the definition) on cases that
differ from each other only there (descriptor and tile moved together, or the descriptor alone, by
multiples of the period and by less), with the memo warm from the other cases and cold."""
from __future__ import annotations

import pytest

from spec.cases import desc_case
from spec.fast import cases_desc_case
from spec.mma import descriptor
from spec.rule import SpecError
from solver.fuzz import engine

MOVES = (0, 16, 128, 1024, 2048, 4096, 8192 + 128, 3 * 1024, -1024)


def _moved(case: dict, arch: str, move: int, tile_move: int):
    """The case with the descriptor's start address moved by `move` bytes and the tile's by `tile_move`;
    None when they do not fit the field."""
    word = int(case["descriptor"], 16)
    start = descriptor.decode(arch, word).start_address + move
    if start < 0 or case["start_address"] + tile_move < 0 or start >> 4 >= 1 << descriptor.START.width:
        return None
    moved = dict(case, descriptor=hex(descriptor.START.put(start >> 4) | (word & ~descriptor.START.put((1 << descriptor.START.width) - 1))),
                 start_address=case["start_address"] + tile_move)
    try:
        return desc_case.parse_case(moved, arch)
    except SpecError:
        return None


@pytest.mark.parametrize("arch", ["sm90", "sm100", "sm103"])
def test_first_misread_with_the_memo_shared_by_moved_cases(arch):
    misread = shared = 0
    for record in engine.generate("desc", arch, frozenset(), 12, 11, engine.Stats()):
        cases = [c for c in (_moved(record["case"], arch, m, t) for m in MOVES for t in (m, 0)) if c is not None]
        references = [desc_case.first_misread_by_element(c) for c in cases]    # the definition, once a case
        for c, reference in list(zip(cases, references)) + list(zip(cases, references))[::-1]:
            for by in (None, "rows", "columns"):   # warm from the other moves, then in the other order
                assert cases_desc_case.first_misread(c, by=by) == reference
                misread += reference is not None
        before = cases_desc_case._line_differences.cache_info().hits
        cases_desc_case._line_differences.cache_clear()
        for c, reference in zip(cases, references):      # cold
            assert desc_case.first_misread(c) == reference
        shared += before > 0
    assert misread > 0 and shared > 0
