"""What each integer instruction computes, on the concrete executor's values (values.py), one function
per PTX ISA 9.0 section. Written apart from symbolic/semantics.py (partly known words) on purpose: the
two are checked against each other on the corpus (tests/solver_tests/kernel/test_kernel_corpus.py) and, with the Z3 one
(symbolic/bitvector.py), on random operands (tests/solver_tests/kernel/test_kernel_bitvector.py).

A handler takes (instruction, read, width_of, warp) and returns {register: value} for what it writes, or
None when the opcode is not modelled: its destinations are then Unknown, with that reason.
"""
from __future__ import annotations

from solver.kernel.concrete.values import (WARP, Lanes, SharedGeneric, Unknown, lane_of, lift, mask, select,
                                           signed, uniform)
from solver.kernel.frontend.instruction import INTEGER_TYPES, TYPE_BITS, Instruction, packing, registers_in


def is_integer(ins: Instruction) -> bool:
    return bool(ins.types()) and all(t in INTEGER_TYPES for t in ins.types())


def _is_signed(ins: Instruction) -> bool:
    return ins.types()[-1].startswith("s")


def _names(operand: str) -> list:
    return [r for r in registers_in(operand)]



# 9.7.1 integer arithmetic --------------------------------------------------------------------------------
def add(ins, read, width_of, warp):
    """9.7.1.1 add, 9.7.1.2 sub (modulo 2^width; .sat and .cc are not modelled)."""
    if not is_integer(ins) or ins.has("sat") or ins.has("cc"):
        return None
    w = ins.width
    m = mask(w)
    a, b = read(ins.operands[1], w), read(ins.operands[2], w)
    sign = -1 if ins.base == "sub" else 1
    if isinstance(a, SharedGeneric) and isinstance(b, int):
        return {ins.operands[0]: SharedGeneric((a.offset + sign * b) & mask(32))}
    if isinstance(b, SharedGeneric) and isinstance(a, int) and sign == 1:
        return {ins.operands[0]: SharedGeneric((b.offset + a) & mask(32))}
    if isinstance(a, SharedGeneric) and isinstance(b, SharedGeneric) and sign == -1:
        return {ins.operands[0]: (a.offset - b.offset) & mask(w)}
    return {ins.operands[0]: lift((lambda x, y: (x - y) & m) if sign < 0 else (lambda x, y: (x + y) & m), a, b)}


def _product(ins, a, b, w):
    """The full product, signed or not, and which part (.lo, .hi, .wide) the instruction keeps."""
    is_signed, part = _is_signed(ins), "hi" if ins.has("hi") else "wide" if ins.has("wide") else "lo"
    m, m2, top = mask(w), mask(2 * w), 1 << w

    def product(x, y):
        if is_signed:
            x, y = (x - top if x >> (w - 1) else x), (y - top if y >> (w - 1) else y)
        full = x * y
        if part == "hi":
            return (full >> w) & m
        return full & (m2 if part == "wide" else m)
    return lift(product, a, b)


def mul(ins, read, width_of, warp):
    """9.7.1.3 mul.lo / .hi / .wide."""
    if not is_integer(ins):
        return None
    w = ins.width
    return {ins.operands[0]: _product(ins, read(ins.operands[1], w), read(ins.operands[2], w), w)}


def mad(ins, read, width_of, warp):
    """9.7.1.4 mad.lo / .hi / .wide: the product's kept part plus c (c is 2w wide for .wide)."""
    if not is_integer(ins) or ins.has("sat") or ins.has("cc"):
        return None
    w = ins.width
    out = 2 * w if ins.has("wide") else w
    m = mask(out)
    part = _product(ins, read(ins.operands[1], w), read(ins.operands[2], w), w)
    return {ins.operands[0]: lift(lambda p, c: (p + c) & m, part, read(ins.operands[3], out))}


def div_rem(ins, read, width_of, warp):
    """9.7.1.6 div, 9.7.1.7 rem: truncated towards zero (C semantics) for signed types."""
    if not is_integer(ins):
        return None
    w = ins.width

    def compute(x, y):
        if _is_signed(ins):
            x, y = signed(x, w), signed(y, w)
        quotient = abs(x) // abs(y) * (1 if (x >= 0) == (y >= 0) else -1)
        return (quotient if ins.base == "div" else x - quotient * y) & mask(w)
    return {ins.operands[0]: lift(compute, read(ins.operands[1], w), read(ins.operands[2], w))}


