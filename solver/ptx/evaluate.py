"""The evaluator: walks one function's statements in order with a register environment of partly known
words, and hands each MMA statement, with the environment at that point, to a visitor.

Control flow, first iteration only:
* a forward branch carries a copy of the environment to its label; at a label the environments that
  reach it (fall-through and forward branches) meet, each register keeping the bits they agree on;
* a backward branch closes a loop: the loop body is evaluated once, as its first iteration (a register
  it updates holds its value from before the loop when read in the body); leaving the loop (falling
  through the back branch, or branching past it), every register the body writes becomes unknown,
  since later iterations may have changed it;
* a predicated instruction whose predicate is unknown leaves each register it writes as what both
  outcomes agree on; brx (indirect branches) makes every label start from nothing known.

Shared-memory symbols have addresses: --smem-base plus their place in declaration order (statics the
function names, each at its .align), then the dynamic (.extern) arrays, all at one address (CUDA: every
extern __shared__ array starts at the dynamic shared memory). ptxas may lay statics out otherwise.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Optional

from solver.ptx import bits, semantics
from solver.ptx.instruction import Instruction, TYPE_BITS, destinations, parse_instruction
from solver.ptx.source import Function, Module

DEFAULT_SMEM_BASE = 0x400   # the dynamic shared-memory base the H100 harness saw (hardware/README.md)
_INTEGER = re.compile(r"^(-?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uU]?$")
_FLOAT_BITS = re.compile(r"^0([fFdD])([0-9a-fA-F]+)$")
_SYMBOL = re.compile(r"^([A-Za-z_$][\w$]*)\s*(?:([+-])\s*(\d+|0[xX][0-9a-fA-F]+))?$")
_REG_DECLARATION = re.compile(r"\.reg\s+(?:\.v\d\s+)?\.(\w+)\s+(.*)")


@dataclass(frozen=True)
class Loop:
    header: int             # statement index of the label
    back_branch: int        # statement index of the branch back to it
    header_line: int
    branch_line: int
    written: frozenset      # registers the body writes


@dataclass
class Context:
    """What the evaluation of one function knows from outside it."""
    module: Module
    function: Function
    smem_base: int = DEFAULT_SMEM_BASE
    params: dict = field(default_factory=dict)

    def __post_init__(self):
        self.symbols = shared_addresses(self.module, self.function, self.smem_base)


def _align(address: int, alignment: int) -> int:
    return -(-address // alignment) * alignment


def shared_addresses(module: Module, function: Function, base: int) -> dict:
    """name -> shared address of the shared symbols the function can name (see the module docstring)."""
    named = set(re.findall(r"[A-Za-z_$][\w$]*", " ".join(s.text for s in function.statements)))
    declared = [s for s in module.shared if s.name in named] + list(function.shared)
    addresses, cursor = {}, base
    for symbol in declared:
        if symbol.size is not None:
            cursor = _align(cursor, symbol.align)
            addresses[symbol.name] = cursor
            cursor += symbol.size
    dynamic = [s for s in declared if s.size is None]
    if dynamic:
        start = _align(cursor, max(s.align for s in dynamic))
        for symbol in dynamic:
            addresses[symbol.name] = start
    return addresses


UNDECLARED_WIDTHS = {"%rd": 64, "%fd": 64, "%rs": 16, "%h": 16, "%p": 1}


def parse_integer(text: str) -> Optional[int]:
    m = _INTEGER.match(text.strip())
    if not m:
        return None
    digits = m.group(2)
    if digits.lower().startswith("0x"):
        value = int(digits, 16)
    elif digits.lower().startswith("0b"):
        value = int(digits[2:], 2)
    elif len(digits) > 1 and digits.startswith("0"):
        value = int(digits, 8)
    else:
        value = int(digits)
    return -value if m.group(1) else value


class Machine:
    """The register environment of one path and how operands read from it."""

    def __init__(self, context: Context):
        self.context = context
        self.env: dict = {}
        self.declared: dict = {}        # register name or prefix -> width

    def width_of(self, name: str) -> int:
        if name in self.declared:
            return self.declared[name]
        prefix = name.rstrip("0123456789")
        # an undeclared register (a trimmed excerpt): the width nvcc's and Triton's names imply
        return self.declared.get(prefix, UNDECLARED_WIDTHS.get(prefix, 32))

    def declare(self, text: str) -> None:
        m = _REG_DECLARATION.match(text)
        if not m or m.group(1) not in TYPE_BITS:
            return
        width = TYPE_BITS[m.group(1)]
        for item in m.group(2).split(","):
            name = item.strip().split("<")[0].strip()
            if name:
                self.declared[name] = width

    def read(self, operand: str, width: int) -> bits.Bits:
        operand = operand.strip()
        if operand.startswith("!"):
            return bits.not_(self.read(operand[1:], 1))
        if operand.startswith("%"):
            value = self.env.get(operand)
            if value is None:
                return bits.unknown(width)
            return value if value.width == width else bits.resize(value, width)
        number = parse_integer(operand)
        if number is not None:
            return bits.const(number, width)
        m = _FLOAT_BITS.match(operand)
        if m:
            return bits.const(int(m.group(2), 16), width)
        m = _SYMBOL.match(operand)
        if m and m.group(1) in self.context.symbols:
            offset = parse_integer(m.group(3)) if m.group(3) else 0
            address = self.context.symbols[m.group(1)] + (-offset if m.group(2) == "-" else offset)
            return bits.const(address, width)
        return bits.unknown(width)

    def write(self, name: str, value: bits.Bits) -> None:
        width = self.width_of(name)
        self.env[name] = value if value.width == width else bits.resize(value, width)

    def forget(self, names) -> None:
        for name in names:
            self.env.pop(name, None)


def meet(environments: list) -> dict:
    """The environment where paths join: each register with the bits every path agrees on."""
    first, rest = environments[0], environments[1:]
    if not rest:
        return dict(first)
    merged = {}
    for name, value in first.items():
        others = [e.get(name) for e in rest]
        if any(o is None for o in others):
            continue
        for other in others:
            value = bits.join(value, other)
        merged[name] = value
    return merged


def execute(ins: Instruction, machine: Machine) -> None:
    """Run one instruction: its modelled result, or unknown destinations."""
    handler = semantics.HANDLERS.get(ins.base)
    result = None
    try:
        if ins.base == "ld":
            result = semantics.ld(ins, machine.read, machine.width_of, machine.context.params)
        elif handler is not None and len(ins.operands) >= 2:
            result = handler(ins, machine.read, machine.width_of)
    except (IndexError, ValueError):
        result = None
    written = destinations(ins)
    if ins.guard is not None:
        guard = machine.read(ins.guard, 1)
        if guard.is_known and bool(guard.value) == ins.guard_negated:
            return                                     # the predicate is known false
        if not guard.is_known:                         # either outcome: keep what both agree on
            for name in written:
                old = machine.env.get(name)
                new = (result or {}).get(name)
                if old is None or new is None:
                    machine.forget([name])
                else:
                    machine.write(name, bits.join(old, new))
            return
    if result is None:
        machine.forget(written)
        return
    for name in written:
        if name in result:
            machine.write(name, result[name])
        else:
            machine.forget([name])


@dataclass
class Walk:
    """What one function's walk found: its loops, and whatever the visitor collected."""
    loops: list
    indirect_branches: bool


