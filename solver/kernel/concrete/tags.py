"""Where an MMA's accumulator goes: values that carry, byte by byte, which accumulator element they hold.

The audit's epilogue check (solver/kernel/audit/epilogue.py) follows each element D[m][n] of a wgmma
accumulator from its register to global memory. The concrete executor computes addresses, not data; here
the data an epilogue moves are given names instead of values:

* a wgmma.mma_async writes, in each lane, element e of its accumulator vector d: a Piece (the wgmma's
  statement, e, byte, width) for each byte of it (PTX ISA 9.0 9.7.15.5.1, the accumulator's register
  fragments: an .f32 / .s32 accumulator holds one element per register, an .f16 one two, the lower half
  first). A Piece is lane-relative: "this lane's element e"; the lane comes in where the value is stored;
* moves, packs and unpacks (9.7.9.1 mov), conversions (9.7.9.21 cvt: an element changes width, the
  packed forms put a's result in the upper half, b's in the lower), byte permutes (9.7.8.7 prmt), byte-
  aligned shifts and masks (9.7.8) carry the pieces;
* float arithmetic on one element and untagged operands (a scale, a bias, an activation) keeps the
  element: the check is where each element lands, not what was computed from it;
* anything else (two elements combined, a lane exchange, a form not listed) gives a plain Unknown that
  says so: nothing is guessed.

A Tagged value is an Unknown (values.py) to the integer semantics: they never compute with it
(executor._execute hands every instruction that reads one to `execute` here).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from solver.kernel.concrete.values import Lanes, SharedGeneric, Unknown
from solver.kernel.frontend.instruction import TYPE_BITS, destinations, registers_in


@dataclass(frozen=True)
class Piece:
    """Byte `byte` of accumulator element `element` of the wgmma at statement `origin`, as a `width`-byte
    value (4 for f32 as the MMA wrote it, 2 after a cvt to f16, 1 after one to e4m3)."""
    origin: int
    element: int
    byte: int
    width: int


@dataclass(frozen=True)
class Tagged(Unknown):
    """A register's bytes, least significant first: a Piece, an int (a byte known to be that constant),
    or None (a byte not known)."""
    parts: tuple = ()


def is_tagged(value) -> bool:
    return isinstance(value, Tagged)


def make(parts: tuple, why: str):
    """A Tagged value if any byte carries a piece, else a plain Unknown (or the int the bytes spell)."""
    if any(isinstance(p, Piece) for p in parts):
        return Tagged("an accumulator value", tuple(parts))
    if all(isinstance(p, int) for p in parts):
        return sum(p << (8 * k) for k, p in enumerate(parts))
    return Unknown(why)


def bytes_of(value, width_bits: int) -> tuple:
    """The parts of a value read at a width (a narrower read keeps the low bytes)."""
    count = max(1, width_bits // 8)
    if isinstance(value, Tagged):
        parts = value.parts[:count]
        return parts + (None,) * (count - len(parts))
    if isinstance(value, int):
        return tuple((value >> (8 * k)) & 0xFF for k in range(count))
    return (None,) * count


def whole_element(parts: tuple) -> Optional[tuple]:
    """(origin, element) when the parts are exactly one element's bytes, in order, at its width."""
    first = parts[0] if parts else None
    if not isinstance(first, Piece) or first.width != len(parts):
        return None
    for k, p in enumerate(parts):
        if not isinstance(p, Piece) or (p.origin, p.element, p.byte, p.width) != (first.origin, first.element, k,
                                                                                 len(parts)):
            return None
    return first.origin, first.element


def element_parts(origin: int, element: int, width: int) -> tuple:
    return tuple(Piece(origin, element, b, width) for b in range(width))


# --- 9.7.15.5.1: what a wgmma writes ----------------------------------------------------------------------