def min_max(ins, read, width_of, warp):
    """9.7.1.10 min, 9.7.1.11 max."""
    if not is_integer(ins) or ins.has("relu"):
        return None
    w = ins.width
    pick = min if ins.base == "min" else max

    def compute(x, y):
        if _is_signed(ins):
            return pick(signed(x, w), signed(y, w)) & mask(w)
        return pick(x, y)
    return {ins.operands[0]: lift(compute, read(ins.operands[1], w), read(ins.operands[2], w))}


def neg_abs(ins, read, width_of, warp):
    """9.7.1.8 abs, 9.7.1.9 neg."""
    if not is_integer(ins):
        return None
    w = ins.width
    op = (lambda x: -signed(x, w) & mask(w)) if ins.base == "neg" else (lambda x: abs(signed(x, w)) & mask(w))
    return {ins.operands[0]: lift(op, read(ins.operands[1], w))}


# 9.7.8 logic and shift -----------------------------------------------------------------------------------
def logic(ins, read, width_of, warp):
    """9.7.8.1 and, or, xor, 9.7.8.2 not, 9.7.8.3 cnot (on .pred too)."""
    w = ins.width
    m = mask(w)
    if ins.base in ("not", "cnot"):
        op = (lambda x: ~x & m) if ins.base == "not" else (lambda x: int(x == 0))
        return {ins.operands[0]: lift(op, read(ins.operands[1], w))}
    op = {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y}[ins.base]
    return {ins.operands[0]: lift(op, read(ins.operands[1], w), read(ins.operands[2], w))}


def shift(ins, read, width_of, warp):
    """9.7.8.7 shl, 9.7.8.8 shr: the amount is an unsigned 32-bit value; past the width, shl and shr.u give
    0 and shr.s the sign."""
    w = ins.width
    m = mask(w)
    a, amount = read(ins.operands[1], w), read(ins.operands[2], 32)
    if ins.base == "shl":
        compute = lambda x, n: (x << min(n, w)) & m           # noqa: E731
    elif _is_signed(ins):
        compute = lambda x, n: (signed(x, w) >> min(n, w)) & m    # noqa: E731
    else:
        compute = lambda x, n: x >> min(n, w)                  # noqa: E731
    return {ins.operands[0]: lift(compute, a, amount)}


def bfe(ins, read, width_of, warp):
    """9.7.1.17 bfe d, a, b, c: with pos = b & 0xFF, len = c & 0xFF, msb = width - 1, the manual's
    d[i] = (i < len && pos + i <= msb) ? a[pos + i] : sbit, where sbit = a[min(pos + len - 1, msb)] for .s
    (and len > 0), else 0: bits of the field past the word take the sign too."""
    w = ins.width

    def compute(x, position, length):
        position, length = position & 0xFF, length & 0xFF
        sign = (x >> min(position + length - 1, w - 1)) & 1 if _is_signed(ins) and length else 0
        inside = max(0, min(length, w - position))          # the i < len with pos + i <= msb
        field = (x >> position) & mask(inside) if inside else 0
        return field | (mask(w) & ~mask(inside)) if sign else field
    return {ins.operands[0]: lift(compute, read(ins.operands[1], w), read(ins.operands[2], 32),
                                  read(ins.operands[3], 32))}


def bfi(ins, read, width_of, warp):
    """9.7.1.18 bfi d, a, b, c, e: b with c bits from bit ... replaced by the low bits of a (c: position, e:
    length; their low 8 bits)."""
    w = ins.width

    def compute(field, base, position, length):
        position, length = position & 0xFF, length & 0xFF
        if length == 0 or position >= w:
            return base
        span = mask(min(length, w - position)) << position
        return (base & ~span | (field << position) & span) & mask(w)
    return {ins.operands[0]: lift(compute, read(ins.operands[1], w), read(ins.operands[2], w),
                                  read(ins.operands[3], 32), read(ins.operands[4], 32))}


# 9.7.9 data movement and conversion ----------------------------------------------------------------------
def mov(ins, read, width_of, warp):
    """9.7.9.6 mov, and 9.7.9.10 packing: mov.b64 d, {lo, hi} / mov.b64 {lo, hi}, d (first element lowest)."""
    form = packing(ins, width_of)
    if form is None:
        return None
    kind, parts, widths = form
    if kind == "plain":
        return {parts[0]: read(ins.operands[1], ins.width)}
    if kind == "pack":
        def pack(*xs):
            word, at = 0, 0
            for x, w in zip(xs, widths):
                word |= (x & mask(w)) << at
                at += w
            return word
        return {ins.operands[0]: lift(pack, *[read(p, w) for p, w in zip(parts, widths)])}
    word = read(ins.operands[1], ins.width)
    out, at = {}, 0
    for name, w in zip(parts, widths):
        if name != "_":
            out[name] = lift(lambda x, at=at, w=w: (x >> at) & mask(w), word)
        at += w
    return out


