"""The recipe fuzz target's sampling policy: the seed-dependent hints that steer Z3 towards realistic
cases, and `Problem`, solver/fuzz/problem.py's Problem over solver/model/recipe.py's constraints (the
rules, the record and the evaluator stay there), which gives the target its anchors."""
from __future__ import annotations

import random

from solver.fuzz import problem
from solver.model.recipe import ARCHES, DTYPES, SWIZZLES, TERMS, Record


def _hints(r: Record, rng: random.Random) -> list:
    """Realistic, seed-dependent values (dropped when the asked rules conflict with them)."""
    hints = [r.dtype == rng.randrange(len(DTYPES)), r.major == rng.randrange(2),
             r.tma_swizzle == rng.randrange(len(SWIZZLES)), r.mn == rng.choice((8, 16, 32, 64, 128, 256)),
             r.steps == rng.choice((1, 2, 4, 4, 8)),
             r.smem == rng.choice((0, 1024, 0x2000, 0x8000)) + rng.choice((0, 0, 0, 128, 512)),
             r.base_offset == 0, r.start_err == 0, r.step_err == 0]
    rng.shuffle(hints)
    return hints


def _shape(r: Record) -> list:
    """What makes two cases differ in kind: each case found is blocked by these values."""
    return [r.dtype, r.major, r.tma_swizzle, r.desc_swizzle, r.mn, r.steps]


def Problem(arch: str, break_=()) -> problem.Problem:
    """Recipe cases on `arch` that break exactly `break_` (and keep every other rule); next(seed) gives
    one more of a new shape (dtype, major, both swizzles, mn, steps), or None."""
    r, rules, facts = TERMS.terms()
    return problem.Problem(r, rules, facts, [r.arch == ARCHES.index(arch)], break_, _hints, _shape)
