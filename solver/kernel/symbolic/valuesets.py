"""Every iteration, for any launch: the set of values each register may hold, per warp.

An abstract interpretation over the control-flow graph (frontend/cfg.py): each register holds a finite
set of at most MAX_VALUES ints, or Top (anything, with the reason). A block's state is the union of what
its predecessors' edges bring; a branch whose guard may be 1 or 0 brings its state along both edges;
the blocks are worked on until no set grows (sets only grow, and past MAX_VALUES become Top, so this
ends; a loop header seen WIDEN_AFTER times turns whatever still grows there into Top). Nothing about the
launch is assumed but the warp index: the parameters, the CTA, loads from memory are Top; so the sets
hold the values of every iteration of every loop, whatever the trip counts, for every launch. A stage
index that cycles through 0..S-1 is the set {0, ..., S-1}, and the descriptors built from it are S
values: known, although no parameter was given.

What is over-approximated: registers are apart between blocks (inside a block each combination of the
values it reads is run as it is, so a stage index and the test that wraps it go together; across blocks a
descriptor made of two registers whose values went together takes every combination). A register's value
may differ between lanes (%laneid, %tid.x): it is kept lane by lane, and a site operand that differs
between lanes is Top; a branch on such a value sends some lanes each way, so both edges are followed, and
a return or exit under one ends some lanes only, so the warp goes on (a guarded write under one writes
the lanes whose guard holds, as the executor does). What it shares with the concrete executor: the
meaning of each instruction on ints (concrete/semantics.py), applied to each combination of the operands'
values; the executor's runs are checked to lie inside these sets on the whole corpus
(tests/solver_tests/kernel/test_kernel_corpus.py).

What is kept, so that a loop's fixpoint does not redo its work: each block's and each part's result by
the values it reads (a part that reads no warp register is shared between warps), and each combination's
runs (a loop's state grows one value at a time; each growth runs only the new combinations).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Optional

from solver.kernel.concrete.executor import (Launch, Warp, _CONTROL, _execute, _guard, block_shape,
                                             declared_widths, needed_statements, reads)
from solver.kernel.concrete.values import Lanes, SharedGeneric, Unknown, WARP
from solver.kernel.frontend import cfg
from solver.kernel.frontend.instruction import destinations, registers_in
from solver.kernel.symbolic import bounds

MAX_VALUES = 64            # values a register's set holds before it is Top
MAX_COMBINATIONS = 1024    # combinations of the values a block reads, run one by one (then: the widest Unknown)
WIDEN_AFTER = 16           # times a register's set may grow where two paths meet, before it is Top: a stage
                           # index has its S values after S - 1 (S up to 16); a pointer that steps forever
                           # would otherwise grow to MAX_VALUES, and with it every combination
MAX_BLOCK_VISITS = 200_000     # blocks worked on per warp, in all (then: the warp's result is withdrawn)
MAX_WORK = 20_000_000          # statements run, all combinations and warps of a function together (then: the
                               # warps not finished have no result)


class _OutOfWork(Exception):
    pass


@dataclass(frozen=True)
class Top:
    reason: str


@dataclass
class WarpSets:
    warp: int
    sites: dict = field(default_factory=dict)    # statement index -> {register: frozenset | Top}
    gave_up: Optional[str] = None                # why no result (the work bound), None when it has one


def join(a, b):
    """The union of two sets, Top past MAX_VALUES values."""
    if a is b:
        return a
    if isinstance(a, Top):
        return a
    if isinstance(b, Top):
        return b
    if a == b:
        return a
    union = a | b
    return union if len(union) <= MAX_VALUES else Top(f"more than {MAX_VALUES} values")


def _join_states(a: dict, b: dict) -> dict:
    """Each register's values on either side; one not written on one side (read there before any write,
    which PTX leaves undefined) is Top."""
    get, missing = b.get, 0
    out = {}
    for name, value in a.items():
        other = get(name)
        if other is None:
            out[name] = Top(f"{name} is not written on every path that reaches here")
            missing += 1
        else:
            out[name] = value if other is value else join(value, other)
    if len(a) - missing != len(b):                    # (else every name of b is in a)
        for name in b.keys() - a.keys():
            out[name] = Top(f"{name} is not written on every path that reaches here")
    return out


def _value_set(value) -> object:
    if isinstance(value, (int, Lanes)):               # Lanes: one value per lane, kept whole
        return frozenset((value,))
    if isinstance(value, SharedGeneric):
        return Top("a generic shared address")
    if isinstance(value, Unknown):
        return Top(value.reason)
    return Top("no value")


@dataclass
class _BlockPlan:
    """What a block reads before writing it (its live-ins, among the statements that matter)."""
    live_in: list
    statements: list              # (index, instruction, needed) of the block, in order
    written: set = field(default_factory=set)   # registers some statement of it may write
    per_warp: bool = False        # it reads a register that differs between warps (%tid, %laneid, ...)

    @property
    def key_names(self) -> tuple:
        """The registers whose values make the block's result (its live-ins and what it writes), sorted:
        the memo's key holds their values in this order."""
        found = self.__dict__.get("_key_names")
        if found is None:
            found = self.__dict__["_key_names"] = tuple(sorted(set(self.live_in) | self.written))
        return found