def _instructions(function: Function) -> list:
    """(statement, Instruction or None) per statement: None for labels and directives."""
    out = []
    for s in function.statements:
        if s.label is not None or s.text.startswith("."):
            out.append((s, None))
        else:
            out.append((s, parse_instruction(s.line, s.text)))
    return out


def _branch_target(ins: Instruction) -> Optional[str]:
    if ins.base == "bra" and ins.operands:
        return ins.operands[0].strip()
    return None


def find_loops(items: list) -> list:
    labels = {s.label: i for i, (s, _) in enumerate(items) if s.label is not None}
    loops = []
    for i, (s, ins) in enumerate(items):
        target = _branch_target(ins) if ins is not None else None
        if target in labels and labels[target] <= i:
            h = labels[target]
            written = set()
            for _, body in items[h:i + 1]:
                if body is not None:
                    written.update(destinations(body))
            loops.append(Loop(h, i, items[h][0].line, s.line, frozenset(written)))
    return loops


def walk(context: Context, visit: Callable) -> Walk:
    """Evaluate the function; visit(instruction, machine, loops containing it) at every MMA statement."""
    items = _instructions(context.function)
    labels = {s.label: i for i, (s, _) in enumerate(items) if s.label is not None}
    loops = find_loops(items)
    indirect = any(ins is not None and ins.base == "brx" for _, ins in items)
    machine = Machine(context)
    pending = defaultdict(list)
    reachable = True
    for i, (statement, ins) in enumerate(items):
        if statement.label is not None:
            incoming = pending.pop(statement.label, []) + ([machine.env] if reachable else [])
            machine.env = meet(incoming) if incoming and not indirect else {}
            reachable = True
            continue
        if ins is None:
            machine.declare(statement.text)
            continue
        if not reachable:                              # dead code after a jump: nothing known
            machine.env, reachable = {}, True
        if ins.opcode.startswith(("wgmma.mma_async", "tcgen05.mma")):
            visit(ins, machine, [loop for loop in loops if loop.header <= i <= loop.back_branch])
        target = _branch_target(ins)
        guard = machine.read(ins.guard, 1) if ins.guard else bits.const(1, 1)
        if target in labels and labels[target] <= i and ins.guard:
            guard = bits.unknown(1)     # a loop's exit test: its first-iteration value says nothing of the last
        taken_always = guard.is_known and bool(guard.value) != ins.guard_negated
        taken_never = guard.is_known and not taken_always
        if target is not None and target in labels:
            if labels[target] > i and not taken_never:
                snapshot = dict(machine.env)
                for loop in loops:
                    if loop.header <= i <= loop.back_branch < labels[target]:
                        for name in loop.written:
                            snapshot.pop(name, None)
                pending[target].append(snapshot)
            if labels[target] <= i and not taken_always:
                for loop in loops:                    # falling out of the loop
                    if loop.back_branch == i:
                        machine.forget(loop.written)
            if taken_always:
                reachable = False
            continue
        if ins.base in ("ret", "exit", "brx", "trap") and taken_always:
            reachable = False
            continue
        execute(ins, machine)
    return Walk(loops, indirect)
