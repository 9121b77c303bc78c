"""Injectivity of a strided layout by the mixed-radix criterion: the fast proof for layouts that are not
linear over GF(2) (a stride that is not a power of two, a padded row: `(128,128):(136,1)`), and for a
symbolic stride checked at each of its values without Z3.

The criterion (sufficient, not necessary). Take the leaves of extent > 1 and order them by |stride|. If
every |stride| exceeds the farthest the leaves before it can reach,

    |stride_m|  >  sum over k before m of (extent_k - 1) * |stride_k|,

then offset(c) = sum(c_k * stride_k) differs at any two coordinates. Proof: for c != c', let m be the last
leaf (in that order) where they differ; |(c_m - c'_m) * stride_m| >= |stride_m| exceeds
|sum over k before m of (c_k - c'_k) * stride_k|, so the difference of the offsets is not zero. It is how
a mixed-radix number has one value per digit string, and it covers every compact or padded layout
(`(M,K):(K+pad,1)` with pad >= 0). It does not cover layouts whose strides interleave without
overlapping, such as (3,2):(2,3) (offsets 0, 2, 4, 3, 5, 7): the caller then asks Z3, which is complete.

From offsets to addresses: address = swizzle(base + bytes * offset). Adding the base and multiplying by
bytes >= 1 keep distinct offsets distinct, and a CuTe swizzle x ^ ((x & mask) >> S) (S < 0: << -S) with
B == 0 or S != 0 is a bijection of the integers: each moved bit is XORed into a strictly lower (S > 0)
or strictly higher (S < 0) bit, a triangular map with ones on its diagonal, its own kind of inverse
(cute/swizzle.hpp; solver.gf2.layout uses the same fact). With S == 0 and B > 0 the swizzle clears bits
and the criterion does not apply.
"""
from __future__ import annotations

from typing import Optional

from solver.model.address_map import AddressMap


def offsets_apart(leaves) -> bool:
    """True when the mixed-radix criterion proves sum(c_k * stride_k) injective over the leaves'
    coordinates ((extent, stride) pairs of integers)."""
    reach = 0
    for extent, stride in sorted(((e, abs(d)) for e, d in leaves if e > 1), key=lambda leaf: leaf[1]):
        if stride <= reach:
            return False
        reach += (extent - 1) * stride
    return True


def swizzle_is_bijective(swizzle: Optional[tuple]) -> bool:
    return not swizzle or swizzle[0] == 0 or swizzle[2] != 0


def proves_injective(amap: AddressMap) -> bool:
    """True when the criterion proves that no two coordinates of `amap` share an address; False means
    only that it does not decide (the layout may still be injective)."""
    return amap.element_bytes >= 1 and swizzle_is_bijective(amap.swizzle) and offsets_apart(amap.leaves)
