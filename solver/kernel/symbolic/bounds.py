"""The few values a register may take although its inputs are not known: `k & 3`, `k % 6` written as a
multiply-high division, a pipeline stage computed from a parameter.

valuesets.py runs a block once for every combination of the values it reads; an input that may be
anything (a kernel parameter, a field of a parameter struct, a value loaded from memory) is Unknown there,
and so is everything computed from it. Yet CUTLASS's ping-pong kernels start the second warpgroup's
pipeline at stage `k_tiles & (S - 1)`, and quack's at `k_tiles - 6 * (k_tiles / 6)`, written with
`mul.hi.s32 ..., 715827883`: S values whatever k_tiles is. This module finds such a set:

1. Sample: the block is run (concrete executor) from the combination, with the unknown inputs set to
   SAMPLES values (0, 1, all ones, the sign bit, then pseudo-random ones from a seed fixed by the block):
   a register that takes more than MAX_VALUES values (or FIRST_SAMPLES different values in as many first
   runs) is left unknown.
2. Prove: the block is written as Z3 bit-vector terms (bitvector.py) with each unknown input a variable
   of its register's width, and Z3 is asked for a value outside the sampled set; each one it finds joins
   the set, until Z3 answers "no other" (the set is then every value the register can take, for every
   value of the inputs) or the set passes MAX_VALUES or Z3 gives up within its resource limit
   (deterministic, unlike a time-out): the register is then left unknown. The question is put over the
   integers where the term translates exactly (integers.py), as a multiply-high division does.

The inputs are taken as independent of each other and as taking any value of their width: the set may
be larger than what a real launch produces, never smaller. Only registers that can reach a site operand
are bounded (operand_registers), and only where a block writes them.

3. Across blocks: quack computes q = k / 6 in one block and k - 6 * q in the next, and the value sets,
   which keep registers apart between blocks, lose that q came from k. Where the block's own statements
   leave a target unbounded, an unknown input r of theirs is replaced by the instruction that computes
   it (extend), when that instruction is r's only write in the function, has no guard, and precedes the
   read in every iteration: its block dominates the reader's (or it comes first in the same block) and
   both are in the same loops. Then, in the iteration that reaches the read, it ran exactly once before
   it, so r holds what it computed from its own inputs (substituted the same way, or else a variable of
   their own at each read: independent, less known, never wrong).
"""
from __future__ import annotations

import random
from typing import Optional

import z3

from spec import fast
from solver.kernel.concrete.executor import reads, site_operand_registers, slice_of
from solver.kernel.concrete.values import Lanes, SharedGeneric, Unknown, mask
from solver.kernel.frontend import cfg
from solver.kernel.frontend.instruction import FLOAT_BITS, SYMBOL_OFFSET, destinations, parse_integer
from solver.kernel.symbolic import bitvector, integers
from solver.model.bitvec import free_constants

SAMPLES = 128              # concrete runs at most before Z3 is asked (they stop FIRST_SAMPLES after the last new value)
FIRST_SAMPLES = 8               # all different: taken as many values (dropped: less known, never wrong)
MAX_VALUES = 64            # as valuesets.MAX_VALUES: a register with more values stays unknown
Z3_RESOURCE_LIMIT = 2_000_000     # per Z3 check (rlimit: the same answer on every machine and run)
MAX_Z3_CHECKS = 2_000             # per function: past them no more registers are bounded (less known)
EVALUATIONS = 32                  # random evaluations of a term across blocks before Z3 is asked
NEARLY_ALL_NEW = 2                # ... and more where all but 1 or this many of them gave new values
MAX_EVALUATIONS = 4 * MAX_VALUES  # (up to this many: past MAX_VALUES values Z3 is not asked)


def operand_registers(graph: cfg.Graph, sites: set) -> set:
    """The registers a site's operands (not an MMA's data vectors) are computed from, through any chain of
    instructions: the only ones worth bounding."""
    wanted = [r for i in sites for r in site_operand_registers(graph.statements[i].instruction)]
    return slice_of(graph, wanted)[0]