_ABSENT = object()       # in a memo key: the register is not in the state


def _plan(graph: cfg.Graph, block, needed: set, sites: set) -> _BlockPlan:
    written, live_in, statements = set(), [], []
    for i in range(block.first, block.last + 1):
        ins = graph.statements[i].instruction
        if ins is None:
            continue
        relevant = i in needed or i in sites or ins.base in _CONTROL
        if not relevant:
            continue
        statements.append((i, ins, i in needed))
        for name in reads(ins):
            if name not in written and name not in live_in:
                live_in.append(name)
        if i in needed:
            written.update(destinations(ins))
    per_warp = any(name.startswith(_WARP_SPECIAL) for name in live_in)
    return _BlockPlan(live_in, statements, written, per_warp)


_WARP_SPECIAL = ("%tid", "%laneid", "%warpid", "%lanemask")


def _order(value) -> tuple:
    return (0, value, ()) if isinstance(value, int) else (1, 0, value.values)


def _uniform_set(value):
    """A site operand's set: its values if each is the same in every lane, else Top."""
    if isinstance(value, Top) or not any(isinstance(v, Lanes) for v in value):
        return value
    return Top("the lanes of the warp hold different values")


def _combinations(plan: _BlockPlan, state: dict) -> list:
    """The live-ins' value combinations, each a dict; a Top is one Unknown; past MAX_COMBINATIONS the
    largest sets are taken as Unknown (less known, never wrong)."""
    names = [n for n in plan.live_in if n in state]
    choices = {}
    for name in names:
        value = state[name]
        choices[name] = [Unknown(value.reason)] if isinstance(value, Top) else sorted(value, key=_order)
    while True:
        count = 1
        for values in choices.values():
            count *= len(values)
        if count <= MAX_COMBINATIONS:
            break
        widest = max(choices, key=lambda n: len(choices[n]))
        choices[widest] = [Unknown(f"{widest}: one of more than {MAX_COMBINATIONS} combinations, not followed")]
    keys = list(choices)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(choices[k] for k in keys))]


def _run_block(plan: _BlockPlan, block, env: dict, warp: Warp, sites: set, seen: dict,
               fixed: Optional[dict] = None) -> list:
    """Run the block's statements from one combination: [(successor, env after)], one per edge taken.
    fixed: statement index -> {register: value} written over what that statement computed (a value of a
    register bounds.py bounded, one choice of the set)."""
    warp.env = env
    warp.active = [True] * WARP
    for i, ins, is_needed in plan.statements:
        guard = _guard(ins, warp)
        if isinstance(guard, Lanes) and len(set(guard.values)) == 1:
            guard = guard.values[0]
        if ins.base in ("bra", "brx"):
            taken = block.successors[0] if block.successors else None
            falls = block.successors[1] if len(block.successors) > 1 else None
            if ins.base == "brx" or isinstance(guard, (Unknown, Lanes)):
                return [(s, env) for s in block.successors]     # (Lanes: some lanes each way)
            if guard is None or guard == 1:
                return [(taken, env)] if taken is not None else []
            return [(falls, env)] if falls is not None else []
        if ins.base in cfg.ENDS_THREAD:
            if guard is None or guard == 1:
                return []
            continue                                       # 0; or Unknown, Lanes: may end or go on, going on kept
        if i in sites and not (guard is not None and guard == 0):
            into = seen.setdefault(i, {})
            for name in _site_registers(ins):
                if name in env:
                    value = _uniform_set(_value_set(env[name]))
                    into[name] = join(into[name], value) if name in into else value
        if is_needed:
            _execute(ins, guard, warp)
            if fixed and i in fixed:
                env.update(fixed[i])
    following = block.successors[-1] if block.successors else None
    return [(following, env)] if following is not None else []


