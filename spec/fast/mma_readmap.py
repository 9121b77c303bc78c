"""Fast paths of spec/mma/readmap.py: the per-dimension parts of a read a unit at a time, the hardware
read swizzle of a row with its formula inlined, and the first misread element found row group first."""
from __future__ import annotations

from typing import Optional

from spec import fast
from spec.cute.swizzle import DESCRIPTOR_SWIZZLES, pattern_rows
from spec.mma import dtypes
from spec.mma import readmap


@fast.fast_version_of(readmap.mn_parts_by_element)
def mn_parts(op: readmap.Operand) -> list:
    """[mn_part(op, mn) for mn < op.mn], a unit at a time: mn_part(op, u*q + i) = mn_part(op, u*q) +
    mn_part(op, i) for i < u, the unit u being a row group (8 rows, K-major) or the T*W/16 elements of
    one swizzle row (MN-major; a chunk with no swizzle). tests/spec_tests/fast/test_desc_fast.py checks the two equal."""
    unit = 8 if op.major == "K" else op.elements_per_chunk * readmap._row_bytes(op.desc.swizzle) // readmap.CHUNK
    within = [readmap.mn_part(op, i) for i in range(min(unit, op.mn))]
    return [readmap.mn_part(op, q) + w for q in range(0, op.mn, unit) for w in within][:op.mn]


@fast.fast_version_of(readmap.k_parts_by_element)
def k_parts(op: readmap.Operand) -> list:
    """[k_part(op, k) for k < op.k], a K chunk at a time for K-major operands: k_part(op, T*q + i) is
    k_part(op, T*q) moved by element i's byte in its chunk. tests/spec_tests/fast/test_desc_fast.py checks the two equal."""
    if op.major == "MN":
        return [readmap.k_part(op, k) for k in range(op.k)]
    within = [dtypes.byte_in_chunk(op.dtype, op.kind, i) for i in range(op.elements_per_chunk)]
    return [(origin, offset + byte) for origin, offset in (readmap.k_part(op, q) for q in range(0, op.k, len(within)))
            for byte in within][:op.k]


@fast.fast_version_of(readmap.swizzle_row_by_element)
def swizzle_row(op: readmap.Operand, base: int, offsets: list) -> list:
    """swizzle_row_by_element with the hardware phase's formula inlined, as read_addresses computes it.
    tests/spec_tests/fast/test_desc_fast.py checks the two equal."""
    swizzle, base_offset = op.desc.swizzle, op.desc.base_offset
    mask, shift = pattern_rows(swizzle) - 1, DESCRIPTOR_SWIZZLES[swizzle].base
    return [(a := base + o) ^ ((((a >> 7) - base_offset) & mask) << shift) for o in offsets]


@fast.fast_version_of(readmap.first_misread_by_element)
def first_misread(op: readmap.Operand, expected, model: str = "hardware") -> Optional[tuple]:
    """The first (mn, k), in row order, where read_addresses(op, model)[mn][k] != expected[mn][k]; None
    when every element is read where expected says. From the same per-dimension parts (mn_part, k_part,
    the swizzle) as read_addresses, the first 8 rows (one row group) before the others: a wrong
    candidate usually shows there (tests/spec_tests/fast/test_fast_paths.py checks it against first_misread_by_element)."""
    along_k = [readmap.k_part(op, k) for k in range(op.k)]
    swizzle, base_offset = op.desc.swizzle, op.desc.base_offset
    rows, shift = pattern_rows(swizzle), DESCRIPTOR_SWIZZLES[swizzle].base
    mask = rows - 1
    count = min(op.mn, len(expected))
    for low, high in ((0, min(8, count)), (min(8, count), count)):
        along_mn = [readmap.mn_part(op, mn) for mn in range(low, high)]
        if model == "hardware":
            read = [[(a := origin + m + offset) ^ ((((a >> 7) - base_offset) & mask) << shift)
                     for origin, offset in along_k] for m in along_mn]
        else:
            read = [[readmap.apply_swizzle(swizzle, origin, origin + m + offset, base_offset, model)
                     for origin, offset in along_k] for m in along_mn]
        if read != expected[low:high]:
            for mn, (row, wanted) in enumerate(zip(read, expected[low:high]), low):
                k = next((k for k, (a, b) in enumerate(zip(row, wanted)) if a != b), None)
                if k is not None:
                    return mn, k
    return None