def bound(statements: list, combination: dict, targets: list, warp, run_statements,
          cache: Optional[dict] = None, work: Optional[list] = None, checks: Optional[list] = None) -> dict:
    """{register: frozenset of values} for the targets that take at most MAX_VALUES values when the block's
    `statements` ([(index, instruction, needed)]) run from `combination` (live-in -> value, Unknown for an
    input that may be anything). run_statements(statements, env) runs them concretely from env (the
    executor's semantics) and returns the env after them. Targets not bounded are left out; so are
    predicates (a set {0, 1} says no more than unknown). cache: answers kept by the statements and the
    values of what they read (the rest of the combination does not change them)."""
    targets = [name for name in targets if warp.width_of(name) > 1]
    if not targets or any(isinstance(v, (Lanes, SharedGeneric)) for v in combination.values()):
        return {}
    statements, reading = _slice_and_reads(statements, targets, cache)
    read = sorted(reading & combination.keys())
    key = (tuple(i for i, _, _ in statements), tuple(targets), tuple((name, combination[name]) for name in read))
    if cache is not None and key in cache:
        return cache[key]
    combination = {name: combination[name] for name in read}
    sampled = _sample(combination, targets, warp, run_statements, statements, work if work is not None else [0])
    found = _prove(statements, combination, sampled, warp, checks) if sampled else {}
    if cache is not None:
        cache[key] = found
    return found


def _reads(ins) -> list:
    """What the instruction's result depends on: what it reads, and under a guard what it writes (kept where
    the guard fails)."""
    return reads(ins) + (destinations(ins) if ins.guard else [])


def _slice_and_reads(statements: list, targets: list, cache: Optional[dict]) -> tuple:
    """(slice_for, the registers its statements read), kept in the cache by the statements' indexes and
    the targets (a block's part is asked again at every combination of its inputs)."""
    key = ("slice", tuple(i for i, _, _ in statements), tuple(targets))
    found = cache.get(key) if cache is not None else None
    if found is None:
        kept = slice_for(statements, targets)
        found = (kept, frozenset(r for _, ins, _ in kept for r in _reads(ins)))
        if cache is not None:
            cache[key] = found
    return found


def slice_for(statements: list, targets: list) -> list:
    """The statements of the block (up to its first branch or exit) that the targets' last values are
    computed from, in order."""
    upto = []
    for item in statements:
        if item[1].base in ("bra", "brx") or item[1].base in cfg.ENDS_THREAD:
            break
        upto.append(item)
    wanted, kept = set(targets), []
    for item in reversed(upto):
        _, ins, needed = item
        if not needed or not wanted.intersection(destinations(ins)):
            continue
        kept.append(item)
        wanted.update(_reads(ins))
    return kept[::-1]


def _sample(combination, targets, warp, run_statements, statements, work: list) -> dict:
    """The targets' values over runs of the statements where every unknown input, and every unknown a
    statement produces (a load), is a sampled value instead; a target past MAX_VALUES is dropped."""
    rng = random.Random(statements[0][0] if statements else 0)
    values = {name: set() for name in targets}
    last_new = 0

    def sample(name: str, k: int) -> int:
        width = warp.width_of(name)
        edge = (0, 1, mask(width), 1 << (width - 1))
        return edge[k] if k < len(edge) else rng.getrandbits(width)
    for k in range(SAMPLES):
        if k - last_new > FIRST_SAMPLES:
            break                                  # nothing new for a while: Z3 finds any value missed
        work[0] -= len(statements)
        env = {name: sample(name, k) if isinstance(value, Unknown) else value for name, value in combination.items()}
        for item in statements:
            env = run_statements([item], env)
            for name in destinations(item[1]):
                if isinstance(env.get(name), Unknown):
                    env[name] = sample(name, k)
        for name in list(values):
            value = env.get(name)
            if not isinstance(value, int):
                del values[name]
                continue
            if value not in values[name]:
                values[name].add(value)
                last_new = k
            if len(values[name]) > MAX_VALUES or (k + 1 == FIRST_SAMPLES and len(values[name]) == FIRST_SAMPLES):
                del values[name]
        if not values:
            return {}
    return values


