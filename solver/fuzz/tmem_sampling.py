"""The tmem fuzz target's sampling policy: the seed-dependent hints that steer Z3 towards CUTLASS-like
tcgen05 forms, and `Problem`, solver/fuzz/problem.py's Problem over solver/model/tmem_form.py's
constraints (the rules, the record and the evaluator stay there), which gives the target its anchors."""
from __future__ import annotations

import random

import z3

from solver.fuzz import problem
from solver.model.field import is_one_of
from solver.model.tmem_form import (ARCH_TARGETS, CP, LD_RED, OPS, PTX_VERSIONS, QUARTER, REAL_CP_SHAPES,
                                    REAL_SHAPES, SHIFT, SPLIT, TARGETS, Record, constraints, copying,
                                    cp_multicast_ok, data, domain, registers_needed, symbolic_record)


def _hints(r: Record, rng: random.Random) -> list:
    """Realistic, seed-dependent values (dropped where the asked rules conflict): CUTLASS-like accesses,
    a warp reading its own quarter from its first or second 16 lanes, columns of a 512-column allocation."""
    hints = [r.op == rng.randrange(len(OPS)), z3.Implies(data(r), r.shape == rng.randrange(len(REAL_SHAPES))),
             z3.Implies(data(r), r.num_log2 == rng.randrange(6)),
             r.ptx == rng.choice((len(PTX_VERSIONS) - 1, len(PTX_VERSIONS) - 2)),
             r.warp == rng.randrange(8), z3.Implies(data(r), r.lane == QUARTER * (r.warp % 4) + rng.choice((0, 0, 16))),
             r.column == rng.choice((0, 0, 8, 32, 64, 128, 256)),
             z3.Implies(data(r), r.registers == registers_needed(r)), r.qual == 0, r.operand == 0,
             z3.If(copying(r), z3.And(r.sync == 0, r.aligned == 0), z3.And(r.sync == 1, r.aligned == 1)),
             z3.Implies(copying(r), r.cta_group == rng.choice((1, 1, 2))),
             z3.Implies(r.op == CP, z3.And(r.cp_shape == rng.randrange(len(REAL_CP_SHAPES)), cp_multicast_ok(r),
                                           r.fmt == rng.choice((0, 0, 1, 2)))),
             z3.Implies(r.op == CP, r.lane == 0), z3.Implies(r.op == SHIFT, r.lane == rng.choice((0, 32, 64, 96))),
             r.pack == 0, r.abs == 0, r.nan == 0,
             z3.Implies(r.op == LD_RED, z3.And(r.red_op == rng.choice((1, 2)), r.red_type == rng.choice((1, 2, 3)))),
             z3.Implies(r.shape == SPLIT, r.hs_value == rng.choice((0, 16, 32, 64, 128)))]
    rng.shuffle(hints)
    return hints


def _shape(r: Record) -> list:
    """What makes two anchors differ in kind: op, shape, .num, pack, target, PTX version; cp's shape,
    multicast, format and cta_group."""
    return [r.op, r.shape, r.num_log2, r.pack, r.target, r.ptx, r.cp_shape, r.multicast, r.fmt, r.cta_group]


def Problem(arch: str, break_=()) -> problem.Problem:
    """Forms whose target runs on `arch` (ARCH_TARGETS) that break exactly `break_`; next(seed) gives one
    more of a new shape (op, shape, .num, pack, target, PTX version; cp's shape, multicast, format and
    cta_group), or None."""
    r = symbolic_record()
    fixed = [is_one_of(r.target, TARGETS, *ARCH_TARGETS[arch])]
    return problem.Problem(r, constraints(r), domain(r), fixed, break_, _hints, _shape)
