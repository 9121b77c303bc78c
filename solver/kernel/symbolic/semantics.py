"""What the integer instructions that build descriptors compute, on partly known words (solver.kernel.symbolic.bits).

Each function takes the instruction and a `read(operand, width)` that evaluates an operand, and returns
{register: Bits} for the registers it writes, or None when the evaluator does not model it (its
destinations become unknown). Sections are those of PTX ISA 9.7 (integer arithmetic 9.7.1, logic and
shift 9.7.8, data movement and conversion 9.7.9).
"""
from __future__ import annotations

from solver.kernel.symbolic import bits
from solver.kernel.frontend.instruction import INTEGER_TYPES, TYPE_BITS, Instruction, packing, registers_in


def _integer(ins: Instruction) -> bool:
    return all(t in INTEGER_TYPES for t in ins.types()) and bool(ins.types())


def _signed(type_name: str) -> bool:
    return type_name.startswith("s")


def _one(ins: Instruction, value: bits.Bits):
    return {ins.operands[0]: value}


def mov(ins: Instruction, read, widths):
    """9.7.9.6 mov (and its packing form 9.7.9.10: mov.b64 d, {lo, hi}; mov.b64 {lo, hi}, d)."""
    form = packing(ins, widths)
    if form is None:
        return None                                    # not a packing of the destination: not modelled
    kind, parts, part_widths = form
    if kind == "plain":
        return _one(ins, read(ins.operands[1], ins.width))
    if kind == "pack":
        return _one(ins, bits.concat([read(part, width) for part, width in zip(parts, part_widths)]))
    pieces = bits.split(read(ins.operands[1], ins.width), part_widths)
    return {name: piece for name, piece in zip(parts, pieces) if name != "_"}


def cvta(ins: Instruction, read, widths):
    """9.7.9.20 cvta: shared <-> generic. The generic address of shared memory is tagged, not known."""
    if not ins.has("shared") and not ins.has("shared::cta"):
        return None
    source = read(ins.operands[1], ins.width)
    if ins.has("to"):
        if not source.shared_generic:
            return None
        return _one(ins, bits.Bits(source.width, source.value, source.known))
    return _one(ins, bits.Bits(ins.width, source.value, source.known, shared_generic=True))


def cvt(ins: Instruction, read, widths):
    """9.7.9.21 cvt between integer types: truncate, or extend by the source's signedness."""
    types = ins.types()
    if len(types) != 2 or not _integer(ins) or ins.has("sat"):
        return None
    target, source_type = types
    source = read(ins.operands[1], TYPE_BITS[source_type])
    return _one(ins, bits.resize(source, TYPE_BITS[target], signed=_signed(source_type)))


def add(ins: Instruction, read, widths):
    """9.7.1.1 add, 9.7.1.2 sub (no .cc, no .sat)."""
    if not _integer(ins) or ins.has("cc") or ins.has("sat"):
        return None
    a, b = read(ins.operands[1], ins.width), read(ins.operands[2], ins.width)
    return _one(ins, bits.add(a, b) if ins.base == "add" else bits.sub(a, b))


def _product(ins: Instruction, read):
    """(a * b, its width) for mul/mad .lo and .wide (9.7.1.3, 9.7.1.4)."""
    width, signed = ins.width, _signed(ins.types()[-1])
    a, b = read(ins.operands[1], width), read(ins.operands[2], width)
    if ins.has("wide"):
        return bits.mul(bits.resize(a, 2 * width, signed), bits.resize(b, 2 * width, signed), 2 * width), 2 * width
    if ins.has("lo") or width == 1:
        return bits.mul(a, b, width), width
    return None, width


def mul(ins: Instruction, read, widths):
    if not _integer(ins):
        return None
    product, _ = _product(ins, read)
    return None if product is None else _one(ins, product)


def mad(ins: Instruction, read, widths):
    if not _integer(ins) or ins.has("cc"):
        return None
    product, width = _product(ins, read)
    if product is None:
        return None
    return _one(ins, bits.add(product, read(ins.operands[3], width)))


