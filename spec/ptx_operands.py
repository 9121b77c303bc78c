"""An instruction statement's operands (PTX ISA 9.0, 4.4 "Instruction Statements": an opcode followed by
a comma-separated list of zero or more operands).

A comma inside a vector `{a, b}`, an address `[a + 8]` or a call's parameter list `(a, b)` does not
separate operands: those are kept whole. Every comma outside them separates two operands, so a stray
comma gives an empty operand ("") rather than disappearing: a reader that binds operands to an
instruction's form can then refuse it (spec/tmem/instruction.py), and the kernel reader keeps the
statement as written (solver/kernel/frontend/instruction.py).
"""
from __future__ import annotations

import re

_OUTSIDE = re.compile(r"[,{}\[\]()]")       # what splits or nests, outside brackets
_INSIDE = re.compile(r"[{}\[\]()]")         # what nests, inside them (their commas are skipped at once)


def split_operands(text: str) -> tuple:
    """The operands of `text` (what follows the opcode, without the ';'), each stripped; () when it holds
    none."""
    parts, depth, start, at = [], 0, 0, 0
    while True:
        found = (_INSIDE if depth else _OUTSIDE).search(text, at)
        if found is None:
            break
        char, at = found.group(0), found.end()
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        else:
            parts.append(text[start:found.start()].strip())
            start = at
    tail = text[start:].strip()
    if tail or parts:
        parts.append(tail)
    return tuple(parts)