def wgmma_accumulator(ins, statement: int) -> dict:
    """{register: Tagged} for the accumulator vector d of a wgmma.mma_async: element e of the vector is
    register e (.f32, .s32), or half e % 2 of register e // 2 (.f16)."""
    registers = registers_in(ins.operands[0])
    d_type = _wgmma_d_type(ins.opcode)
    out = {}
    for j, register in enumerate(registers):
        if d_type == "f16":
            parts = element_parts(statement, 2 * j, 2) + element_parts(statement, 2 * j + 1, 2)
        else:
            parts = element_parts(statement, j, 4)
        out[register] = Tagged("an accumulator value", parts)
    return out


def _wgmma_d_type(opcode: str) -> Optional[str]:
    """The accumulator's type: the first type after the shape (wgmma.mma_async.sync.aligned.SHAPE.DTYPE...)."""
    parts = opcode.split(".")
    shape = next((k for k, p in enumerate(parts) if p.startswith("m64n")), None)
    return parts[shape + 1] if shape is not None and shape + 1 < len(parts) else None


def wgmma_elements_per_register(opcode: str) -> int:
    return 2 if _wgmma_d_type(opcode) == "f16" else 1


# --- the data movements an epilogue uses --------------------------------------------------------------------

_FLOAT_TYPES = {"f16", "bf16", "f32", "f64", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"}
_FLOAT_ARITHMETIC = {"add", "sub", "mul", "fma", "mad", "div", "max", "min", "neg", "abs", "ex2", "lg2", "rcp",
                     "sqrt", "rsqrt", "tanh", "sin", "cos", "copysign", "testp"}


def _type_bytes(name: str) -> Optional[int]:
    """Bytes of a PTX type, packed pairs (f16x2, e4m3x2) included."""
    if name.endswith("x2"):
        inner = _type_bytes(name[:-2])
        return None if inner is None else 2 * inner
    if name in ("e4m3", "e5m2", "e2m3", "e3m2"):
        return 1
    bits = TYPE_BITS.get("." + name) or TYPE_BITS.get(name)
    return bits // 8 if bits else None


def execute(ins, read, width_of, guard) -> dict:
    """{register: value} for an instruction that reads a Tagged value: what it writes, each destination
    a Tagged value, an int, or an Unknown saying why the pieces are not followed. read(operand, bits)
    is the warp's (values.py); guard: None, 1, 0, Lanes or Unknown."""
    written = destinations(ins)
    if guard is not None and guard != 1:
        if guard == 0:
            return {}
        why = f"line {ins.line}: an accumulator value written under a predicate that differs by lane"
        return {name: Unknown(why) for name in written}
    rule = _RULES.get(ins.base)
    result = rule(ins, read, width_of) if rule is not None else None
    if result is None:
        why = f"line {ins.line}: an accumulator value through {ins.opcode}, which the epilogue check does not follow"
        return {name: Unknown(why) for name in written}
    return result


def _move(ins, read, width_of):
    """9.7.9.1 mov: a copy, a pack `mov.bN d, {a, b..}` (a lowest) or an unpack `mov.bN {a, b..}, d`."""
    if len(ins.operands) != 2:
        return None
    target, source = ins.operands[0].strip(), ins.operands[1].strip()
    if source.startswith("{"):
        names = [n.strip() for n in source[1:-1].split(",")]
        parts = ()
        for n in names:
            parts += bytes_of(read(n, width_of(n)), width_of(n))
        return {target: make(parts, f"line {ins.line}: a pack of unknown bytes")}
    value = read(source, ins.width)
    if target.startswith("{"):
        names = [n.strip() for n in target[1:-1].split(",")]
        parts, out, at = bytes_of(value, ins.width), {}, 0
        for n in names:
            size = width_of(n) // 8
            out[n] = make(parts[at:at + size], f"line {ins.line}: an unpack of unknown bytes")
            at += size
        return out
    return {target: make(bytes_of(value, ins.width), f"line {ins.line}: unknown bytes")}


def _convert(ins, read, width_of):
    """9.7.9.21 cvt: `cvt.DTYPE.ATYPE d, a` gives a's element at DTYPE's width; the packed forms
    `cvt.PAIR.f32 d, a, b` put a's in the upper half and b's in the lower (PTX ISA 9.0, cvt: "the value
    converted from input a is stored in the upper half of d")."""
    types = [m for m in ins.opcode.split(".")[1:] if _type_bytes(m) is not None]
    if len(types) < 2:
        return None
    d_type, a_type = types[0], types[1]
    d_bytes, a_bytes = _type_bytes(d_type), _type_bytes(a_type)
    target = ins.operands[0].strip()
    if not any(_is_float(t) for t in (d_type, a_type)):        # an integer cvt: the low bytes, zero-extended
        if len(ins.operands) != 2 or (d_bytes > a_bytes and a_type.startswith("s")):
            return None
        parts = bytes_of(read(ins.operands[1], 8 * a_bytes), 8 * a_bytes)[:d_bytes]
        return {target: make(parts + (0,) * (d_bytes - len(parts)), f"line {ins.line}: unknown bytes")}
    if d_type.endswith("x2") and len(ins.operands) == 3:
        half = d_bytes // 2
        upper = _converted(read(ins.operands[1], 8 * a_bytes), a_bytes, half)
        lower = _converted(read(ins.operands[2], 8 * a_bytes), a_bytes, half)
        return {target: make(lower + upper, f"line {ins.line}: a conversion of unknown values")}
    if len(ins.operands) != 2 or d_type.endswith("x2") or a_type.endswith("x2"):
        return None
    return {target: make(_converted(read(ins.operands[1], 8 * a_bytes), a_bytes, d_bytes),
                         f"line {ins.line}: a conversion of unknown values")}


def _is_float(name: str) -> bool:
    return (name[:-2] if name.endswith("x2") else name) in _FLOAT_TYPES


def _converted(value, source_bytes: int, target_bytes: int) -> tuple:
    element = whole_element(bytes_of(value, 8 * source_bytes))
    if element is None:
        return (None,) * target_bytes
    return element_parts(element[0], element[1], target_bytes)


def _arithmetic(ins, read, width_of):
    """Float arithmetic (9.7.4, 9.7.5): one element among the operands, at the instruction's width, is the
    result's element; packed .x2 forms half by half. Integer forms are not followed (None)."""
    kind = ins.types()[-1] if ins.types() else None
    if kind is None or not _is_float(kind) or ins.base == "testp":
        return None
    size = _type_bytes(kind)
    lanes = 2 if kind.endswith("x2") else 1
    step = size // lanes
    operands = [read(o, 8 * size) for o in ins.operands[1:]]
    parts = ()
    for half in range(lanes):
        found, opaque = set(), False
        for value in operands:
            chunk = bytes_of(value, 8 * size)[half * step:(half + 1) * step]
            opaque = opaque or None in chunk and not any(isinstance(p, Piece) for p in chunk)
            if any(isinstance(p, Piece) for p in chunk):
                element = whole_element(chunk)
                if element is None:
                    return {ins.operands[0].strip(): Unknown(f"line {ins.line}: part of an accumulator element "
                                                             f"in {ins.opcode}")}
                found.add(element)
        if len(found) > 1:
            return {ins.operands[0].strip(): Unknown(f"line {ins.line}: {ins.opcode} combines accumulator "
                                                     f"elements {sorted(e for _, e in found)}")}
        if found and opaque and ins.base in ("max", "min"):
            # (max and min select an operand: against a value the run does not know, such as a row's
            # running maximum, the result may be that value and not the element; against a constant,
            # a clamp such as ReLU, it is the element, clamped)
            return {ins.operands[0].strip(): Unknown(f"line {ins.line}: {ins.opcode} of an accumulator element "
                                                     "and a value the run does not know")}
        parts += element_parts(*found.pop(), step) if found else (None,) * step
    return {ins.operands[0].strip(): make(parts, f"line {ins.line}: unknown")}


def _permute(ins, read, width_of):
    """9.7.8.7 prmt.b32 (the default mode): byte i of d is byte (c >> 4i) & 7 of {b, a} (a bytes 0-3, b
    4-7); a selector with bit 3 set replicates a sign bit (not followed)."""
    if ins.opcode != "prmt.b32" or len(ins.operands) != 4:
        return None
    selector = read(ins.operands[3], 32)
    if not isinstance(selector, int):
        return None
    pool = bytes_of(read(ins.operands[1], 32), 32) + bytes_of(read(ins.operands[2], 32), 32)
    parts = tuple(None if (selector >> (4 * i)) & 8 else pool[(selector >> (4 * i)) & 7] for i in range(4))
    return {ins.operands[0].strip(): make(parts, f"line {ins.line}: unknown bytes")}


def _shift(ins, read, width_of):
    """9.7.8.8 shl, shr by a constant multiple of 8 (shr of a signed type fills with the sign: unknown)."""
    amount = read(ins.operands[2], 32)
    if not isinstance(amount, int) or amount % 8:
        return None
    parts = bytes_of(read(ins.operands[1], ins.width), ins.width)
    n, k = len(parts), amount // 8
    if ins.base == "shl":
        shifted = (0,) * min(k, n) + parts[:max(0, n - k)]
    else:
        fill = None if ins.types()[-1].startswith("s") else 0
        shifted = parts[k:] + (fill,) * min(k, n)
    return {ins.operands[0].strip(): make(shifted, f"line {ins.line}: unknown bytes")}


def _bitwise(ins, read, width_of):
    """9.7.8.1 and, or, xor, byte by byte: a piece survives `and` with 0xFF, `or` / `xor` with 0x00."""
    if len(ins.operands) != 3 or ins.types()[-1] == "pred":
        return None
    a, b = (bytes_of(read(o, ins.width), ins.width) for o in ins.operands[1:])
    out = []
    for x, y in zip(a, b):
        if isinstance(x, int) and isinstance(y, int):
            out.append(x & y if ins.base == "and" else x | y if ins.base == "or" else x ^ y)
        elif ins.base == "and" and 0 in (x, y):
            out.append(0)
        elif ins.base == "and" and 0xFF in (x, y):
            out.append(y if x == 0xFF else x)
        elif ins.base in ("or", "xor") and 0 in (x, y):
            out.append(y if x == 0 else x)
        else:
            out.append(None)
    return {ins.operands[0].strip(): make(tuple(out), f"line {ins.line}: unknown bytes")}


def _select(ins, read, width_of):
    """selp d, a, b, c (PTX ISA 9.0, comparison and selection): a where c; the same bytes either way are
    kept."""
    if len(ins.operands) != 4:
        return None
    choice = read(ins.operands[3], 1)
    a, b = read(ins.operands[1], ins.width), read(ins.operands[2], ins.width)
    if isinstance(choice, int):
        chosen = a if choice else b
        return {ins.operands[0].strip(): make(bytes_of(chosen, ins.width), f"line {ins.line}: unknown")}
    if isinstance(choice, (Lanes, SharedGeneric)) or bytes_of(a, ins.width) != bytes_of(b, ins.width):
        return None
    return {ins.operands[0].strip(): make(bytes_of(a, ins.width), f"line {ins.line}: unknown")}


_RULES = {"mov": _move, "cvt": _convert, "prmt": _permute, "shl": _shift, "shr": _shift,
          "and": _bitwise, "or": _bitwise, "xor": _bitwise, "selp": _select,
          **{name: _arithmetic for name in _FLOAT_ARITHMETIC}}


def reads_tagged(ins, env: dict) -> bool:
    """Whether any register the instruction reads holds a Tagged value (its operands past the first when
    it writes registers, all of them when it does not: a store)."""
    read = ins.operands[1:] if destinations(ins) else ins.operands
    return any(isinstance(env.get(name), Tagged) for operand in read for name in registers_in(operand))