def shift(ins: Instruction, read, widths):
    """9.7.8.7 shl, 9.7.8.8 shr (the amount is a .u32)."""
    a, amount = read(ins.operands[1], ins.width), read(ins.operands[2], 32)
    if ins.base == "shl":
        return _one(ins, bits.shl(a, amount))
    return _one(ins, bits.shr(a, amount, arithmetic=_signed(ins.types()[-1])))


def logic(ins: Instruction, read, widths):
    """9.7.8.1-4 and, or, xor, not."""
    if ins.base == "not":
        return _one(ins, bits.not_(read(ins.operands[1], ins.width)))
    a, b = read(ins.operands[1], ins.width), read(ins.operands[2], ins.width)
    return _one(ins, {"and": bits.and_, "or": bits.or_, "xor": bits.xor}[ins.base](a, b))


def bfe(ins: Instruction, read, widths):
    """9.7.1.18 bfe d, a, pos, len."""
    a = read(ins.operands[1], ins.width)
    position, length = read(ins.operands[2], 32), read(ins.operands[3], 32)
    return _one(ins, bits.bit_field_extract(a, position, length, _signed(ins.types()[-1])))


def bfi(ins: Instruction, read, widths):
    """9.7.1.19 bfi d, f, b, pos, len."""
    field, base = read(ins.operands[1], ins.width), read(ins.operands[2], ins.width)
    position, length = read(ins.operands[3], 32), read(ins.operands[4], 32)
    return _one(ins, bits.bit_field_insert(field, base, position, length))


def selp(ins: Instruction, read, widths):
    """9.7.9.3 selp d, a, b, c: a when c, else b."""
    a, b, choice = (read(ins.operands[1], ins.width), read(ins.operands[2], ins.width),
                    read(ins.operands[3], 1))
    if choice.is_known:
        return _one(ins, a if choice.value else b)
    return _one(ins, bits.join(a, b))


_COMPARISONS = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
                "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b}
_UNSIGNED = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}


def setp(ins: Instruction, read, widths):
    """9.7.9.4 setp.cmp.type p[|q], a, b (no boolean combination): known when a and b are."""
    if len(ins.operands) != 3 or not _integer(ins):
        return None
    comparison = next((m for m in ins.modifiers if m in _COMPARISONS or m in _UNSIGNED), None)
    a, b = read(ins.operands[1], ins.width), read(ins.operands[2], ins.width)
    names = registers_in(ins.operands[0])
    if comparison is None or not (a.is_known and b.is_known):
        return None
    signed = _signed(ins.types()[-1]) and comparison not in _UNSIGNED
    x, y = (a.signed(), b.signed()) if signed else (a.value, b.value)
    truth = _COMPARISONS[_UNSIGNED.get(comparison, comparison)](x, y)
    result = {names[0]: bits.const(int(truth), 1)}
    if len(names) > 1:
        result[names[1]] = bits.const(int(not truth), 1)
    return result


def shfl(ins: Instruction, read, widths):
    """9.7.9.9 shfl.sync d[|p], a, b, c, membermask: a value known here is the same in every lane, so any
    lane's copy of it is that value (CuTe DSL broadcasts the shared-memory base this way)."""
    value = read(ins.operands[1], 32)
    if not value.is_known:
        return None
    return {registers_in(ins.operands[0])[0]: value}


def ld(ins: Instruction, read, widths, params=None):
    """9.7.9.8 ld: only ld.param of a parameter given a value is known."""
    if not ins.has("param") or ins.operands[0].startswith("{"):
        return None
    address = ins.operands[1].strip("[] ")
    name, _, offset = address.partition("+")
    if params is None or name.strip() not in params or offset.strip() not in ("", "0"):
        return None
    return _one(ins, bits.const(params[name.strip()], ins.width))


HANDLERS = {"mov": mov, "cvta": cvta, "cvt": cvt, "add": add, "sub": add, "mul": mul, "mad": mad, "shl": shift,
            "shr": shift, "and": logic, "or": logic, "xor": logic, "not": logic, "bfe": bfe, "bfi": bfi,
            "selp": selp, "setp": setp, "shfl": shfl}
