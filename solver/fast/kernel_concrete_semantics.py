"""Fast path of solver/kernel/concrete/semantics.py, the executor's optimised path: the common integer
instructions on plain ints, beside semantics.py (the reference, which stays the definition: its
no_integer_path runs nothing, and every instruction goes to its handler).

A kernel's slice is mostly `add`, `setp`, `cvt`, `shl`, `and` on registers that hold one int for the
whole warp. For those, semantics.py reads each operand through the warp (strip, negation, special
registers, symbols, lanes), lifts the operation over lanes and fits the result: general, and most of the
executor's time. Here each such instruction gets a plan once (which operands are registers, which are
constants, the masks of its widths and the int function to apply), and a run that applies it when every
register it reads holds an int, or a plain Unknown where the handler lifts (values.lift gives the first
Unknown operand; the value sets run blocks on Unknown inputs often). Anything else (a lane-varying value,
an accumulator's tag, a special register, a symbol, a guard, a form not listed) returns False and the
executor takes semantics.py. The functions
below are the same formulas as semantics.py's, on ints; tests/solver_tests/kernel/test_kernel_fast_semantics.py checks the
two on random operands of every form planned, and on whole runs of corpus kernels (fast paths on and off).

The executor resolves this function once per warp of a run (executor.Warp.on_ints), not per instruction.
"""
from __future__ import annotations

from spec import fast
from solver.kernel.concrete import semantics
from solver.kernel.concrete.semantics import COMPARISONS, is_integer     # the reference's own
from solver.kernel.concrete.values import Unknown, mask, signed
from solver.kernel.frontend.instruction import FLOAT_BITS, TYPE_BITS, parse_integer

_NO_PLAN = object()
# the handlers that compute their result with values.lift (mov: the value read): an operand that is a plain
# Unknown makes the result the first such operand, in the order the handler reads them (first_unknown)
LIFTED = frozenset(("add", "sub", "and", "or", "xor", "not", "shl", "shr", "mov", "cvt", "setp", "mul", "mad"))


@fast.fast_version_of(semantics.no_integer_path)
def run(ins, env: dict, width_of) -> bool:
    """Apply `ins` to env if it has a plan and every register it reads holds an int; False otherwise
    (nothing written then)."""
    plan = ins.__dict__.get("_fast_plan", None)
    if plan is None:
        plan = ins.__dict__["_fast_plan"] = _plan(ins, width_of) or _NO_PLAN
    if plan is _NO_PLAN:
        return False
    readers, compute, destination, destination_mask, lifted = plan
    values, unknown = [], None
    for is_register, what, narrow in readers:
        if is_register:
            value = env.get(what)
            if value.__class__ is not int:
                if value.__class__ is not Unknown or not lifted:
                    return False
                if unknown is None:
                    unknown = value             # (the first, in the order the handler reads them)
                continue
            if narrow is not None:
                value &= narrow
        else:
            value = what
        values.append(value)
    env[destination] = unknown if unknown is not None else compute(*values) & destination_mask
    return True


def _reader(operand: str, width: int, width_of):
    """(is a register, its name or the constant, the mask a register is cut to when read narrower)."""
    text = operand.strip()
    number = parse_integer(text)
    if number is not None:
        return False, number & mask(width), None
    match = FLOAT_BITS.match(text)
    if match:
        return False, int(match.group(2), 16) & mask(width), None
    if not text or not (text[0] == "%" or text[0].isalpha() or text[0] in "_$") or "[" in text or "{" in text \
            or "+" in text or "-" in text or text.startswith("!"):
        return None
    return True, text, (mask(width) if width < width_of(text) else None)


def _plan(ins, width_of):
    """(readers, compute on ints, destination, its mask), or None: not a form planned here."""
    if ins.guard is not None or not ins.operands:
        return None
    destination = ins.operands[0].strip()
    if not destination or destination[0] in "{[" or "|" in destination:
        return None
    base, w = ins.base, ins.width
    m = mask(w)
    is_signed = bool(ins.types()) and ins.types()[-1].startswith("s")
    sources, compute = None, None
    plain_integer = is_integer(ins) and not ins.has("sat") and not ins.has("cc")
    if base in ("add", "sub") and plain_integer and len(ins.operands) == 3:
        sources = [(1, w), (2, w)]
        compute = (lambda a, b: a - b) if base == "sub" else (lambda a, b: a + b)
    elif base in ("and", "or", "xor") and len(ins.operands) == 3:
        sources = [(1, w), (2, w)]
        compute = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}[base]
    elif base == "not" and len(ins.operands) == 2:
        sources, compute = [(1, w)], (lambda a: ~a & m)
    elif base in ("shl", "shr") and len(ins.operands) == 3:
        sources = [(1, w), (2, 32)]
        if base == "shl":
            compute = lambda a, n: a << min(n, w)                   # noqa: E731
        elif is_signed:
            compute = lambda a, n: signed(a, w) >> min(n, w)        # noqa: E731
        else:
            compute = lambda a, n: a >> min(n, w)                   # noqa: E731
    elif base == "mov" and len(ins.operands) == 2 and not ins.operands[1].strip().startswith("{"):
        sources, compute = [(1, w)], (lambda a: a)
    elif base == "cvt" and len(ins.types()) == 2 and is_integer(ins) and not ins.has("sat") and len(ins.operands) == 2:
        to_width, from_width = TYPE_BITS[ins.types()[0]], TYPE_BITS[ins.types()[1]]
        sources = [(1, from_width)]
        if ins.types()[1].startswith("s"):
            compute = lambda a: signed(a, from_width) & mask(to_width)     # noqa: E731
        else:
            compute = lambda a: a & mask(min(to_width, from_width))        # noqa: E731
    elif base == "selp" and len(ins.operands) == 4:
        sources, compute = [(1, w), (2, w), (3, 1)], (lambda a, b, c: a if c else b)
    elif base == "setp" and is_integer(ins) and len(ins.operands) == 3:
        comparison = next((x for x in ins.modifiers if x in COMPARISONS), None)
        if comparison is None or any(x in ("and", "or", "xor") for x in ins.modifiers):
            return None
        by_sign = is_signed and comparison not in ("lo", "ls", "hi", "hs")
        test = COMPARISONS[comparison]
        sources = [(1, w), (2, w)]
        compute = (lambda a, b: int(test(signed(a, w), signed(b, w)))) if by_sign else (lambda a, b: int(test(a, b)))
    elif base in ("mul", "mad") and plain_integer:
        part = "hi" if ins.has("hi") else "wide" if ins.has("wide") else "lo"
        wide = 2 * w if part == "wide" else w       # the result's width (mad's c is read at it too)
        top, low, kept = 1 << w, mask(w), mask(wide)

        def product(a, b):
            if is_signed:
                a, b = (a - top if a >> (w - 1) else a), (b - top if b >> (w - 1) else b)
            full = a * b
            return (full >> w) & low if part == "hi" else full & kept
        if base == "mul" and len(ins.operands) == 3:
            sources, compute = [(1, w), (2, w)], product
        elif base == "mad" and len(ins.operands) == 4:
            sources, compute = [(1, w), (2, w), (3, wide)], (lambda a, b, c: product(a, b) + c)
        else:
            return None
        m = kept                                    # what the sum or product is cut to
    else:
        return None
    readers = []
    for index, width in sources:
        reader = _reader(ins.operands[index], width, width_of)
        if reader is None:
            return None
        readers.append(reader)
    out = compute if base in ("setp", "cvt", "selp", "mov") else (lambda *xs, f=compute, keep=m: f(*xs) & keep)
    return readers, out, destination, mask(width_of(destination)), base in LIFTED