def _site_registers(ins) -> tuple:
    """The registers of a site's operands whose sets are kept (an MMA's accumulator vector is not), in
    operand order, a register as often as it is written (cached on the instruction)."""
    found = ins.__dict__.get("_site_registers")
    if found is None:
        found = tuple(name for operand in ins.operands
                      if not (operand.startswith("{") and ins.opcode.startswith(("wgmma", "tcgen05.mma")))
                      for name in registers_in(operand))
        ins.__dict__["_site_registers"] = found
    return found


def _join_seen(into: dict, found: dict) -> None:
    for i, registers in found.items():
        target = into.setdefault(i, {})
        for name, value in registers.items():
            target[name] = join(target[name], value) if name in target else value


def _reads_and_writes(ins, needed: bool) -> list:
    return reads(ins) + (destinations(ins) if needed else [])


_CONTROL_KEY = "<control>"


def components(plan: _BlockPlan, sites: set) -> list:
    """The block's statements split into parts that share no register (each with its live-ins and what it
    writes), the part holding the branches and exits first (or an empty one). Each part is run over the
    combinations of its own live-ins only: a block holding two unrelated chains (a stage of A, a phase of
    B) runs S + P combinations instead of S x P, and the sets that leave it are the same (they are per
    register). A site statement that writes nothing read later is in each part holding a register it
    reads: each records the registers it holds. One that reads no register another statement of the block
    reads or writes (an MMA whose descriptors an earlier block made) is a part of its own, over the
    registers it records: each one's set as the block receives it, with no other register's values
    combined (which could only pass MAX_COMBINATIONS and lose them)."""
    found = plan.__dict__.get("_components")
    if found is not None:
        return found
    parent: dict = {}

    def root(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    keys = []
    for i, ins, needed in plan.statements:
        if i in sites and ins.base not in _CONTROL and not needed:
            keys.append(None)
            continue
        names = _reads_and_writes(ins, needed) + ([_CONTROL_KEY] if ins.base in _CONTROL else [])
        if not names:
            names = [f"<statement {i}>"]
        for name in names[1:]:
            parent[root(name)] = root(names[0])
        keys.append(names[0])
    root(_CONTROL_KEY)
    groups: dict = {}
    for item, key in zip(plan.statements, keys):
        if key is not None:
            groups.setdefault(root(key), []).append(item)
    control = root(_CONTROL_KEY)
    order = [control] + sorted((g for g in groups if g != control), key=lambda g: groups[g][0][0])
    site_items: dict = {}             # part -> the site statements reading one of its registers
    alone = []                        # the site statements reading none: a part each
    for item, key in zip(plan.statements, keys):
        if key is None:
            holders = {root(name) for name in _reads_and_writes(item[1], False) if name in parent}
            if not holders:
                alone.append(item)
            for holder in holders:
                site_items.setdefault(holder, []).append(item)
    found = []
    for group in order:
        items = sorted(groups.get(group, []) + site_items.get(group, []), key=lambda item: item[0])
        names = {n for _, ins, needed in items for n in _reads_and_writes(ins, needed)}
        live_in = [n for n in plan.live_in if n in names]
        found.append(_BlockPlan(live_in, items, {n for n in plan.written if n in names},
                                any(name.startswith(_WARP_SPECIAL) for name in live_in)))
    for item in alone:
        ins = item[1]
        names = set(_site_registers(ins)) | ({ins.guard} if ins.guard else set())    # (what _run_block reads)
        live_in = [n for n in plan.live_in if n in names]
        found.append(_BlockPlan(live_in, [item], set(), any(name.startswith(_WARP_SPECIAL) for name in live_in)))
    plan.__dict__["_components"] = found
    return found


def _transfer(plan: _BlockPlan, block, state: dict, warp: Warp, sites: set, seen: dict, budget: list,
              bounding: Optional[bounds.Bounding] = None, memo: Optional[dict] = None) -> dict:
    """successor -> the values leaving the block along that edge (for the registers it reads or writes);
    budget: [statements that may still be run], spent here. The block is run part by part (components):
    the part with the branches decides the edges taken, and every other part's values leave along each
    of them. memo: each part's runs, kept by the values of the registers it reads or writes (and its warp
    where it reads a register that differs between warps): a part of a block is often the same for
    every warp although another part of it is not."""
    parts = components(plan, sites)
    memo = {} if memo is None else memo

    def runs_of(k: int, part: _BlockPlan) -> list:
        key = ("part", block.index, k, warp.index if part.per_warp else None,
               tuple([state.get(n, _ABSENT) for n in part.key_names]))
        found = memo.get(key)
        if found is None:
            part_seen: dict = {}
            found = memo[key] = (_part_runs(part, block, state, warp, sites, part_seen, budget, bounding, memo,
                                            key[1:4]), part_seen)
        _join_seen(seen, found[1])
        return found[0]
    taken = runs_of(0, parts[0])
    outgoing: dict = {}
    for successor, leaving in taken:
        outgoing[successor] = leaving if successor not in outgoing else _join_states(outgoing[successor], leaving)
    if not parts[0].statements or not any(ins.base in _CONTROL for _, ins, _ in parts[0].statements):
        following = block.successors[-1] if block.successors else None
        outgoing = {following: outgoing.get(following, {})} if following is not None else {}
    for k, part in enumerate(parts[1:], 1):
        joined = None
        for _, leaving in runs_of(k, part):
            joined = leaving if joined is None else _join_states(joined, leaving)
        for successor in outgoing:
            outgoing[successor] = {**outgoing[successor], **(joined or {})}
    return outgoing


def _part_runs(plan: _BlockPlan, block, state: dict, warp: Warp, sites: set, seen: dict, budget: list,
               bounding: Optional[bounds.Bounding], memo: Optional[dict] = None, place: tuple = ()) -> list:
    """[(successor, the values leaving along that edge)] over every combination of the part's live-ins
    (_combination_runs). memo: each combination's runs, kept by `place` (the block, the part, the warp
    where the part reads a register that differs between warps) and the combination: a loop's state grows
    one value at a time until it stands, and each growth would otherwise run every combination again."""
    out = []
    for combination in _combinations(plan, state):
        key = ("combination",) + place + (tuple(combination.items()),)
        found = memo.get(key) if memo is not None else None
        if found is None:
            found = _combination_runs(plan, block, combination, warp, sites, budget, bounding)
            if memo is not None:
                memo[key] = found
        runs, found_at_sites = found
        if found_at_sites:
            _join_seen(seen, found_at_sites)
        for successor, leaving, unwritten in runs:
            if unwritten:                                   # a guarded write that did not happen
                leaving = dict(leaving)
                for name in unwritten:
                    leaving[name] = state.get(name, Top(f"{name} not written on every path"))
            out.append((successor, leaving))
    return out


def _combination_runs(plan: _BlockPlan, block, combination: dict, warp: Warp, sites: set, budget: list,
                      bounding: Optional[bounds.Bounding]) -> tuple:
    """([(successor, the values leaving along that edge, the registers the part may write that this run did
    not)], {site: {register: set}}) for one combination of the part's live-ins. A register of
    bounding.registers that the part writes and that comes out Top is given its few values where
    bounds.py finds them: the part is then run again for each of them, the register fixed to it where the
    part last writes it, so that what it computes from it (a descriptor) is known too (_fixed_runs: the
    fewest registers fixed, each combination of their values)."""
    targets = sorted(plan.written & bounding.registers) if bounding else []

    def run_concretely(statements: list, env: dict) -> dict:
        _run_block(_BlockPlan([], statements), block, env, warp, set(), {})
        return env

    def spend() -> None:
        budget[0] -= len(plan.statements) + 1
        if budget[0] < 0:
            raise _OutOfWork
    spend()
    found_at_sites: dict = {}
    runs = _run_block(plan, block, dict(combination), warp, sites, found_at_sites)
    unknown = sorted({name for _, after in runs for name in targets
                      if name in after and isinstance(_value_set(after[name]), Top)})
    bounded = bounding.values(plan.statements, combination, unknown, warp, run_concretely, budget) \
        if unknown else {}
    if budget[0] < 0:
        raise _OutOfWork
    if bounded:
        runs, found_at_sites = _fixed_runs(plan, block, combination, warp, sites, bounded, spend) or \
            (runs, found_at_sites)
    return [(successor, {name: _value_set(value) for name, value in after.items()}, plan.written - after.keys())
            for successor, after in runs], found_at_sites


def _fixed_runs(plan: _BlockPlan, block, combination: dict, warp: Warp, sites: set, bounded: dict,
                spend) -> Optional[tuple]:
    """(runs, site sets) of the part with registers of `bounded` ({register: every value it takes, as
    bounds.py proved}) fixed where the part last writes them, one run per combination of their values; None
    past MAX_COMBINATIONS runs. Fixing a register to each value it takes is sound, and so is fixing any of
    them: the runs cover every value. The fewest are fixed, so that no combination runs that the registers'
    ties rule out (a stage s and 8192 s are one choice, not 4 x 4): in the order the part last writes them,
    the first is fixed, then each one still not a plain int in some run (what the fixed ones do not give);
    with all of them fixed, it is every combination, as bounds.py's sets allow."""
    last_write = {name: max(i for i, ins, needed in plan.statements if needed and name in destinations(ins))
                  for name in bounded}
    order = sorted(bounded, key=lambda name: (last_write[name], name))
    fixing = order[:1]
    while True:
        choices = list(itertools.islice(itertools.product(*(sorted(bounded[n]) for n in fixing)),
                                        MAX_COMBINATIONS + 1))
        if len(choices) > MAX_COMBINATIONS:
            return None
        runs, found_at_sites = [], {}
        for choice in choices:
            spend()
            fixed: dict = {}
            for name, value in zip(fixing, choice):
                fixed.setdefault(last_write[name], {})[name] = value
            runs.extend(_run_block(plan, block, dict(combination), warp, sites, found_at_sites, fixed))
        loose = next((name for name in order if name not in fixing and
                      any(type(after.get(name)) is not int for _, after in runs)), None)
        if loose is None:
            return runs, found_at_sites
        fixing.append(loose)


def live_registers(graph: cfg.Graph, plans: dict) -> dict:
    """block -> the registers read on some path from its start before being written (backward liveness
    over the statements that matter): only those are carried into a block."""
    live_in = {b.index: set(plans[b.index].live_in) for b in graph.blocks}
    predecessors: dict = {}
    for b in graph.blocks:
        for successor in b.successors:
            predecessors.setdefault(successor, []).append(b.index)
    work = list(live_in)
    while work:
        index = work.pop()
        block, plan = graph.blocks[index], plans[index]
        out = set()
        for successor in block.successors:
            out |= live_in[successor]
        new = set(plan.live_in) | (out - plan.written)
        if new != live_in[index]:
            live_in[index] = new
            work.extend(predecessors.get(index, ()))
    return live_in


def warp_sets(graph: cfg.Graph, warp: Warp, sites: set, needed: set, memo: Optional[dict] = None,
              plans: Optional[dict] = None, live: Optional[dict] = None, budget: Optional[list] = None,
              bounding: Optional[bounds.Bounding] = None) -> WarpSets:
    """The sets at every site statement of one warp, over every path (see the module). memo: the block
    results of other warps of the function, reused where a block reads nothing that differs by warp;
    bounding: what bounds.py needs to bound registers that come out Top (None: no bounding)."""
    memo = {} if memo is None else memo
    budget = [MAX_WORK] if budget is None else budget
    plans = plans if plans is not None else {b.index: _plan(graph, b, needed, sites) for b in graph.blocks}
    live = live if live is not None else live_registers(graph, plans)
    result = WarpSets(warp.index)
    if not graph.blocks:
        return result
    states_in = {0: {}}
    visits: dict = {}
    work, pending, spent = [0], {0}, 0
    grown: dict = {}
    while work:
        current = work.pop()
        pending.discard(current)
        spent += 1
        visits[current] = visits.get(current, 0) + 1
        if spent > MAX_BLOCK_VISITS:
            return WarpSets(warp.index, {}, f"more than {MAX_BLOCK_VISITS} blocks worked on")
        block = graph.blocks[current]
        plan = plans[current]
        state = states_in[current]
        key = (current, warp.index if plan.per_warp else None,
               tuple([state.get(n, _ABSENT) for n in plan.key_names]))
        found = memo.get(key)
        if found is None:
            seen: dict = {}
            try:
                found = memo[key] = (_transfer(plan, block, state, warp, sites, seen, budget, bounding, memo),
                                     seen)
            except _OutOfWork:
                return WarpSets(warp.index, {}, f"more than {MAX_WORK} statements run for the function's warps")
        outgoing, seen = found
        for i, registers in seen.items():
            into = result.sites.setdefault(i, {})
            for name, value in registers.items():
                into[name] = join(into[name], value) if name in into else value
        for successor, leaving in outgoing.items():
            wanted = live[successor]
            carried = {name: value for name, value in state.items() if name in wanted and name not in leaving}
            carried.update((name, value) for name, value in leaving.items() if name in wanted)
            before = states_in.get(successor)
            if before is None:
                after, changed = carried, True
            else:
                after = _join_states(before, carried)
                changed = after != before
                if changed:                             # (else no register grew)
                    for name, value in after.items():
                        if name in before and before[name] != value and not isinstance(value, Top):
                            grown[successor, name] = grown.get((successor, name), 0) + 1
                            if grown[successor, name] > WIDEN_AFTER:
                                after[name] = Top(f"{name} still grows after {WIDEN_AFTER} meetings: widened")
                    changed = after != before
            if changed:
                states_in[successor] = after
                if successor not in pending:
                    pending.add(successor)
                    work.append(successor)
    return result


def run(function, symbols: dict, launch: Launch, is_site, graph: Optional[cfg.Graph] = None) -> list:
    """WarpSets for each warp of the CTA; the launch's params, CTA and grid are not used (any launch), only
    its block size."""
    block = block_shape(function, launch)
    graph = graph or cfg.build(function.statements)
    widths = declared_widths(function.statements)
    needed = needed_statements(graph, is_site)
    sites = {i for i, s in enumerate(graph.statements) if s.instruction is not None and is_site(s.instruction)}
    count = -(-block[0] * block[1] * block[2] // WARP)
    memo: dict = {}
    plans = {b.index: _plan(graph, b, needed, sites) for b in graph.blocks}
    live = live_registers(graph, plans)
    budget = [MAX_WORK]
    bounding = bounds.Bounding(graph, sites)
    found = [warp_sets(graph, any_launch_warp(w, block, symbols, widths), sites, needed, memo, plans, live, budget,
                       bounding) for w in range(count)]
    if bounding.registers and any(warp.gave_up for warp in found):
        # the values bounds.py found made more combinations than the work bound allows: the sets without
        # them (wider, never worse than no sets at all)
        memo, budget = {}, [MAX_WORK]
        found = [warp_sets(graph, any_launch_warp(w, block, symbols, widths), sites, needed, memo, plans, live,
                           budget) for w in range(count)]
    return found


def any_launch_warp(index: int, block: tuple, symbols: dict, widths: dict) -> Warp:
    """Warp `index` of a CTA of that block in any launch: its CTA, grid and cluster are not known."""
    warp = Warp(index, block, Launch(block=block), symbols, widths)
    for d in ("x", "y", "z"):
        warp.special[f"%ctaid.{d}"] = Unknown(f"%ctaid.{d}: any CTA")
    return warp
