"""Bit-vector helpers for the Z3 model.

Every quantity of the model is an unsigned bit-vector of WIDTH bits. WIDTH is chosen so that no
intermediate can wrap over the parameter ranges the properties state: the largest address the read
map forms is below 2^26 (start < 2^18, plus up to 31 row groups x SBO < 2^18, plus up to 16 K atoms x
LBO < 2^18), far under 2^WIDTH. `Arith` records, for every addition and multiplication it builds, the
condition that it does not overflow; the property `model.no_wrap` proves the conjunction of those
conditions over the whole domain, so the claim is checked, not assumed.
"""
from __future__ import annotations

import z3

WIDTH = 32


def bv(value: int, width: int = WIDTH) -> z3.BitVecRef:
    return z3.BitVecVal(value, width)


def var(name: str, width: int = WIDTH) -> z3.BitVecRef:
    return z3.BitVec(name, width)


def narrow(name: str, bits: int) -> z3.BitVecRef:
    """A `bits`-bit unknown, zero-extended to WIDTH. Its range is structural rather than an
    assumption, which keeps multipliers small when Z3 bit-blasts them (a 5-bit row-group index
    times an 18-bit stride, not 32 x 32)."""
    return z3.ZeroExt(WIDTH - bits, z3.BitVec(name, bits))


def encoded_bytes(name: str) -> z3.BitVecRef:
    """A descriptor byte field: its 14-bit encoding << 4, i.e. any multiple of 16 below 2^18."""
    return narrow(name, 14) << 4


class Arith:
    """Builds unsigned sums and products and remembers their no-overflow conditions."""

    def __init__(self):
        self.no_overflow: list = []

    def add(self, *terms):
        total = terms[0]
        for term in terms[1:]:
            self.no_overflow.append(z3.BVAddNoOverflow(total, term, False))
            total = total + term
        return total

    def mul(self, a, b):
        self.no_overflow.append(z3.BVMulNoOverflow(a, b, False))
        return a * b


def in_range(x, lo: int, hi: int):
    """lo <= x < hi, unsigned."""
    return z3.And(z3.UGE(x, lo), z3.ULT(x, hi))


def multiple_of(x, n: int):
    return z3.URem(x, n) == 0


def evaluate(expr, assignment: dict) -> int:
    """Value of `expr` when its free bit-vector constants, by name, take the given integer values."""
    substitutions = []
    key = expr.get_id()
    if key not in _CONSTANTS:
        _CONSTANTS[key] = (expr, free_constants(expr))    # keep expr alive so its id stays unique
    for constant in _CONSTANTS[key][1]:
        name = constant.decl().name()
        if name in assignment:
            substitutions.append((constant, z3.BitVecVal(assignment[name], constant.size())))
    return z3.simplify(z3.substitute(expr, *substitutions)).as_long()


_CONSTANTS: dict = {}


def free_constants(expr) -> list:
    """The uninterpreted constants (the variables) a Z3 term reads, each once, depth first."""
    found, seen, stack = [], set(), [expr]
    while stack:
        e = stack.pop()
        if e.get_id() in seen:
            continue
        seen.add(e.get_id())
        if z3.is_const(e) and e.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            found.append(e)
        stack.extend(e.children())
    return found
