"""Fast path of solver/kernel/symbolic/bounds.py's term_evaluator: a Z3 bit-vector term compiled once to a
Python function of its variables' values, instead of Z3's substitute and simplify at every assignment
(the reference, which stays the definition). bounds.py evaluates a term at a few hundred random
assignments to see whether it takes more than 64 values; through Z3 each costs about a quarter of a
millisecond, here a few microseconds.

The term is a DAG: each node is computed once, in an order where its children come first, into a local
of the generated function. Bit-vectors are unsigned ints below 2^width; the semantics are those of the
SMT-LIB theory of fixed-size bit-vectors (the operations Z3 names Z3_OP_BADD ... below), which Z3's
simplify applies:
* add, sub, mul, neg: modulo 2^width; not, and, or, xor: bitwise;
* shl, lshr: by the second operand's value, 0 from the width on; ashr: by at most the width, sign filling;
* extract [high:low], concat (the first operand highest), zero_extend, sign_extend;
* if-then-else and the comparisons (unsigned, signed in two's complement), and, or, not, =, distinct.
A division or remainder by a value that is 0 at that assignment is left to the reference for that
assignment (SMT-LIB defines it, Z3's internal forms do not; nothing is guessed here); any other operation
makes the compilation decline, and bounds.py takes the reference for that term. So the values are the
reference's at every assignment.

tests/solver_tests/kernel/test_kernel_bounds.py::test_the_compiled_term_gives_z3s_values checks the two equal on random
terms of every operation listed, at random and edge assignments.
"""
from __future__ import annotations

from typing import Optional

import z3

from spec import fast
from solver.kernel.symbolic import bounds

_BINARY = {z3.Z3_OP_BSUB: "({0} - {1}) & {m}", z3.Z3_OP_BLSHR: "({0} >> {1} if {1} < {w} else 0)",
           z3.Z3_OP_BSHL: "(({0} << {1}) & {m} if {1} < {w} else 0)",
           z3.Z3_OP_BASHR: "(_signed({0}, {w}) >> min({1}, {w})) & {m}",
           z3.Z3_OP_ULEQ: "{0} <= {1}", z3.Z3_OP_ULT: "{0} < {1}", z3.Z3_OP_UGEQ: "{0} >= {1}",
           z3.Z3_OP_UGT: "{0} > {1}",
           z3.Z3_OP_SLEQ: "_signed({0}, {cw}) <= _signed({1}, {cw})",
           z3.Z3_OP_SLT: "_signed({0}, {cw}) < _signed({1}, {cw})",
           z3.Z3_OP_SGEQ: "_signed({0}, {cw}) >= _signed({1}, {cw})",
           z3.Z3_OP_SGT: "_signed({0}, {cw}) > _signed({1}, {cw})"}
_FOLDED = {z3.Z3_OP_BADD: ("+", True), z3.Z3_OP_BMUL: ("*", True), z3.Z3_OP_BAND: ("&", False),
           z3.Z3_OP_BOR: ("|", False), z3.Z3_OP_BXOR: ("^", False)}
_DIVISIONS = {z3.Z3_OP_BUDIV: "_udiv", z3.Z3_OP_BUDIV_I: "_udiv", z3.Z3_OP_BUREM: "_urem",
              z3.Z3_OP_BUREM_I: "_urem", z3.Z3_OP_BSDIV: "_sdiv", z3.Z3_OP_BSDIV_I: "_sdiv",
              z3.Z3_OP_BSREM: "_srem", z3.Z3_OP_BSREM_I: "_srem", z3.Z3_OP_BSMOD: "_smod",
              z3.Z3_OP_BSMOD_I: "_smod"}


class _ByZero(Exception):
    pass


def _signed(value: int, width: int) -> int:
    return value - (1 << width) if value >> (width - 1) else value


def _divisor(value: int) -> int:
    if value == 0:
        raise _ByZero
    return value


def _udiv(a: int, b: int, w: int) -> int:
    return a // _divisor(b)


def _urem(a: int, b: int, w: int) -> int:
    return a % _divisor(b)


def _truncated(a: int, b: int) -> int:
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b >= 0) else -quotient


def _sdiv(a: int, b: int, w: int) -> int:
    return _truncated(_signed(a, w), _signed(_divisor(b), w)) & ((1 << w) - 1)


def _srem(a: int, b: int, w: int) -> int:      # the sign of the dividend
    x, y = _signed(a, w), _signed(_divisor(b), w)
    return (x - _truncated(x, y) * y) & ((1 << w) - 1)


