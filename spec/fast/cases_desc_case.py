"""Fast path of spec/cases/desc_case.py: the first misread element found by rows or by columns, each
class of lines (the same residues modulo the swizzles' period) computed once, the differences of a class
kept between cases (_line_differences)."""
from __future__ import annotations

import operator
from functools import lru_cache
from typing import Optional

from spec import fast
from spec.cases import desc_case
from spec.cute.layout import flatten
from spec.cute.swizzle import pattern_rows
from spec.fast import mma_readmap
from spec.mma import dtypes
from spec.mma import readmap


def _mode_offsets(layout, mode: int, count: int) -> list:
    """L restricted to one top-level mode at indices 0 .. count-1 (colexicographic, PTX / CuTe order: the
    first digit fastest, the last one taking the rest, rule layout.colexicographic): the offsets of the
    digits before the last, then those repeated at each step of the last digit."""
    shape, stride = flatten(layout.shape[mode]), flatten(layout.stride[mode])
    if any(not isinstance(d, int) for d in stride):
        return [layout(*((i, 0) if mode == 0 else (0, i))) for i in range(count)]
    offsets = [0]
    for size, step in zip(shape[:-1], stride[:-1]):
        # only indices below `count` are asked for: once the digits so far cover them, the higher digits
        # of every index asked for are 0 (a mode of 2^30 inner elements read 64 rows at a time)
        needed = -(-count // len(offsets))
        offsets = [o + i * step for i in range(min(size, needed)) for o in offsets]
        if len(offsets) >= count:
            return offsets[:count]
    last = stride[-1]
    return [o + i * last for i in range(-(-count // len(offsets))) for o in offsets][:count]


@lru_cache(maxsize=256)
def _line_differences(values_from: tuple) -> dict:
    """The memo of first_misread's line differences for the lines whose values are computed from
    `values_from` (a line's difference is a function of these and of its key): initially empty."""
    return {}


@fast.fast_version_of(desc_case.first_misread_by_element)
def first_misread(c: desc_case.DescCase, by: Optional[str] = None) -> Optional[dict]:
    """first_misread_by_element, by rows or by columns (tests/spec_tests/fast/test_desc_fast.py checks the two equal).

    Both sides are sums of an MN part and a K part under a swizzle:
      read(mn, k) = sw_read(A[mn] + B[k])                  (spec.mma.readmap: mn_part, k_part, swizzle_row)
      held(mn, k) = sw_tile(start + byte(R[mn] + S[k]))    (R, S: the layout's two modes, in elements)
    Each swizzle moves only bits below its period (a power of two), so sw(x + j*P) = sw(x) + j*P for any
    multiple P of both periods, and byte(T*q + z) = 16*q + byte(z). A row mn therefore matches exactly
    when, with X = start + 16*(R[mn] div T),
      sw_read(A[mn] mod P + B[k]) - sw_tile(X mod P + byte(R[mn] mod T + S[k])) = (X div P - A[mn] div P) * P
    for every k, and the left side depends on the row only through its key (A[mn] mod P, X mod P,
    R[mn] mod T): the rows of a tile repeat a few keys, each computed once. The same holds of columns
    with the roles of (A, R) and (B, S) exchanged; `by` ("rows" or "columns") says which way to go, by
    default the one with fewer elements to compute."""
    op = c.operand
    A = mma_readmap.mn_parts(op)
    B = [origin + offset for origin, offset in mma_readmap.k_parts(op)]
    R = [c.layout.offset + o for o in _mode_offsets(c.layout.layout, 0, op.mn)]
    S = _mode_offsets(c.layout.layout, 1, op.k)
    T = op.elements_per_chunk
    in_chunk = [dtypes.byte_in_chunk(op.dtype, op.kind, i) for i in range(T)]
    tile_swizzle = c.layout.swizzle
    tile_mask, tile_shift = tile_swizzle.yyy_mask, tile_swizzle.shift
    period = max(tile_swizzle.period, readmap.LINE * pattern_rows(op.desc.swizzle))

    def keys(A, R) -> tuple:
        """X of each line, and its key (A mod P, X mod P, R mod T)."""
        X = [c.start_address + 16 * (r // T) for r in R]
        return X, [(a % period, x % period, r % T) for a, x, r in zip(A, X, R)]

    def values(key: tuple, B, in_line: list) -> tuple:
        """(sw_read(A mod P + B[j]) for each j, sw_tile(X mod P + in_line[j]) for each j) of a line with
        this key, in_line[j] being byte(R mod T + S[j])."""
        a_low, x_low, _ = key
        if tile_shift >= 0:         # sw_tile(h) = h ^ ((h & yyy) >> S) (spec.cute.swizzle.Swizzle)
            held = [(h := x_low + byte) ^ ((h & tile_mask) >> tile_shift) for byte in in_line]
        else:
            held = [tile_swizzle(x_low + byte) for byte in in_line]
        return mma_readmap.swizzle_row(op, a_low, B), held

    def misread_lines(A, X, line_keys, B, S):
        """(i, j, read, held) of the first j where line i differs, for each such line i in order."""
        in_lines = {}        # R mod T -> [byte(R mod T + S[j]) for each j]
        # key -> the one difference read - held of its lines for B moved by a multiple of P (which moves
        # sw_read(A mod P + B[j]) by as much), or None; shared by the cases whose lines are computed from
        # the same values (the same moved B, S, swizzles and bytes in a chunk)
        moved = B[0] // period * period if B else 0
        B_moved = [b - moved for b in B]
        differences = _line_differences((op.desc.swizzle, op.desc.base_offset, tile_swizzle, tuple(in_chunk),
                                         tuple(B_moved), tuple(S)))

        def in_line(r: int) -> list:
            if r not in in_lines:
                in_lines[r] = [((z := r + s) // T) * 16 + in_chunk[z % T] for s in S]
            return in_lines[r]

        for i, (a, x, key) in enumerate(zip(A, X, line_keys)):
            if key not in differences:
                found = set(map(operator.sub, *values(key, B_moved, in_line(key[2]))))
                differences[key] = found.pop() if len(found) == 1 else None
            wanted = (x // period - a // period) * period
            if differences[key] != wanted - moved:
                read, held = values(key, B, in_line(key[2]))
                j = next(j for j, (u, v) in enumerate(zip(read, held)) if u - v != wanted)
                yield i, j, a - key[0] + read[j], x - key[1] + held[j]

    (X, row_keys), (Y, column_keys) = keys(A, R), keys(B, S)
    if by is None:
        by = "rows" if len(set(row_keys)) * op.k <= len(set(column_keys)) * op.mn else "columns"
    if by == "rows":
        mn, k, read, held = next(misread_lines(A, X, row_keys, B, S), (None,) * 4)
    else:      # each column's first misread row; the first in row order is the least (mn, k)
        k, mn, read, held = min(misread_lines(B, Y, column_keys, A, R), key=lambda m: (m[1], m[0]),
                                default=(None,) * 4)
    return None if mn is None else {"element": {"mn": mn, "k": k}, "read_from": read, "held_at": held}
