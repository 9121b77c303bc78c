"""The scales fuzz target's sampling policy: the seed-dependent hints that steer Z3's scale
configurations, and `Problem`, solver/fuzz/problem.py's Problem over solver/model/scale_config.py's
constraints (the rules, the record and the evaluator stay there), which gives the target its anchors."""
from __future__ import annotations

import random

from solver.fuzz import problem
from solver.model.scale_config import KINDS, LAYOUTS, SCALE_TYPES, TERMS, VECTORS, Record


def _hints(r: Record, rng: random.Random) -> list:
    """Seed-dependent values, dropped where the asked rules conflict."""
    hints = [r.kind == rng.randrange(len(KINDS)), r.vector == rng.randrange(len(VECTORS)),
             r.scale_type == rng.randrange(len(SCALE_TYPES)), r.sf_layout == rng.randrange(len(LAYOUTS)),
             r.n == rng.choice((8, 16, 64, 128, 192, 256, 24, 200)), r.k == rng.choice((64, 128, 256, 512, 1024, 96)),
             r.cta_group == rng.randint(1, 2)]
    rng.shuffle(hints)
    return hints


def _shape(r: Record) -> list:
    """What makes two anchors differ in kind: the kind, the vector, the scale type and the layout."""
    return [r.kind, r.vector, r.scale_type, r.sf_layout]


def Problem(break_=()) -> problem.Problem:
    """Cases that break exactly `break_`; next(seed) gives one more of a new shape, or None."""
    r, rules, facts = TERMS.terms()
    return problem.Problem(r, rules, facts, [], break_, _hints, _shape)
