"""The three meanings of the integer instructions, written apart, agree on known operands:
concrete/semantics.py (ints), symbolic/semantics.py (partly known words) and symbolic/bitvector.py (Z3
terms). And bounds.py's sets are exactly the values a block computes, checked by enumeration.

The instructions are drawn at random (a fixed seed) from the forms the kernels of the corpus use, with
edge values (0, 1, all ones, the sign bit, shift amounts around the width, bfe fields past the word).
"""
from __future__ import annotations

import random

import pytest
import z3

from solver.kernel.concrete import semantics as concrete
from solver.kernel.concrete.values import Unknown, mask
from solver.kernel.frontend.instruction import TYPE_BITS, Instruction
from solver.kernel.symbolic import bitvector, bits
from solver.kernel.symbolic import semantics as known_bits

TYPES = ["u16", "s16", "u32", "s32", "u64", "s64", "b32", "b64"]
COMPARISONS = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"]


def _forms(rng: random.Random):
    """(opcode, operands, {register: width}) of one instruction."""
    t = rng.choice(TYPES)
    w = TYPE_BITS[t]
    signed_or_unsigned = ("s" if t[0] == "s" else "u") + str(w)
    kind = rng.choice(["add", "sub", "mul", "mad", "div", "rem", "min", "max", "neg", "abs", "logic", "not",
                       "shift", "bfe", "cvt", "selp", "setp", "pack", "unpack"])
    if kind in ("add", "sub", "min", "max", "div", "rem"):
        return f"{kind}.{signed_or_unsigned}", ("%d", "%a", "%b"), {"%d": w, "%a": w, "%b": w}
    if kind in ("neg", "abs"):
        return f"{kind}.s{w}", ("%d", "%a"), {"%d": w, "%a": w}
    if kind in ("mul", "mad"):
        w = rng.choice([16, 32, 64]) if kind == "mul" else rng.choice([32, 64])
        part = rng.choice(["lo", "hi"] + (["wide"] if w < 64 else []))
        out = 2 * w if part == "wide" else w
        opcode = f"{kind}.{part}.{rng.choice('su')}{w}"
        if kind == "mul":
            return opcode, ("%d", "%a", "%b"), {"%d": out, "%a": w, "%b": w}
        return opcode, ("%d", "%a", "%b", "%c"), {"%d": out, "%a": w, "%b": w, "%c": out}
    if kind == "logic":
        op = rng.choice(["and", "or", "xor"])
        return f"{op}.b{w}", ("%d", "%a", "%b"), {"%d": w, "%a": w, "%b": w}
    if kind == "not":
        return f"not.b{w}", ("%d", "%a"), {"%d": w, "%a": w}
    if kind == "shift":
        op = rng.choice(["shl.b", "shr.u", "shr.s", "shr.b"])
        return f"{op}{w}", ("%d", "%a", "%n"), {"%d": w, "%a": w, "%n": 32}
    if kind == "bfe":
        w = rng.choice([32, 64])
        position = rng.choice([0, 1, 5, 28, 31, 33, 60, 63, 64, 200, 255])
        length = rng.choice([0, 1, 4, 8, 31, 32, 40, 255])
        return f"bfe.{rng.choice('su')}{w}", ("%d", "%a", str(position), str(length)), {"%d": w, "%a": w}
    if kind == "cvt":
        to, source = rng.choice(["u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64"]), t if t[0] != "b" else "u32"
        return f"cvt.{to}.{source}", ("%d", "%a"), {"%d": max(TYPE_BITS[to], 16), "%a": TYPE_BITS[source]}
    if kind == "selp":
        return f"selp.b{w}", ("%d", "%a", "%b", "%p"), {"%d": w, "%a": w, "%b": w, "%p": 1}
    if kind == "setp":
        comparison = rng.choice(COMPARISONS)
        combine = rng.choice(["", ".and", ".or", ".xor"])
        operands = ("%q|%r", "%a", "%b") + (("%p",) if combine else ())
        return f"setp.{comparison}{combine}.{signed_or_unsigned}", operands, \
            {"%q": 1, "%r": 1, "%a": w, "%b": w, "%p": 1}
    if kind == "pack":
        return "mov.b64", ("%d", "{%a, %b}"), {"%d": 64, "%a": 32, "%b": 32}
    return "mov.b64", ("{%q, %r}", "%a"), {"%q": 32, "%r": 32, "%a": 64}