def cvt(ins, read, width_of, warp):
    """9.7.9.21 cvt between integer types: truncation, or zero / sign extension from the source type."""
    types = ins.types()
    if len(types) != 2 or not all(t in INTEGER_TYPES for t in types) or ins.has("sat"):
        return None
    to_width, from_width = TYPE_BITS[types[0]], TYPE_BITS[types[1]]
    value = read(ins.operands[1], from_width)
    if types[1].startswith("s"):
        m = mask(to_width)
        return {ins.operands[0]: lift(lambda x: signed(x, from_width) & m, value)}
    m = mask(min(to_width, from_width))
    return {ins.operands[0]: lift(lambda x: x & m, value)}


def cvta(ins, read, width_of, warp):
    """9.7.9.20 cvta.shared (shared -> generic) and cvta.to.shared (generic -> shared); cvta.global and
    cvta.to.global keep the address: a generic address outside the windows of the other state spaces is the
    global address itself (6.4.1, generic addressing), and a kernel's pointer arguments are such addresses."""
    if ins.has("global"):
        value = read(ins.operands[1], ins.width)
        return {ins.operands[0]: value} if isinstance(value, (int, Lanes)) else None
    if not (ins.has("shared") or ins.has("shared::cta")):
        return None
    value = read(ins.operands[1], ins.width)
    if ins.has("to"):
        if isinstance(value, SharedGeneric):
            return {ins.operands[0]: value.offset}
        return None
    if isinstance(value, int):
        return {ins.operands[0]: SharedGeneric(value)}
    return None


def selp(ins, read, width_of, warp):
    """9.7.9.3 selp d, a, b, c: a where c holds, else b."""
    w = ins.width
    return {ins.operands[0]: select(read(ins.operands[3], 1), read(ins.operands[1], w), read(ins.operands[2], w))}


COMPARISONS = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
            "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
            "lo": lambda a, b: a < b, "ls": lambda a, b: a <= b, "hi": lambda a, b: a > b,
            "hs": lambda a, b: a >= b}
