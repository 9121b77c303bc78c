"""The tmem-alloc fuzz target's sampling policy: the seed-dependent hints that steer Z3 towards
CUTLASS-like allocation sequences, and `Problem`, solver/fuzz/problem.py's Problem over
solver/model/tmem_alloc.py's constraints (the rules, the record and the evaluator stay there), which gives
the target its anchors."""
from __future__ import annotations

import random

import z3

from solver.fuzz import problem
from solver.model.tmem_alloc import (ALLOC, ARCHES, DEALLOC, LEGAL_COLUMNS, MAX_OPS, MAX_WARP, NONE, RELINQUISH,
                                     TERMS, Record, is_alloc_or_dealloc, named_columns)


def _hints(r: Record, rng: random.Random) -> list:
    """Realistic, seed-dependent values (dropped where the asked rules conflict), after CUTLASS's
    allocators: one warp allocates a power-of-2 block, others follow no larger, relinquish_alloc_permit
    once the allocations are done, each allocation freed whole by the warp that made it."""
    owner, group = rng.randrange(MAX_WARP + 1), rng.choice((1, 1, 2))
    hints = [r.length == rng.choice((2, 3, 4, 4, 5, 6, 7, 8)), r.kind[0] == ALLOC,
             z3.Sum(*[z3.If(kind == RELINQUISH, 1, 0) for kind in r.kind]) <= 1]
    for i in range(MAX_OPS):
        hints += [z3.Implies(is_alloc_or_dealloc(r, i), r.warp[i] == owner),
                  z3.Implies(r.kind[i] != NONE, r.cta_group[i] == group),
                  z3.Implies(r.kind[i] == ALLOC, r.columns[i] == rng.choice(LEGAL_COLUMNS)),
                  z3.Implies(r.kind[i] == RELINQUISH, r.warp[i] == rng.randrange(MAX_WARP + 1)),
                  z3.Implies(r.kind[i] == DEALLOC, r.columns[i] == named_columns(r, i))]
        if rng.random() < 0.5:
            hints.append(r.kind[i] == rng.choice((ALLOC, ALLOC, DEALLOC, DEALLOC, RELINQUISH)))
    rng.shuffle(hints)
    return hints


def _shape(r: Record) -> list:
    """What makes two anchors differ in kind: the length and the operations' kinds."""
    return [r.length] + r.kind


def Problem(arch: str, break_=()) -> problem.Problem:
    """Sequences that break exactly `break_` (none on an arch without tensor memory); next(seed) gives one
    more whose length and kinds of operations differ from every earlier one, or None."""
    r, rules, facts = TERMS.terms()
    return problem.Problem(r, rules, facts, [z3.BoolVal(arch in ARCHES)], break_, _hints, _shape)