def _value(rng: random.Random, width: int) -> int:
    edge = [0, 1, mask(width), 1 << (width - 1), (1 << (width - 1)) - 1, 3, 5, 6]
    return rng.choice(edge) & mask(width) if rng.random() < 0.4 else rng.getrandbits(width)


def _reader(values: dict, widths: dict):
    def read(operand, width):
        operand = operand.strip()
        if operand in values:
            value = values[operand]
            return value if width >= widths[operand] else value & mask(width)
        return int(operand) & mask(width)
    return read


def _cases(count: int, seed: int):
    rng = random.Random(seed)
    for _ in range(count):
        opcode, operands, widths = _forms(rng)
        values = {name: _value(rng, w) for name, w in widths.items()}
        if "%n" in values and rng.random() < 0.5:
            values["%n"] = rng.choice([0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 1 << 31])
        text = f"{opcode} {', '.join(operands)}"
        yield Instruction(1, text, None, False, opcode, operands), values, widths


def _fit(value: int, width: int) -> int:
    return value & mask(width)


@pytest.mark.parametrize("seed", range(4))
def test_bitvector_meaning_is_the_concrete_one(seed):
    """Z3's term on constant operands simplifies to the value the concrete executor computes."""
    checked = 0
    for ins, values, widths in _cases(700, seed):
        expected = concrete.handler_of(ins)(ins, _reader(values, widths), widths.get, None)
        fresh_made = []

        def fresh(width):
            fresh_made.append(width)
            return z3.BitVec(f"fresh{len(fresh_made)}", width)
        read = _reader(values, widths)
        terms = bitvector.meaning(ins, lambda op, w: z3.BitVecVal(read(op, w), w), widths.get, fresh)
        assert terms is not None, ins.text
        for name, value in expected.items():
            if isinstance(value, Unknown):          # division by zero: unspecified, a fresh value in Z3
                assert fresh_made, ins.text
                continue
            term = z3.simplify(terms[name])
            assert z3.is_bv_value(term), (ins.text, values, term)
            assert _fit(term.as_long(), widths[name]) == _fit(value, widths[name]), (ins.text, values, name)
            checked += 1
    assert checked > 600


@pytest.mark.parametrize("seed", range(2))
def test_known_bits_meaning_is_the_concrete_one(seed):
    """The partly-known-words evaluator, on fully known operands, gives the concrete value (where it
    models the instruction at all)."""
    checked = 0
    for ins, values, widths in _cases(700, seed):
        handler = known_bits.HANDLERS.get(ins.base)
        if handler is None:
            continue
        expected = concrete.handler_of(ins)(ins, _reader(values, widths), widths.get, None)
        read = _reader(values, widths)
        found = handler(ins, lambda op, w: bits.Bits(w, read(op, w), mask(w)), widths.get)
        if found is None:
            continue
        for name, value in expected.items():
            got = found.get(name)
            if got is None or isinstance(value, Unknown) or not got.is_known:
                continue
            assert _fit(got.value, widths[name]) == _fit(value, widths[name]), (ins.text, values, name)
            checked += 1
    assert checked > 300


def test_bfe_fills_with_the_sign_past_the_word():
    """PTX ISA 9.7.1.17 bfe: d[i] = (i < len && pos + i <= msb) ? a[pos + i] : sbit, sbit = a[min(pos + len
    - 1, msb)] for .s. A field that runs past the word is filled with the sign from the word's end on,
    not from len on."""
    ins = Instruction(1, "bfe.s32 %d, %a, 28, 8", None, False, "bfe.s32", ("%d", "%a", "28", "8"))
    widths = {"%d": 32, "%a": 32}
    got = concrete.bfe(ins, _reader({"%a": 0x8000_0000}, widths), widths.get, None)["%d"]
    assert got == 0xFFFF_FFF8          # a[28..31] = 1000b, then the sign (1) in every bit above
    ins = Instruction(1, "bfe.s32 %d, %a, 40, 4", None, False, "bfe.s32", ("%d", "%a", "40", "4"))
    assert concrete.bfe(ins, _reader({"%a": 0x8000_0000}, widths), widths.get, None)["%d"] == 0xFFFF_FFFF
