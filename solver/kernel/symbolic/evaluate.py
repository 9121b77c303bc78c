"""The evaluator: walks one function's statements in order with a register environment of partly known
words, and hands each MMA statement, with the environment at that point, to a visitor.

Control flow, first iteration only:
* a forward branch carries the environment to its label; at a label the environments that reach it
  (fall-through and forward branches) meet, each register keeping the bits they agree on (the branches
  to one label are met as they come, so one environment waits per label);
* a backward branch closes a loop: the loop body is evaluated once, as its first iteration (a register
  it updates holds its value from before the loop when read in the body); leaving the loop (falling
  through the back branch, or branching past it), every register the body writes becomes unknown,
  since later iterations may have changed it;
* a predicated instruction whose predicate is unknown leaves each register it writes as what both
  outcomes agree on; brx (indirect branches) makes every label start from nothing known.

The walk is linear in the function's size: the loops a forward branch leaves are found with a segment
tree, what a loop writes with a bisection per register, and copying, meeting and forgetting environments
(their cost is the number of registers they hold) draws on a work bound proportional to the function's
statements (WORK_PER_STATEMENT, WORK_FLOOR). Past it, nothing is carried: a forward branch brings its label
nothing known, a label reached so starts from nothing, a loop exit forgets every register; each MMA met
from there on says so (Machine.work_bound_line). Knowing less is never wrong: every bit still known is.

Shared-memory symbols have addresses: --smem-address plus their place in declaration order (statics the
function names, each at its .align), then the dynamic (.extern) arrays, all at one address (CUDA: every
extern __shared__ array starts at the dynamic shared memory). ptxas may lay statics out otherwise.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from solver.kernel.symbolic import bits
from solver.kernel.symbolic import semantics
from solver.kernel.frontend.instruction import (FLOAT_BITS, REG_DECLARATION, SYMBOL_OFFSET, TYPE_BITS, Instruction,
                                                destinations, parse_integer)
from solver.kernel.frontend.source import Function, Module

# The walk's work bound: registers copied, met or forgotten at branches, labels and loop exits, per
# statement of the function and at least. The Triton, CuTe DSL and hand-written kernels of
# tests/fixtures/ptx spend under one per statement (818 for Triton's 1,193-statement tcgen05 kernel).
WORK_PER_STATEMENT = 16
WORK_FLOOR = 1 << 20

DEFAULT_SMEM_BASE = 0x400   # the dynamic shared-memory base the H100 harness saw (hardware/README.md)
_NAME = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(frozen=True)
class Loop:
    header: int             # statement index of the label
    back_branch: int        # statement index of the branch back to it
    header_line: int
    branch_line: int


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
    named = {m.group(0) for s in function.statements for m in _NAME.finditer(s.text)}
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


class Machine:
    """The register environment of one path and how operands read from it."""

    def __init__(self, context: Context):
        self.context = context
        self.env: dict = {}
        self.declared: dict = {}        # register name or prefix -> width
        self.work_bound_line: Optional[int] = None   # where the walk ran out of work (see the module)

    def width_of(self, name: str) -> int:
        if name in self.declared:
            return self.declared[name]
        prefix = name.rstrip("0123456789")
        # an undeclared register (a trimmed excerpt): the width nvcc's and Triton's names imply
        return self.declared.get(prefix, UNDECLARED_WIDTHS.get(prefix, 32))

    def declare(self, text: str) -> None:
        m = REG_DECLARATION.match(text)
        if not m or m.group(1) not in TYPE_BITS:
            return
        width = TYPE_BITS[m.group(1)]
        for item in m.group(2).split(","):
            name = item.strip().split("<")[0].strip()
            if name:
                self.declared[name] = width

    def read(self, operand: str, width: int) -> bits.Bits:
        operand = operand.strip()
        negations = len(operand) - len(operand.lstrip("!"))
        if negations:                                  # !p, !!p, ...: a predicate, negated or not
            value = self.read(operand[negations:], 1)
            return bits.not_(value) if negations % 2 else value
        if operand.startswith("%"):
            value = self.env.get(operand)
            if value is None:
                return bits.unknown(width)
            return value if value.width == width else bits.resize(value, width)
        number = parse_integer(operand)
        if number is not None:
            return bits.const(number, width)
        m = FLOAT_BITS.match(operand)
        if m:
            return bits.const(int(m.group(2), 16), width)
        m = SYMBOL_OFFSET.match(operand)
        if m and m.group(1) in self.context.symbols:
            offset = parse_integer(m.group(3)) if m.group(3) else 0
            if offset is None:                         # an offset no 64-bit literal is
                return bits.unknown(width)
            address = self.context.symbols[m.group(1)] + (-offset if m.group(2) == "-" else offset)
            return bits.const(address, width)
        return bits.unknown(width)

    def write(self, name: str, value: bits.Bits) -> None:
        width = self.width_of(name)
        self.env[name] = value if value.width == width else bits.resize(value, width)

    def forget(self, names) -> None:
        for name in names:
            self.env.pop(name, None)


def meet(first: dict, other: dict) -> dict:
    """The environment where two paths join: each register with the bits both agree on."""
    merged = {}
    for name, value in first.items():
        theirs = other.get(name)
        if theirs is not None:
            merged[name] = bits.join(value, theirs)
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
    except IndexError:                                 # fewer operands than the opcode takes: malformed,
        result = None                                  # its destinations unknown (never a guess)
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
        out.append((s, s.instruction))
    return out


def _branch_target(ins: Instruction) -> Optional[str]:
    if ins.base == "bra" and ins.operands:
        return ins.operands[0].strip()
    return None


def _labels(items: list) -> dict:
    return {s.label: i for i, (s, _) in enumerate(items) if s.label is not None}


def find_loops(items: list) -> list:
    """One loop per backward branch (a bra to a label at or before it), in the order of their branches."""
    labels, loops = _labels(items), []
    for i, (s, ins) in enumerate(items):
        target = _branch_target(ins) if ins is not None else None
        if target in labels and labels[target] <= i:
            h = labels[target]
            loops.append(Loop(h, i, items[h][0].line, s.line))
    return loops


class Writes:
    """Where each register is written: the statement indexes whose instruction names it as a destination
    (ascending), so that "is it written between statements a and b" is one bisection."""

    def __init__(self, items: list):
        self.at: dict = {}
        for i, (_, ins) in enumerate(items):
            if ins is not None:
                for name in destinations(ins):
                    self.at.setdefault(name, []).append(i)

    def between(self, name: str, first: int, last: int) -> bool:
        positions = self.at.get(name, ())
        k = bisect.bisect_left(positions, first)
        return k < len(positions) and positions[k] <= last


class LoopsEntered:
    """The loops whose headers the walk has reached, for two questions at statement i: the loop containing
    i whose back branch comes last (the one a site is said to be in), and the loops a forward branch from i
    to statement t leaves (header <= i <= back branch < t). Those all contain i, so what they write is
    what [least header, last back branch] writes; a segment tree over back-branch indexes gives both ends
    in O(log n)."""

    def __init__(self, loops: list, size: int):
        self.waiting = sorted(loops, key=lambda loop: loop.header)
        self.next = 0
        self.last_ending: Optional[Loop] = None
        self.none = size                   # a header past every statement: no loop
        self.width = 1 << max(1, (size - 1).bit_length()) if loops else 0
        self.least_header = [self.none] * (2 * self.width)
        self.last_branch = [-1] * (2 * self.width)

    def reach(self, i: int) -> None:
        """The walk is at statement i: loops with their header at or before it are entered."""
        while self.next < len(self.waiting) and self.waiting[self.next].header <= i:
            loop = self.waiting[self.next]
            self.next += 1
            if self.last_ending is None or loop.back_branch > self.last_ending.back_branch:
                self.last_ending = loop
            k = loop.back_branch + self.width
            self.least_header[k], self.last_branch[k] = loop.header, loop.back_branch
            while k > 1:
                k //= 2
                self.least_header[k] = min(self.least_header[2 * k], self.least_header[2 * k + 1])
                self.last_branch[k] = max(self.last_branch[2 * k], self.last_branch[2 * k + 1])

    def containing(self, i: int) -> Optional[Loop]:
        loop = self.last_ending
        return loop if loop is not None and loop.back_branch >= i else None

    def left(self, i: int, target: int) -> Optional[tuple]:
        """(least header, last back branch) of the loops a branch from i to target leaves, or None."""
        if not self.width:
            return None
        header, branch = self.none, -1
        low, high = i + self.width, target + self.width      # back branches in [i, target)
        while low < high:
            if low & 1:
                header, branch = min(header, self.least_header[low]), max(branch, self.last_branch[low])
                low += 1
            if high & 1:
                high -= 1
                header, branch = min(header, self.least_header[high]), max(branch, self.last_branch[high])
            low //= 2
            high //= 2
        return (header, branch) if branch >= 0 else None


class Work:
    """The walk's work bound (see the module): each environment copied, met or forgotten costs its size."""

    def __init__(self, units: int):
        self.left = units

    def spend(self, units: int) -> bool:
        if units <= self.left:
            self.left -= units
            return True
        self.left = 0
        return False


