"""A CuTe layout's address map as Z3 bit-vector terms (written independently of spec.cute; the tests
compare it with spec's evaluation).

The map is described by plain integers (AddressMap): the top-level modes, each a tuple of flat
(extent, stride) leaves in colexicographic order; the element size in bytes; the base (start address +
bytes x offset); and an optional XOR swizzle (B, M, S) on the result:

    address(c) = swizzle(base + bytes * sum(c_k * stride_k))
    swizzle(x) = x ^ ((x & (((1 << B) - 1) << (M + max(0, S)))) >> S)     (S < 0 shifts left)

A stride or the base may also be a Z3 term (a symbolic parameter, `prove --layout --param`); `width` is
then taken of the map at the parameters' largest magnitudes.

A 1-D index i < size splits into the leaves colexicographically: c_k = (i / (e_0 ... e_(k-1))) mod e_k.
Terms are signed two's-complement bit-vectors of a width chosen so that nothing can wrap (`width`).
"""
from __future__ import annotations

from typing import Optional

import z3

from solver.model.address_map import AddressMap  # noqa: F401  (re-exported)


def width(*maps: AddressMap) -> int:
    """Enough bits that no sum, product or swizzle of any of the maps wraps, plus a sign bit."""
    bits = 1
    for m in maps:
        bound = abs(m.base) + sum(m.element_bytes * (e - 1) * abs(d) for e, d in m.leaves) + m.element_bytes
        bits = max(bits, bound.bit_length(), m.size.bit_length())
        if m.swizzle:
            b, base, s = m.swizzle
            bits = max(bits, b + base + abs(s) + 1)
    return bits + 4


def leaf_coordinates(index, leaves: tuple, w: int) -> list:
    """The flat coordinates of a 1-D index (a w-bit term below the product of the extents)."""
    coordinates, prefix = [], 1
    for k, (extent, _) in enumerate(leaves):
        c = z3.UDiv(index, z3.BitVecVal(prefix, w)) if prefix > 1 else index
        if k < len(leaves) - 1:
            c = z3.URem(c, z3.BitVecVal(extent, w))
        coordinates.append(c)
        prefix *= extent
    return coordinates


def linear_offset(coordinates: list, leaves: tuple, w: int):
    """sum(c_k * stride_k) as a w-bit term."""
    total = z3.BitVecVal(0, w)
    for c, (_, stride) in zip(coordinates, leaves):
        if not isinstance(stride, int):          # a symbolic parameter: a w-bit term
            total = total + c * stride
        elif stride:
            total = total + c * z3.BitVecVal(stride, w)
    return total


def swizzle(x, params: Optional[tuple], w: int):
    if not params or params[0] == 0:
        return x
    b, base, s = params
    moved = x & z3.BitVecVal(((1 << b) - 1) << (base + max(0, s)), w)
    return x ^ (z3.LShR(moved, s) if s >= 0 else moved << -s)


def address_of_offset(m: AddressMap, offset, w: int):
    """swizzle(base + bytes * offset) for a w-bit element offset term."""
    base = z3.BitVecVal(m.base, w) if isinstance(m.base, int) else m.base     # or a symbolic term
    return swizzle(base + z3.BitVecVal(m.element_bytes, w) * offset, m.swizzle, w)


def address(m: AddressMap, index, w: int):
    """The address of the 1-D index `index` (a w-bit term)."""
    return address_of_offset(m, linear_offset(leaf_coordinates(index, m.leaves, w), m.leaves, w), w)


def mode_offset(m: AddressMap, mode: int, index, w: int):
    """The element offset contributed by top-level mode `mode` at its own 1-D index."""
    leaves = m.modes[mode]
    return linear_offset(leaf_coordinates(index, leaves, w), leaves, w)


def index_in(name: str, size: int, w: int):
    """(an index variable, the constraint 0 <= it < size)."""
    i = z3.BitVec(name, w)
    return i, z3.ULT(i, z3.BitVecVal(size, w))


def affine_address(columns: tuple, offset: int, index, w: int):
    """offset XOR (XOR of the columns of index's set bits): a layout given as GF(2) bases (Triton's
    LinearLayout) as a w-bit term."""
    total = z3.BitVecVal(offset, w)
    zero = z3.BitVecVal(0, w)
    for j, column in enumerate(columns):
        if column:
            total = total ^ z3.If(z3.Extract(j, j, index) == 1, z3.BitVecVal(column, w), zero)
    return total


def affine_width(columns: tuple, offset: int) -> int:
    spread = offset
    for column in columns:
        spread |= column
    return max(spread.bit_length(), len(columns) + 1) + 4