class Bounding:
    """What valuesets.py hands bounds.py for one function: the registers worth bounding, the answers so far,
    and the single definitions extend() may substitute."""

    def __init__(self, graph: cfg.Graph, sites: set):
        self.registers = frozenset(operand_registers(graph, sites))
        self.cache: dict = {}
        self.definitions = Definitions(graph)
        self.checks = [MAX_Z3_CHECKS]

    def values(self, statements: list, combination: dict, targets: list, warp, run_statements, work: list) -> dict:
        """bound(), then bound_across() for the targets it left; only for targets the block writes before its
        first branch or exit (what the slices read)."""
        targets = _written_before_any_exit(statements, targets)
        found = bound(statements, combination, targets, warp, run_statements, self.cache, work, self.checks)
        left = [name for name in targets if name not in found]
        if left:
            found = {**found, **bound_across(statements, combination, left, warp, self.definitions, self.cache,
                                             self.checks)}
        return found


def _written_before_any_exit(statements: list, targets: list) -> list:
    late = set()
    cut = False
    for _, ins, needed in statements:
        if ins.base in ("bra", "brx") or ins.base in cfg.ENDS_THREAD:
            cut = True
        elif cut and needed:
            late.update(destinations(ins))
    return [name for name in targets if name not in late]


class Definitions:
    """For each register written by exactly one instruction of the function, with no guard: that
    instruction's statement index; and each block's loops. What extend() may substitute."""

    def __init__(self, graph: cfg.Graph):
        self.graph = graph
        writes: dict = {}
        for i, statement in enumerate(graph.statements):
            ins = statement.instruction
            if ins is None:
                continue
            for name in destinations(ins):
                writes.setdefault(name, []).append(i)
        self.only = {name: found[0] for name, found in writes.items()
                     if len(found) == 1 and not graph.statements[found[0]].instruction.guard}
        self.loops = {b.index: frozenset(id(loop) for loop in graph.loops_holding(b.index)) for b in graph.blocks}

    def precedes(self, definition: int, reader: int) -> bool:
        """The definition runs before the reader in every iteration that reaches the reader: it comes first
        in the same block, or its block dominates the reader's, and both blocks are in the same loops
        (in a reducible graph only: elsewhere a cycle may hold no loop, and it never does)."""
        if not self.graph.reducible:
            return False
        a, b = self.graph.block_of[definition], self.graph.block_of[reader]
        if self.loops[a] != self.loops[b]:
            return False
        return definition < reader if a == b else self.graph.dominates(a, b)


def extend(combination: dict, definitions: Definitions, reader: int) -> Optional[tuple]:
    """(the instructions, in an order where each comes after those it reads, that compute the unknown
    inputs of the statements from `reader` on; the registers substituted), as the module says; None when
    there is none to substitute, or when a register would be substituted at one read and not at another
    (its reads would then disagree)."""
    chosen: dict = {}
    refused: set = set()
    order: list = []

    def visit(name: str, at: int) -> None:
        if name in refused:
            return
        found = definitions.only.get(name)
        if found is None or not definitions.precedes(found, at):
            if name in chosen:
                raise _Disagree
            refused.add(name)
            return
        if name in chosen:
            return
        chosen[name] = found
        ins = definitions.graph.statements[found].instruction
        for read in _reads(ins):
            visit(read, found)
        order.append((found, ins, True))
    try:
        for name, value in combination.items():
            if isinstance(value, Unknown):
                visit(name, reader)
    except _Disagree:
        return None
    return (order, set(chosen)) if order else None


class _Disagree(Exception):
    pass


