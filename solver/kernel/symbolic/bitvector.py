"""What the integer instructions compute, as Z3 bit-vector terms (PTX ISA 9.0, 9.7).

The third meaning of the same instructions, written apart from the concrete one (concrete/semantics.py,
on ints) and the partly-known-words one (semantics.py): a register holds a term of its declared width, so
an input that is not known (a kernel parameter, a value loaded from memory) is a variable and what is
computed from it is a formula. bounds.py asks Z3 which values such a formula can take. The three are
checked against each other on random operands (tests/solver_tests/kernel/test_kernel_bitvector.py).

Each function takes the instruction and `read(operand, width) -> BitVecRef` and returns
{register: term} for what it writes, or None when the instruction is not modelled here: its destinations
are then fresh variables (any value: less known, never wrong).
"""
from __future__ import annotations

import z3

from solver.kernel.frontend.instruction import INTEGER_TYPES, TYPE_BITS, Instruction, packing, registers_in


def _integer(ins: Instruction) -> bool:
    return bool(ins.types()) and all(t in INTEGER_TYPES for t in ins.types())


def _signed(ins: Instruction) -> bool:
    return ins.types()[-1].startswith("s")


def widen(term, width: int, signed: bool = False):
    """The term sign- or zero-extended (or cut) to `width` bits; zero-extended, as a register is read
    wider than it is declared, unless `signed`."""
    have = term.size()
    if have == width:
        return term
    if have > width:
        return z3.Extract(width - 1, 0, term)
    return z3.SignExt(width - have, term) if signed else z3.ZeroExt(width - have, term)


# 9.7.1 integer arithmetic ---------------------------------------------------------------------------------
def add(ins, read):
    """9.7.1.1 add, 9.7.1.2 sub: modulo 2^width (.sat and .cc not modelled)."""
    if not _integer(ins) or ins.has("sat") or ins.has("cc"):
        return None
    a, b = read(ins.operands[1], ins.width), read(ins.operands[2], ins.width)
    return {ins.operands[0]: a - b if ins.base == "sub" else a + b}


def _product(ins, a, b):
    """9.7.1.3: the 2w-bit product of a and b (signed or not); .lo keeps its low half, .hi its high half,
    .wide all of it."""
    w, signed = ins.width, _signed(ins)
    full = widen(a, 2 * w, signed) * widen(b, 2 * w, signed)
    if ins.has("hi"):
        return z3.Extract(2 * w - 1, w, full)
    return full if ins.has("wide") else z3.Extract(w - 1, 0, full)


def mul(ins, read):
    if not _integer(ins):
        return None
    return {ins.operands[0]: _product(ins, read(ins.operands[1], ins.width), read(ins.operands[2], ins.width))}


def mad(ins, read):
    """9.7.1.4 mad: the kept part of a*b plus c (c is 2w bits wide for .wide)."""
    if not _integer(ins) or ins.has("sat") or ins.has("cc"):
        return None
    part = _product(ins, read(ins.operands[1], ins.width), read(ins.operands[2], ins.width))
    return {ins.operands[0]: part + read(ins.operands[3], part.size())}


def div_rem(ins, read, fresh):
    """9.7.1.6 div, 9.7.1.7 rem: truncated towards zero when signed (Z3's bvsdiv and bvsrem, SMT-LIB); a
    divisor of 0 leaves the result unspecified (any value)."""
    if not _integer(ins):
        return None
    a, b = read(ins.operands[1], ins.width), read(ins.operands[2], ins.width)
    if ins.base == "div":
        result = a / b if _signed(ins) else z3.UDiv(a, b)
    else:
        result = z3.SRem(a, b) if _signed(ins) else z3.URem(a, b)
    return {ins.operands[0]: z3.If(b == 0, fresh(ins.width), result)}