_COMBINE = {"and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y}


def setp(ins, read, width_of, warp):
    """9.7.9.4 setp.cmp[.bool].type p[|q], a, b[, c]: p = (a cmp b) BOOL c, q = !(a cmp b) BOOL c."""
    if not is_integer(ins):
        return None
    comparison = next((m for m in ins.modifiers if m in COMPARISONS), None)
    combine = next((m for m in ins.modifiers if m in _COMBINE), None)
    if comparison is None:
        return None
    w = ins.width
    is_signed = ins.types()[-1].startswith("s") and comparison not in ("lo", "ls", "hi", "hs")

    def compare(x, y):
        if is_signed:
            x, y = signed(x, w), signed(y, w)
        return int(COMPARISONS[comparison](x, y))
    truth = lift(compare, read(ins.operands[1], w), read(ins.operands[2], w))
    names = _names(ins.operands[0])
    if combine is not None:
        c = read(ins.operands[3], 1)
        p = lift(lambda t, x: _COMBINE[combine](t, x) & 1, truth, c)
        q = lift(lambda t, x: _COMBINE[combine](1 - t, x) & 1, truth, c)
    else:
        p, q = truth, lift(lambda t: 1 - t, truth)
    out = {names[0]: p}
    if len(names) > 1 and names[1] != "_":
        out[names[1]] = q
    return {k: v for k, v in out.items() if k != "_"}


def ld(ins, read, width_of, warp):
    """9.7.9.8 ld: ld.param of a parameter given a value; anything loaded from memory is Unknown."""
    if not ins.has("param") or ins.operands[0].startswith("{"):
        space = next((m for m in ins.modifiers if m in ("global", "shared", "local", "const", "param")), "generic")
        return {n: Unknown(f"loaded from {space} memory (line {ins.line})") for n in _names(ins.operands[0])}
    name, _, offset = ins.operands[1].strip("[] ").partition("+")
    name, offset = name.strip(), offset.strip()
    if offset not in ("", "0"):
        return {ins.operands[0]: Unknown(f"a field at {name}+{offset} of a parameter (line {ins.line})")}
    if name not in warp.params:
        return {ins.operands[0]: Unknown(f"parameter {name} given no value (--param {name}=N)")}
    return {ins.operands[0]: warp.params[name] & mask(ins.width)}


# 9.7.13 parallel synchronization and communication --------------------------------------------------------
def elect(ins, read, width_of, warp):
    """9.7.13.x elect.sync d|p, membermask: one leader among the active lanes of the mask; p holds in it
    only, d is its lane. The manual does not say which lane leads; the executor takes the lowest active one
    (what the hardware does in every run recorded here), so only lane-independent results rest on it."""
    member = read(ins.operands[1], 32)
    if not isinstance(member, int):
        return None
    candidates = [lane for lane in range(WARP) if (member >> lane) & 1 and warp.active[lane]]
    if not candidates:
        return None
    leader = candidates[0]
    names = _names(ins.operands[0])
    out = {}
    if names and names[0] != "_":
        out[names[0]] = leader
    if len(names) > 1:
        out[names[1]] = Lanes(tuple(int(lane == leader) for lane in range(WARP)))
    return out


def shfl(ins, read, width_of, warp):
    """9.7.9.9 shfl.sync.mode.b32 d[|p], a, b, c, membermask, as the manual's pseudo-code: with
    segmask = c[12:8], maxLane = (lane & segmask) | (c[4:0] & ~segmask), minLane = lane & segmask, the
    source j is lane - b (.up, valid when j >= maxLane), lane + b (.down), lane ^ b (.bfly) or
    minLane | (b & ~segmask) (.idx), valid when j <= maxLane; an invalid j reads the lane itself."""
    mode = next((m for m in ins.modifiers if m in ("up", "down", "bfly", "idx")), None)
    if mode is None or len(ins.operands) < 5:
        return None
    a, b, c = read(ins.operands[1], 32), read(ins.operands[2], 32), read(ins.operands[3], 32)
    if not (isinstance(b, int) and isinstance(c, int)) or isinstance(a, (Unknown, SharedGeneric)):
        unknown = a if isinstance(a, Unknown) else Unknown("a shuffle with lane-varying offsets")
        return {n: unknown for n in _names(ins.operands[0]) if n != "_"}
    b, clamp, segment_mask = b & 0x1F, c & 0x1F, (c >> 8) & 0x1F
    values, valid = [], []
    for lane in range(WARP):
        max_lane = (lane & segment_mask) | (clamp & ~segment_mask)
        min_lane = lane & segment_mask
        source = {"up": lane - b, "down": lane + b, "bfly": lane ^ b,
                  "idx": min_lane | (b & ~segment_mask)}[mode]
        ok = source >= max_lane if mode == "up" else source <= max_lane
        source = source if ok else lane
        values.append(lane_of(a, source & 0x1F))
        valid.append(int(ok))
    names = [n for n in _names(ins.operands[0])]
    out = {names[0]: uniform(Lanes(tuple(values)))}
    if len(names) > 1 and names[1] != "_":
        out[names[1]] = uniform(Lanes(tuple(valid)))
    return out


def wait(ins, read, width_of, warp):
    """9.7.13.15.16 mbarrier.test_wait / try_wait waitComplete, ...: the executor follows the run in which
    every wait has completed when polled (the phases' arrivals are other warps' and the TMA's work)."""
    names = _names(ins.operands[0]) if ins.operands else []
    return {names[0]: 1} if names and names[0] != "_" else {}


HANDLERS = {"add": add, "sub": add, "mul": mul, "mad": mad, "div": div_rem, "rem": div_rem, "min": min_max,
            "max": min_max, "neg": neg_abs, "abs": neg_abs, "and": logic, "or": logic, "xor": logic, "not": logic,
            "cnot": logic, "shl": shift, "shr": shift, "bfe": bfe, "bfi": bfi, "mov": mov, "cvt": cvt,
            "cvta": cvta, "selp": selp, "setp": setp, "ld": ld, "elect": elect, "shfl": shfl}


def handler_of(ins: Instruction):
    if ins.opcode.startswith(("mbarrier.try_wait", "mbarrier.test_wait")):
        return wait
    return HANDLERS.get(ins.base)


def no_integer_path(ins: Instruction, env: dict, width_of) -> bool:
    """The definitions' path for an unguarded instruction on plain ints: none. Every instruction is run by
    its handler (handler_of), its operands read through the warp; so this writes nothing to env and says
    False (not run here). While fast paths are on (spec.fast), the executor asks the registered version
    (solver.fast.kernel_concrete_semantics.run: the common integer instructions on plain ints, the same
    values, tests/solver_tests/kernel/test_kernel_fast_semantics.py) instead, resolved once per warp (executor.Warp.on_ints)."""
    return False
