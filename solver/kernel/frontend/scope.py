"""Scopes: a { } block inside a function body declares registers and labels of its own (PTX ISA 9.0, 4.4
"the scope of a label is the block it is declared in"; 5.1.1 "registers ... declared ... in a block").
nvcc's inline-asm blocks and the CuTe DSL's barrier waits rely on it:

    { .reg .pred P1; LAB_WAIT: mbarrier.try_wait.parity.shared::cta.b64 P1, [%r1], %r2;
      @P1 bra DONE; bra LAB_WAIT; DONE: }

appears many times in one function, each block with its own P1, LAB_WAIT and DONE. flatten() gives each
block's names a name of their own (name + marker + the block's number, the marker chosen so that no name
of the module contains it), resolves every use to the innermost block that declares it, and returns the
body as one list of statements: the evaluators then need no notion of scope.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Optional

from solver.kernel.frontend.instruction import Instruction
from solver.kernel.frontend.syntax import Block, Statement

_NAME = re.compile(r"(?<![\w$%.])[%A-Za-z_$][\w$]*")
_DIGITS = re.compile(r"\d+$")


def marker_for(text: str) -> str:
    """'$$', or more '$', so that it appears nowhere in the text (no renamed name can meet a real one)."""
    marker = "$$"
    while marker in text:
        marker += "$"
    return marker


class _Names:
    """The names a block declares -> their new names, looking outwards to the enclosing blocks."""

    def __init__(self, outer: Optional["_Names"], exact: dict, ranged: dict):
        self.outer, self.exact, self.ranged = outer, exact, ranged
        self._words: Optional[tuple] = None

    def may_resolve(self, text: str) -> bool:
        """Whether some name in the text may resolve (False: resolve() gives None for every one of them, so
        the text stays as it is): a name declared here or outwards, or one that begins with a ranged prefix."""
        if self._words is None:
            exact, prefixes, scope = set(), set(), self
            while scope is not None:
                exact.update(scope.exact)
                prefixes.update(scope.ranged)
                scope = scope.outer
            self._words = (frozenset(exact), frozenset(prefixes))
        exact, prefixes = self._words
        for name in _NAME.findall(text):
            if name in exact or (prefixes and name.rstrip("0123456789") in prefixes):
                return True
        return False

    def resolve(self, name: str) -> Optional[str]:
        scope = self
        while scope is not None:
            if name in scope.exact:
                return scope.exact[name]
            digits = _DIGITS.search(name)
            if digits and scope.ranged:
                prefix = name[:digits.start()]
                found = scope.ranged.get(prefix)
                if found is not None and int(digits.group(0)) < found[1]:
                    return found[0] + digits.group(0)
            scope = scope.outer
        return None


def _declared(block: Block, suffix: str) -> _Names:
    exact, ranged = {}, {}
    for item in block.items:
        if not isinstance(item, Statement):
            continue
        if item.label is not None:
            exact[item.label] = item.label + suffix
        for declarator in item.declarators:
            if item.text.startswith(".reg"):
                if declarator.count is not None:
                    ranged[declarator.name] = (declarator.name + suffix + "_", declarator.count)
                else:
                    exact[declarator.name] = declarator.name + suffix
    return _Names(None, exact, ranged)


def flatten(body: Block, marker: str) -> list:
    """The body's statements in order, the names of nested blocks renamed (see the module)."""
    out: list = []
    counter = [0]

    def visit(block: Block, names: Optional[_Names]):
        for item in block.items:
            if isinstance(item, Block):
                counter[0] += 1
                inner = _declared(item, f"{marker}{counter[0]}")
                inner.outer = names
                visit(item, inner)
            else:
                out.append(item if names is None else _renamed(item, names))

    visit(body, None)
    return out


def _renamed(statement: Statement, names: _Names) -> Statement:
    def sub(text: str) -> str:
        if not names.may_resolve(text):
            return text
        return _NAME.sub(lambda m: names.resolve(m.group(0)) or m.group(0), text)

    if statement.label is not None:
        return replace(statement, label=names.resolve(statement.label) or statement.label)
    ins = statement.instruction
    if ins is not None:            # the operands and the guard, never the opcode
        guard = (names.resolve(ins.guard) or ins.guard) if ins.guard else None
        operands = tuple(sub(o) for o in ins.operands)
        if guard == ins.guard and operands == ins.operands:
            return statement
        text = ("" if guard is None else f"@{'!' if ins.guard_negated else ''}{guard} ") + ins.opcode + \
            (" " + ", ".join(operands) if operands else "")
        ins = Instruction(ins.line, text, guard, ins.guard_negated, ins.opcode, operands)
        return replace(statement, text=text, instruction=ins)
    if statement.declarators:      # each declarator's name, then its initializer
        written = ", ".join(d.text for d in statement.declarators)
        head = statement.text[:len(statement.text) - len(written)]
        declarators = tuple(_renamed_declarator(d, names, sub) for d in statement.declarators)
        return replace(statement, text=head + ", ".join(d.text for d in declarators), declarators=declarators)
    text = sub(statement.text)
    return statement if text == statement.text else replace(statement, text=text)


def _renamed_declarator(declarator, names: _Names, sub):
    if declarator.count is not None:
        first = names.resolve(declarator.name + "0")
        name = first[:-1] if first is not None else declarator.name
    else:
        name = names.resolve(declarator.name) or declarator.name
    rest = declarator.text[len(declarator.name):]
    return replace(declarator, name=name, text=name + sub(rest))