def min_max(ins, read):
    """9.7.1.10 min, 9.7.1.11 max (.relu not modelled)."""
    if not _integer(ins) or ins.has("relu"):
        return None
    a, b = read(ins.operands[1], ins.width), read(ins.operands[2], ins.width)
    less = a < b if _signed(ins) else z3.ULT(a, b)
    return {ins.operands[0]: z3.If(less, a, b) if ins.base == "min" else z3.If(less, b, a)}


def neg_abs(ins, read):
    """9.7.1.8 abs, 9.7.1.9 neg (two's complement: abs of the most negative value is itself)."""
    if not _integer(ins):
        return None
    a = read(ins.operands[1], ins.width)
    return {ins.operands[0]: -a if ins.base == "neg" else z3.If(a < 0, -a, a)}


def bfe(ins, read):
    """9.7.1.17 bfe d, a, b, c, for a constant position b and length c only (their low 8 bits)."""
    w = ins.width
    position, length = z3.simplify(read(ins.operands[2], 32)), z3.simplify(read(ins.operands[3], 32))
    if not (z3.is_bv_value(position) and z3.is_bv_value(length)):
        return None
    position, length = position.as_long() & 0xFF, length.as_long() & 0xFF
    a = read(ins.operands[1], w)
    if length == 0:
        return {ins.operands[0]: z3.BitVecVal(0, w)}
    start = min(position, w)
    end = min(start + length, w)          # the field's bits [start, end)
    if end <= start:
        field = z3.BitVecVal(0, w) if not _signed(ins) else z3.If(z3.Extract(w - 1, w - 1, a) == 1,
                                                                     z3.BitVecVal(-1, w), z3.BitVecVal(0, w))
        return {ins.operands[0]: field}
    bits = z3.Extract(end - 1, start, a)
    if _signed(ins):                      # the sign is bit min(position + length - 1, w - 1) of a
        sign = z3.Extract(min(position + length - 1, w - 1), min(position + length - 1, w - 1), a)
        fill = z3.If(sign == 1, z3.BitVecVal(-1, w - (end - start)), z3.BitVecVal(0, w - (end - start))) \
            if end - start < w else None
        return {ins.operands[0]: bits if fill is None else z3.Concat(fill, bits)}
    return {ins.operands[0]: widen(bits, w, False)}


# 9.7.8 logic and shift -------------------------------------------------------------------------------------
def logic(ins, read):
    """9.7.8.1 and, or, xor, 9.7.8.2 not, 9.7.8.3 cnot."""
    w = ins.width
    a = read(ins.operands[1], w)
    if ins.base == "not":
        return {ins.operands[0]: ~a}
    if ins.base == "cnot":
        return {ins.operands[0]: z3.If(a == 0, z3.BitVecVal(1, w), z3.BitVecVal(0, w))}
    b = read(ins.operands[2], w)
    return {ins.operands[0]: {"and": a & b, "or": a | b, "xor": a ^ b}[ins.base]}


def shift(ins, read):
    """9.7.8.7 shl, 9.7.8.8 shr: the amount is unsigned 32-bit; past the width, shl and shr.u give 0 and
    shr.s the sign (as SMT-LIB's bvshl, bvlshr, bvashr do for an amount of at least the width)."""
    w = ins.width
    a, amount = read(ins.operands[1], w), read(ins.operands[2], 32)
    if w >= 32:
        n = widen(amount, w, False)
    else:
        n = z3.If(z3.UGE(amount, w), z3.BitVecVal(w, w), z3.Extract(w - 1, 0, amount))
    if ins.base == "shl":
        return {ins.operands[0]: a << n}
    return {ins.operands[0]: a >> n if _signed(ins) else z3.LShR(a, n)}


# 9.7.9 data movement and conversion ------------------------------------------------------------------------
def mov(ins, read, width_of):
    """9.7.9.6 mov, and packing (9.7.9.10): mov.b64 d, {lo, hi} / mov.b64 {lo, hi}, d, first part lowest."""
    form = packing(ins, width_of)
    if form is None:
        return None
    kind, parts, widths = form
    if kind == "plain":
        return {parts[0]: read(ins.operands[1], ins.width)}
    if kind == "pack":
        terms = [read(p, w) for p, w in zip(parts, widths)]
        return {ins.operands[0]: z3.Concat(*reversed(terms)) if len(terms) > 1 else terms[0]}
    word, out, at = read(ins.operands[1], ins.width), {}, 0
    for name, w in zip(parts, widths):
        if name != "_":
            out[name] = z3.Extract(at + w - 1, at, word)
        at += w
    return out


