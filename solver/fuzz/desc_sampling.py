"""The desc fuzz target's sampling policy: the seed-dependent hints that steer Z3 towards realistic cases,
and `Problem`, solver/fuzz/problem.py's Problem over solver/model/desc_case.py's constraints (the rules,
the record and the evaluator stay there), which gives the target its anchors."""
from __future__ import annotations

import random

from solver.fuzz import problem
from solver.model.desc_case import (ARCHES, DTYPES, SWIZZLES, Record, constraints, domain, row_bytes,
                                    symbolic_record)


def _hints(r: Record, rng: random.Random) -> list:
    """Realistic, seed-dependent values (dropped when the asked rules conflict with them): tiles as
    CUTLASS and TMA lay them out (8-row groups 8 W apart, atoms a tile's rows apart)."""
    W = row_bytes(r.tile_swizzle)
    hints = [r.dtype == rng.randrange(len(DTYPES)), r.major == rng.randrange(2),
             r.tile_swizzle == rng.randrange(len(SWIZZLES)), r.mn == rng.choice((8, 16, 64, 128, 256)),
             r.tile_start == rng.choice((0, 1024, 0x2000, 0x8000)) + rng.choice((0, 0, 128, 256, 16)),
             r.tile_sbo == 8 * W * rng.choice((1, 1, 2)), r.tile_lbo == rng.choice((128, 256, 1024, 2048, 4096)),
             r.base_offset == 0, r.stray == 0, r.lbo_mode == 0,
             r.lbo == r.tile_lbo, r.sbo == r.tile_sbo, r.start == r.tile_start,
             r.cta_group == rng.choice((1, 1, 2)), r.m == rng.choice((128, 128, 64, 256))]
    rng.shuffle(hints)
    return hints


def _shape(r: Record) -> list:
    """What makes two cases differ in kind: each case found is blocked by these values."""
    return [r.dtype, r.major, r.swizzle_code, r.tile_swizzle, r.mn, r.cta_group, r.m]


def Problem(arch: str, break_=()) -> problem.Problem:
    """Desc cases on `arch` that break exactly `break_` (and keep every other rule); next(seed) gives
    one more of a new shape (dtype, major, both swizzles, which fields differ), or None."""
    r = symbolic_record()
    return problem.Problem(r, constraints(r), domain(r), [r.arch == ARCHES.index(arch)], break_, _hints, _shape)