def _arriving(waiting: Optional[dict], env: dict, writes: Optional[Writes], left: Optional[tuple]) -> dict:
    """What a label's forward branches agree on with one more: the branch's environment, less what the
    loops it leaves write (their later iterations may have changed it), met with those before it."""
    def kept(name: str) -> bool:
        return left is None or not writes.between(name, left[0], left[1])
    if waiting is None:
        return {name: value for name, value in env.items() if kept(name)}
    return {name: bits.join(value, env[name]) for name, value in waiting.items() if name in env and kept(name)}


def walk(context: Context, visit: Callable) -> Walk:
    """Evaluate the function; visit(instruction, machine, the loop containing it or None) at every MMA
    statement (the containing loop whose back branch comes last)."""
    items = _instructions(context.function)
    labels = _labels(items)
    loops = find_loops(items)
    indirect = any(ins is not None and ins.base == "brx" for _, ins in items)
    writes = Writes(items) if loops else None
    entered = LoopsEntered(loops, len(items))
    work = Work(WORK_FLOOR + WORK_PER_STATEMENT * len(items))
    machine = Machine(context)
    waiting: dict = {}                 # label -> what the forward branches to it so far agree on
    reachable = True

    def affordable(units: int, line: int) -> bool:
        if work.spend(units):
            return True
        if machine.work_bound_line is None:
            machine.work_bound_line = line
        return False

    for i, (statement, ins) in enumerate(items):
        entered.reach(i)
        if statement.label is not None:
            arriving = waiting.pop(statement.label, None)
            if indirect or (arriving is None and not reachable):
                machine.env = {}
            elif arriving is not None and not reachable:
                machine.env = arriving
            elif arriving is not None:
                machine.env = meet(arriving, machine.env) if affordable(len(arriving), statement.line) else {}
            reachable = True
            continue
        if ins is None:
            machine.declare(statement.text)
            continue
        if not reachable:                              # dead code after a jump: nothing known
            machine.env, reachable = {}, True
        if ins.opcode.startswith(("wgmma.mma_async", "tcgen05.mma")):
            visit(ins, machine, entered.containing(i))
        target = _branch_target(ins)
        guard = machine.read(ins.guard, 1) if ins.guard else bits.const(1, 1)
        if target in labels and labels[target] <= i and ins.guard:
            guard = bits.unknown(1)     # a loop's exit test: its first-iteration value says nothing of the last
        taken_always = guard.is_known and bool(guard.value) != ins.guard_negated
        taken_never = guard.is_known and not taken_always
        if target is not None and target in labels:
            if labels[target] > i and not taken_never:
                before = waiting.get(target)
                if affordable(len(machine.env if before is None else before), statement.line):
                    waiting[target] = _arriving(before, machine.env, writes, entered.left(i, labels[target]))
                else:
                    waiting[target] = {}
            if labels[target] <= i and not taken_always:    # falling out of the loop
                if affordable(len(machine.env), statement.line):
                    machine.forget([name for name in machine.env if writes.between(name, labels[target], i)])
                else:
                    machine.env = {}
            if taken_always:
                reachable = False
            continue
        if ins.base in ("ret", "exit", "brx", "trap") and taken_always:
            reachable = False
            continue
        execute(ins, machine)
    return Walk(loops, indirect)