def cvt(ins, read):
    """9.7.9.21 cvt between integer types: from the source type, sign- or zero-extended, or cut, to the
    destination type (.sat not modelled)."""
    types = ins.types()
    if len(types) != 2 or not all(t in INTEGER_TYPES for t in types) or ins.has("sat"):
        return None
    to_width, from_width = TYPE_BITS[types[0]], TYPE_BITS[types[1]]
    return {ins.operands[0]: widen(read(ins.operands[1], from_width), to_width, types[1].startswith("s"))}


def selp(ins, read):
    """9.7.9.3 selp d, a, b, c: a where the predicate c holds, else b."""
    w = ins.width
    return {ins.operands[0]: z3.If(read(ins.operands[3], 1) == 1, read(ins.operands[1], w), read(ins.operands[2], w))}


_COMPARE = {"eq": lambda a, b, s: a == b, "ne": lambda a, b, s: a != b,
            "lt": lambda a, b, s: a < b if s else z3.ULT(a, b), "le": lambda a, b, s: a <= b if s else z3.ULE(a, b),
            "gt": lambda a, b, s: a > b if s else z3.UGT(a, b), "ge": lambda a, b, s: a >= b if s else z3.UGE(a, b),
            "lo": lambda a, b, s: z3.ULT(a, b), "ls": lambda a, b, s: z3.ULE(a, b),
            "hi": lambda a, b, s: z3.UGT(a, b), "hs": lambda a, b, s: z3.UGE(a, b)}


def setp(ins, read):
    """9.7.9.4 setp.cmp[.bool].type p[|q], a, b[, c]: p = (a cmp b) BOOL c, q = !(a cmp b) BOOL c."""
    if not _integer(ins):
        return None
    comparison = next((m for m in ins.modifiers if m in _COMPARE), None)
    combine = next((m for m in ins.modifiers if m in ("and", "or", "xor")), None)
    if comparison is None:
        return None
    w = ins.width
    truth = _COMPARE[comparison](read(ins.operands[1], w), read(ins.operands[2], w), _signed(ins))
    one, zero = z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)
    p, q = z3.If(truth, one, zero), z3.If(truth, zero, one)
    if combine is not None:
        c = read(ins.operands[3], 1)
        join = {"and": lambda x: x & c, "or": lambda x: x | c, "xor": lambda x: x ^ c}[combine]
        p, q = join(p), join(q)
    names = registers_in(ins.operands[0])
    out = {names[0]: p}
    if len(names) > 1:
        out[names[1]] = q
    return {k: v for k, v in out.items() if k != "_"}


def meaning(ins: Instruction, read, width_of, fresh):
    """{register: term} for what `ins` writes, or None when it is not modelled here."""
    base = ins.base
    if base in ("add", "sub"):
        return add(ins, read)
    if base == "mul":
        return mul(ins, read)
    if base == "mad":
        return mad(ins, read)
    if base in ("div", "rem"):
        return div_rem(ins, read, fresh)
    if base in ("min", "max"):
        return min_max(ins, read)
    if base in ("neg", "abs"):
        return neg_abs(ins, read)
    if base == "bfe":
        return bfe(ins, read)
    if base in ("and", "or", "xor", "not", "cnot"):
        return logic(ins, read)
    if base in ("shl", "shr"):
        return shift(ins, read)
    if base == "mov":
        return mov(ins, read, width_of)
    if base == "cvt":
        return cvt(ins, read)
    if base == "selp":
        return selp(ins, read)
    if base == "setp":
        return setp(ins, read)
    return None
