"""The cute-dsl fuzz target's sampling policy: the seed-dependent hints that steer Z3's cases, and
`Problem`, solver/fuzz/problem.py's Problem over solver/model/cute_dsl.py's constraints (the rules, the
record and the evaluator stay there), which gives the target its anchors."""
from __future__ import annotations

import random

import z3

from solver.fuzz import problem
from solver.model.cute_dsl import ARCHES, ATOMS, DTYPES, TERMS, Record, instruction_k


def _hints(r: Record, rng: random.Random) -> list:
    """Seed-dependent values, dropped where the asked rules conflict."""
    extents = (8, 16, 24, 32, 48, 64, 96, 128, 192, 256)
    hints = [r.dtype == rng.randrange(len(DTYPES)), r.operand == rng.randrange(2), r.major == rng.randrange(2),
             r.atom == rng.randrange(len(ATOMS)), r.cta_group == rng.choice((1, 2)),
             r.m == rng.choice((64, 128, 256)), r.n == rng.choice(extents),
             r.k == instruction_k(r) * rng.choice((1, 2, 3, 4, 8)), r.stages == rng.choice((1, 2, 3)),
             r.smem_base == rng.choice((0, 1024 * rng.randrange(200), 16 * rng.randrange(14000)))]
    rng.shuffle(hints)
    return hints


def _shape(r: Record) -> list:
    """What makes two anchors differ in kind: the dtype, operand, major, atom and .cta_group."""
    return [r.dtype, r.operand, r.major, r.atom, r.cta_group]


def Problem(arch: str, break_=()) -> problem.Problem:
    """Cases on `arch` that break exactly `break_`; next(seed) gives one more of a new shape, or None."""
    r, rules, facts = TERMS.terms()
    fixed = [r.arch == ARCHES.index(arch)] if arch in ARCHES else [z3.BoolVal(False)]
    return problem.Problem(r, rules, facts, fixed, break_, _hints, _shape)
