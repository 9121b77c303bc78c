"""A layout's address map (solver.model.cute_layout.AddressMap) as an affine map over GF(2), or the
reason it is not one.

Index bit j of a coordinate's 1-D index (leaves in colexicographic order, leaf 0's bits lowest; every
extent a power of two, so the index is the concatenation of the leaves' bits) adds the weight
bytes * stride * 2^t to the integer address. Integer addition is XOR exactly when no two of the added
values share a bit, for every subset: so the map is affine over GF(2) iff the non-zero weights are
pairwise bit-disjoint and disjoint from the base (a base that overlaps them makes the sum carry:
(2,2):(1,1) has weights 1 and 1, and 1 + 1 = 2 is not 1 XOR 1). A negative stride or base borrows.
The XOR swizzle is linear (a mask, a shift, an XOR), so it maps the columns and the base one by one:
swizzle(base XOR v) = swizzle(base) XOR swizzle(v), an affine map whose offset is swizzle(base).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Union

from solver.model.address_map import AddressMap


@dataclass(frozen=True)
class Affine:
    columns: tuple           # column j: the address bits index bit j flips
    offset: int              # the address of index 0
    mode_bits: tuple         # index bits per top-level mode, in order

    @property
    def bits(self) -> int:
        return len(self.columns)

    def __call__(self, index: int) -> int:
        value, j = self.offset, 0
        while index:
            if index & 1:
                value ^= self.columns[j]
            index >>= 1
            j += 1
        return value


def swizzle_bits(x: int, params: Optional[tuple]) -> int:
    """Sw<B,M,S>(x) on a non-negative int (the same formula as CuTe's; linear over GF(2))."""
    if not params or params[0] == 0:
        return x
    b, base, s = params
    moved = x & (((1 << b) - 1) << (base + max(0, s)))
    return x ^ (moved >> s if s >= 0 else moved << -s)


def linearize(m: AddressMap) -> Union[Affine, str]:
    """The affine map, or one line saying why the layout is not linear over GF(2)."""
    weights: List[int] = []
    mode_bits = []
    used = 0
    leaf = 0
    for mode in m.modes:
        count = 0
        for extent, stride in mode:
            if extent & (extent - 1):
                return f"extent {extent} of leaf {leaf} is not a power of two"
            if stride < 0:
                return f"stride {stride} of leaf {leaf} is negative (subtraction borrows)"
            for t in range(extent.bit_length() - 1):
                w = m.element_bytes * stride << t
                if w & used:
                    return (f"leaf {leaf} (stride {stride}) adds {w} where another coordinate bit adds "
                            f"bits {w & used:#x} too: the sum carries")
                used |= w
                weights.append(w)
                count += 1
            leaf += 1
        mode_bits.append(count)
    if m.base < 0:
        return f"base address {m.base} is negative"
    if m.base & used:
        return (f"base address {m.base:#x} shares bits {m.base & used:#x} with the layout's offsets: "
                "adding them carries")
    columns = tuple(swizzle_bits(w, m.swizzle) for w in weights)
    return Affine(columns, swizzle_bits(m.base, m.swizzle), tuple(mode_bits))


def power_of_two_log(n: int) -> Optional[int]:
    return n.bit_length() - 1 if n > 0 and not n & (n - 1) else None