def bound_across(statements: list, combination: dict, targets: list, warp, definitions: Definitions,
                 cache: Optional[dict] = None, checks: Optional[list] = None) -> dict:
    """bound() for the targets with their unknown inputs computed by earlier blocks (extend): Z3 only, from
    EVALUATIONS of the term on random values of its variables (all different: many values, not asked)."""
    targets = [name for name in targets if warp.width_of(name) > 1]
    if not targets or not statements or any(isinstance(v, (Lanes, SharedGeneric)) for v in combination.values()):
        return {}
    statements, reading = _slice_and_reads(statements, targets, cache)
    if not statements:
        return {}
    read = sorted(reading & combination.keys())
    combination = {name: combination[name] for name in read}
    key = ("across", tuple(i for i, _, _ in statements), tuple(targets), tuple(combination.items()))
    if cache is not None and key in cache:
        return cache[key]
    extension = extend(combination, definitions, statements[0][0])
    found = {}
    if extension is not None:
        prefix, chosen = extension
        encoder = _Encoder({}, warp)
        try:
            for item in prefix:              # a register read and not substituted: a variable at each read
                encoder.run([item])
                encoder.env = {name: term for name, term in encoder.env.items() if name in chosen}
            substituted = dict(encoder.env)
            encoder.env = {}
            for name, value in combination.items():
                width = warp.width_of(name)
                encoder.env[name] = substituted[name] if name in substituted and isinstance(value, Unknown) else \
                    z3.BitVec(f"in:{name}", width) if isinstance(value, Unknown) else \
                    z3.BitVecVal(value & mask(width), width)
            encoder.run(statements)
        except _NotUniform:
            encoder = None
        if encoder is not None:
            rng = random.Random(statements[0][0])
            for name in targets:
                term = encoder.env.get(name)
                evaluated = _evaluations(term, rng) if term is not None else None
                if evaluated is None or len(evaluated[0]) > MAX_VALUES or len(evaluated[0]) == evaluated[1]:
                    continue        # too many values, or every assignment tried gave a new one: not asked
                seen = evaluated[0]
                proved = _all_values(term, seen, checks)
                if proved is not None:
                    found[name] = frozenset(proved)
    if cache is not None:
        cache[key] = found
    return found


def _evaluations(term, rng: random.Random) -> Optional[tuple]:
    """(the term's values at random assignments of its variables, how many assignments were tried): first
    EVALUATIONS of them; then, where all but one or two gave a new value (a wide range that a repeated
    value hid), more, until more than MAX_VALUES values are found (the term has too many to be bounded:
    Z3 would find as many, one check each) or MAX_EVALUATIONS are tried. None where a value is not a
    constant."""
    variables = free_constants(term)
    value_at = fast.fastest(term_evaluator)(term, variables)
    seen, tried = set(), 0
    while tried < MAX_EVALUATIONS and len(seen) <= MAX_VALUES:
        if tried == EVALUATIONS and not EVALUATIONS - NEARLY_ALL_NEW <= len(seen) < EVALUATIONS:
            break
        value = value_at([(0, 1, -1)[tried] & mask(v.size()) if tried < 3 else rng.getrandbits(v.size())
                          for v in variables])
        if value is None:
            return None
        seen.add(value)
        tried += 1
    return seen, tried


def term_evaluator(term, variables: list):
    """A function from the variables' values (ints, in the order given) to the term's value (an int; None
    where it does not simplify to a constant): Z3's substitute and simplify, the definition. A registered
    fast version (solver/fast/kernel_symbolic_bounds.py) compiles the term to Python once instead."""
    def value_at(values: list) -> Optional[int]:
        pairs = [(v, z3.BitVecVal(x, v.size())) for v, x in zip(variables, values)]
        found = z3.simplify(z3.substitute(term, *pairs) if pairs else term)
        return found.as_long() if z3.is_bv_value(found) else None
    return value_at


