"""The triton-nvmma fuzz target's sampling policy: the seed-dependent hints that steer Z3's cases, and
`Problem`, solver/fuzz/problem.py's Problem over solver/model/triton_nvmma.py's constraints (the rules,
the record and the evaluator stay there), which gives the target its anchors."""
from __future__ import annotations

import random

import z3

from solver.fuzz import problem
from solver.model.triton_nvmma import ARCHES, DTYPES, SWIZZLE_WIDTHS, TERMS, Record, instruction_k, k


def _hints(r: Record, rng: random.Random) -> list:
    """Seed-dependent values, dropped where the asked rules conflict: a dtype, an operand, a swizzle, and
    extents drawn from powers of two and from other multiples of 8 (not only the defaults Triton picks)."""
    extents = (8, 16, 24, 32, 40, 48, 64, 96, 128, 160, 192, 256, 384, 512)
    hints = [r.dtype == rng.randrange(len(DTYPES)), r.operand == rng.randrange(2),
             r.swizzle_byte_width == rng.choice(SWIZZLE_WIDTHS), r.transposed == rng.randrange(2),
             r.rows == rng.choice(extents), r.cols == rng.choice(extents),
             k(r) == instruction_k(r) * rng.choice((1, 2, 3, 4, 8))]
    rng.shuffle(hints)
    return hints


def _shape(r: Record) -> list:
    """What makes two anchors differ in kind: the dtype, the operand, its majorness and the swizzle."""
    return [r.dtype, r.operand, r.transposed, r.swizzle_byte_width]


def Problem(arch: str, break_=()) -> problem.Problem:
    """Cases on `arch` that break exactly `break_`; next(seed) gives one more of a new shape, or None."""
    r, rules, facts = TERMS.terms()
    fixed = [r.arch == ARCHES.index(arch)] if arch in ARCHES else [z3.BoolVal(False)]
    return problem.Problem(r, rules, facts, fixed, break_, _hints, _shape)
