"""The syntax tree of a PTX module, as grammar.py builds it (PTX ISA 9.0 chapter 4).

A function body is a Block: its statements, labels and nested blocks in order. A nested block is a scope
(PTX ISA 4.4 and the scoping of .reg declarations, 5.1.1): what it declares, registers and labels, is
seen only inside it. scope.py resolves those names and flattens the body for the evaluators.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True)
class Declarator:
    name: str                 # as written: %r, P1, global_smem
    text: str                 # the declarator as written, whitespace collapsed: %r<475>, x[4] = {1, 2}
    count: Optional[int]      # N of a parameterized name %r<N> (it declares %r0 .. %r(N-1)), else None


@dataclass(frozen=True)
class Statement:
    line: int                 # 1-based line of its first token
    text: str                 # without the ';', operands written "a, b" (labels: "")
    label: Optional[str] = None          # set for a label (its name, without ':')
    instruction: Optional[object] = None  # instruction.Instruction, for an instruction statement
    declarators: tuple = ()              # for a declaration (.reg, .shared, ...)


@dataclass
class Block:
    items: list               # Statement | Block, in order


@dataclass
class FunctionTree:
    name: str
    kind: str                 # "entry" or "func"
    line: int
    params: list              # parameter names, in order
    directives: dict          # performance directives: ".reqntid" -> (128, 1, 1), ...
    body: Optional[Block]     # None for a declaration without a body


@dataclass(frozen=True)
class Unread:
    line: int                 # the statement's first line
    text: str                 # its text, whitespace collapsed, cut at 200 characters
    reason: str
    last_line: int = 0        # its last line


@dataclass
class ModuleTree:
    version: Optional[str] = None
    targets: list = field(default_factory=list)
    declarations: list = field(default_factory=list)     # module-level variable declarations (Statement)
    functions: list = field(default_factory=list)        # FunctionTree, in order
    unread: list = field(default_factory=list)           # Unread, in file order
