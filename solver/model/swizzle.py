"""Swizzles as Z3 bit-vector functions (written independently of spec.cute.swizzle).

CuTe Swizzle<B,M,S> (cute/swizzle.hpp): the B bits starting at bit M + max(0, S) are shifted down by
S (up by -S when S < 0) and XORed into x. B, M and S may be Python ints or bit-vectors (S signed),
so one query can range over every parameter at once.

The descriptor swizzle as the H100 applies it (rule readmap.swizzle_phase): bits [M, M+B) of the
linear byte address a are XORed with ((a >> 7) - base_offset) mod 2^B.
"""
from __future__ import annotations

import z3

from solver.model.bitvec import WIDTH, bv

# Descriptor swizzles: (B, M) with M + S = 7 (S = 7 - M); PTX 9.7.16.3.3, CUTLASS mma_traits_sm100.hpp
# (Layout_*_SW*_Atom: Swizzle<3,4,3> ..., 128B with 32B atomicity Swizzle<2,5,2>).
DESCRIPTOR_BITS = {"none": (0, 4), "32B": (1, 4), "64B": (2, 4), "128B": (3, 4), "128B_atom32B": (2, 5)}
LINE_SHIFT = 7


def _as_bv(value):
    return bv(value) if isinstance(value, int) else value


def cute_swizzle(x, B, M, S):
    """x ^ ((x & (((1 << B) - 1) << (M + max(0, S)))) >> S)."""
    if all(isinstance(v, int) for v in (B, M, S)):
        # Concrete parameters: fold the mask and the shift direction here.
        moved = x & bv(((1 << B) - 1) << (M + max(0, S)))
        return x ^ (z3.LShR(moved, S) if S >= 0 else moved << -S)
    B, M, S = _as_bv(B), _as_bv(M), _as_bv(S)
    one = bv(1)
    positive = z3.If(S > 0, S, bv(0))             # signed comparison: S is two's complement
    source_mask = ((one << B) - one) << (M + positive)
    moved = x & source_mask
    shifted = z3.If(S >= 0, z3.LShR(moved, S), moved << (bv(0) - S))
    return x ^ shifted


def descriptor_swizzle(address, swizzle: str, base_offset):
    """The byte address the hardware reads for linear address `address` (rule readmap.swizzle_phase)."""
    bits, base = DESCRIPTOR_BITS[swizzle]
    if bits == 0:
        return address
    phase = (z3.LShR(address, LINE_SHIFT) - _as_bv(base_offset)) & bv((1 << bits) - 1)
    return address ^ (phase << base)


def descriptor_swizzle_absolute(address, swizzle: str):
    """CuTe's Swizzle<B,M,7-M> on an absolute byte address (what CuTe smem pointers and TMA use)."""
    bits, base = DESCRIPTOR_BITS[swizzle]
    return cute_swizzle(address, bits, base, LINE_SHIFT - base)


def repeat_bytes(swizzle: str) -> int:
    bits, _ = DESCRIPTOR_BITS[swizzle]
    return 1 << (LINE_SHIFT + bits)


assert WIDTH >= 32