class _Encoder:
    """The block as Z3 terms: registers -> terms of their declared width."""

    def __init__(self, combination: dict, warp):
        self.warp = warp
        self.fresh_count = 0
        self.env = {}
        for name, value in combination.items():
            width = warp.width_of(name)
            self.env[name] = z3.BitVec(f"in:{name}", width) if isinstance(value, Unknown) \
                else z3.BitVecVal(value & mask(width), width)

    def fresh(self, width: int):
        self.fresh_count += 1
        return z3.BitVec(f"any:{self.fresh_count}", width)

    def read(self, operand: str, width: int):
        operand = operand.strip()
        if operand.startswith("!"):
            value = self.read(operand[1:], 1)
            return bitvector.widen(~value if width == 1 else value ^ 1, width)
        term = self.env.get(operand)
        if term is not None:
            return bitvector.widen(term, width)
        special = self.warp.special.get(operand)
        if special is not None:
            if isinstance(special, int):
                return z3.BitVecVal(special & mask(width), width)
            if isinstance(special, Unknown):
                return self.fresh(width)
            raise _NotUniform
        number = parse_integer(operand)
        if number is not None:
            return z3.BitVecVal(number & mask(width), width)
        m = FLOAT_BITS.match(operand)
        if m:
            return z3.BitVecVal(int(m.group(2), 16) & mask(width), width)
        m = SYMBOL_OFFSET.match(operand)
        if m and m.group(1) in self.warp.symbols:
            offset = parse_integer(m.group(3)) if m.group(3) else 0
            if offset is not None:
                value = self.warp.symbols[m.group(1)] + (-offset if m.group(2) == "-" else offset)
                return z3.BitVecVal(value & mask(width), width)
        return self.fresh(width)

    def run(self, statements: list) -> None:
        for _, ins, needed in statements:
            if ins.base in ("bra", "brx") or ins.base in cfg.ENDS_THREAD:
                return
            if not needed:
                continue
            written = destinations(ins)
            try:
                result = bitvector.meaning(ins, self.read, self.warp.width_of, self.fresh)
            except (IndexError, ValueError, z3.Z3Exception):
                result = None
            guard = None
            if ins.guard:
                guard = self.read(ins.guard, 1)
                if ins.guard_negated:
                    guard = ~guard
                guard = z3.simplify(guard)
                if z3.is_bv_value(guard) and guard.as_long() == 0:
                    continue
            for name in written:
                width = self.warp.width_of(name)
                value = (result or {}).get(name)
                value = self.fresh(width) if value is None else bitvector.widen(value, width)
                if guard is not None and not (z3.is_bv_value(guard) and guard.as_long() == 1):
                    old = self.env.get(name)
                    value = z3.If(guard == 1, value, self.fresh(width) if old is None else old)
                self.env[name] = value


class _NotUniform(Exception):
    """An operand whose value differs between lanes: no one term stands for the warp."""


def _prove(statements, combination, sampled: dict, warp, checks: Optional[list] = None) -> dict:
    encoder = _Encoder(combination, warp)
    try:
        encoder.run(statements)
    except _NotUniform:
        return {}
    out = {}
    for name, values in sampled.items():
        term = encoder.env.get(name)
        if term is None:
            continue
        proved = _all_values(term, set(values), checks)
        if proved is not None:
            out[name] = frozenset(proved)
    return out


def _all_values(term, values: set, checks: Optional[list] = None) -> Optional[set]:
    """Every value `term` takes (a superset of `values`), or None past MAX_VALUES or when Z3 gives up. The
    question is asked over the integers first (integers.py: linear where bit-blasting a multiply-high is
    not), else (the term not linear, or the integers' answer unknown) over the bit-vectors. checks: [Z3
    checks that may still be made], spent here (None: no bound)."""
    checks = [MAX_Z3_CHECKS] if checks is None else checks
    try:
        translation = integers.Translation()
        as_integer = translation.integer(z3.simplify(term))
    except integers.NotLinear:
        as_integer = None
    if as_integer is not None:
        status, found = _enumerate(as_integer, set(values), translation.ranges, z3.IntVal, checks)
        if status != "unknown":
            return found
    return _enumerate(term, set(values), [], lambda v: z3.BitVecVal(v, term.size()), checks)[1]


def _enumerate(term, values: set, assumptions: list, constant, checks: list) -> tuple:
    """("all", the values) when Z3 proves there is no other; ("many", None) past MAX_VALUES; ("unknown",
    None) when Z3 gives up or the checks run out."""
    solver = z3.Solver()
    solver.set("rlimit", Z3_RESOURCE_LIMIT)
    solver.add(*assumptions)
    for value in values:
        solver.add(term != constant(value))
    while len(values) <= MAX_VALUES:
        if checks[0] <= 0:
            return "unknown", None
        checks[0] -= 1
        answer = solver.check()
        if answer == z3.unsat:
            return "all", values
        if answer != z3.sat:
            return "unknown", None
        value = solver.model().eval(term, model_completion=True).as_long()
        values.add(value)
        solver.add(term != constant(value))
    return "many", None