def _smod(a: int, b: int, w: int) -> int:      # the sign of the divisor (Python's %)
    return (_signed(a, w) % _signed(_divisor(b), w)) & ((1 << w) - 1)


_HELPERS = {"_signed": _signed, "_udiv": _udiv, "_urem": _urem, "_sdiv": _sdiv, "_srem": _srem, "_smod": _smod}


class _Declined(Exception):
    pass


def _expression(node, names: list, width_of) -> str:
    """The Python expression of one node over its children's locals `names`."""
    if z3.is_bv_value(node):
        return str(node.as_long())
    if z3.is_true(node) or z3.is_false(node):
        return str(z3.is_true(node))
    kind = node.decl().kind()
    w = node.size() if z3.is_bv(node) else None
    m = (1 << w) - 1 if w else None
    if kind in _FOLDED:
        operator, masked = _FOLDED[kind]
        joined = f" {operator} ".join(names)
        return f"({joined}) & {m}" if masked else f"({joined})"
    if kind in _BINARY and len(names) == 2:
        child_width = width_of[0]
        return _BINARY[kind].format(*names, m=m, w=w, cw=child_width)
    if kind in _DIVISIONS and len(names) == 2:
        return f"{_DIVISIONS[kind]}({names[0]}, {names[1]}, {w})"
    if kind == z3.Z3_OP_BNEG:
        return f"(-{names[0]}) & {m}"
    if kind == z3.Z3_OP_BNOT:
        return f"{names[0]} ^ {m}"
    if kind == z3.Z3_OP_EXTRACT:
        high, low = node.params()
        return f"({names[0]} >> {low}) & {(1 << (high - low + 1)) - 1}"
    if kind == z3.Z3_OP_CONCAT:
        text, shift = [], 0
        for name, width in reversed(list(zip(names, width_of))):
            text.append(f"({name} << {shift})" if shift else name)
            shift += width
        return "(" + " | ".join(reversed(text)) + ")"
    if kind == z3.Z3_OP_ZERO_EXT:
        return names[0]
    if kind == z3.Z3_OP_SIGN_EXT:
        return f"_signed({names[0]}, {width_of[0]}) & {m}"
    if kind == z3.Z3_OP_ITE:
        return f"({names[1]} if {names[0]} else {names[2]})"
    if kind == z3.Z3_OP_EQ and len(names) == 2:
        return f"{names[0]} == {names[1]}"
    if kind == z3.Z3_OP_DISTINCT and len(names) == 2:
        return f"{names[0]} != {names[1]}"
    if kind == z3.Z3_OP_NOT:
        return f"not {names[0]}"
    if kind == z3.Z3_OP_AND:
        return "(" + " and ".join(names) + ")"
    if kind == z3.Z3_OP_OR:
        return "(" + " or ".join(names) + ")"
    raise _Declined(node.decl().name())


@fast.fast_version_of(bounds.term_evaluator)
def term_evaluator(term, variables: list):
    """bounds.term_evaluator's function, compiled (see the module); the reference's where a node of the term
    is not one listed."""
    reference = bounds.term_evaluator(term, variables)
    try:
        return _compile(term, variables, reference)
    except _Declined:
        return reference


def _compile(term, variables: list, reference):
    if not z3.is_bv(term):
        raise _Declined("not a bit-vector term")
    local: dict = {}                 # node id -> the local holding its value
    lines: list = []
    positions = {v.get_id(): k for k, v in enumerate(variables)}
    stack = [(term, False)]
    while stack:                     # children before their node, each node once
        node, expanded = stack.pop()
        key = node.get_id()
        if key in local:
            continue
        if z3.is_const(node) and node.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            if key not in positions or not z3.is_bv(node):
                raise _Declined("a variable not given")
            local[key] = f"v[{positions[key]}]"
            continue
        children = node.children()
        if not expanded:
            stack.append((node, True))
            stack.extend((child, False) for child in children if child.get_id() not in local)
            continue
        names = [local[child.get_id()] for child in children]
        widths = [child.size() if z3.is_bv(child) else None for child in children]
        local[key] = f"n{len(lines)}"
        lines.append(f"    n{len(lines)} = {_expression(node, names, widths)}")
    source = "def value_at(v):\n" + "\n".join(lines) + f"\n    return {local[term.get_id()]}\n"
    namespace = dict(_HELPERS)
    exec(compile(source, "<term>", "exec"), namespace)   # noqa: S102 (our own text, from the term's operations)
    compiled = namespace["value_at"]

    def value_at(values: list) -> Optional[int]:
        try:
            return compiled(values)
        except _ByZero:
            return reference(values)
    return value_at
