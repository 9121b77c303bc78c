"""Fast path of spec/tma/place.py: a box placed a row at a time."""
from __future__ import annotations

from spec import fast
from spec.tma import place as tma_place
from spec.tma import swizzle as tma_swizzle


@fast.fast_version_of(tma_place.place)
def place_rows(box: tma_place.Box) -> list:
    """`place`, a box row at a time (spec.tma.swizzle.swizzle_byte_range: one table lookup per element):
    the same list, the same refusals (tests/spec_tests/fast/test_fast_paths.py checks the two equal)."""
    rows, per_row, pitch = tma_place.row_layout(box)
    placed = []
    for row in range(rows):
        placed += tma_swizzle.swizzle_byte_range(box.swizzle, box.smem_address + row * pitch, per_row,
                                                 box.element_bytes)
    return placed
