"""What the field-level Z3 models of the fuzz targets share (solver/model/desc_case.py,
solver/model/recipe.py): enum and range terms over Int fields, the Problem that finds field values
breaking exactly some rules, one new shape at a time, and concrete evaluation."""
from __future__ import annotations

import random
from typing import Callable, Optional

import z3


def is_one_of(var, names: tuple, *chosen: str):
    """var holds the code (index in names) of one of `chosen`."""
    return z3.Or(*[var == names.index(c) for c in chosen])


def between(x, lo, hi):
    """lo <= x <= hi."""
    return z3.And(x >= lo, x <= hi)


def table(var, names: tuple, values: dict, default=0):
    """If-chain: values[name] when var is that name's code, else `default`."""
    term = z3.IntVal(default)
    for name in names:
        term = z3.If(var == names.index(name), values[name], term)
    return term


class Problem:
    """Field values that obey `domain` and `fixed`, break every rule in `break_` and keep the others.
    next(seed) gives one more (steered by hints(record, rng), dropped where they conflict), each of a
    new shape (the terms shape(record) differ from every earlier solution), or None when none is left."""

    def __init__(self, record, rules: dict, domain: list, fixed: list, break_, hints: Callable, shape: Callable):
        from solver.model.tensormap import _check_with_hints          # the shared hint-dropping loop
        unknown = set(break_) - set(rules)
        if unknown:
            raise ValueError(f"unknown rule ids: {', '.join(sorted(unknown))}")
        self._check, self._hints, self._shape = _check_with_hints, hints, shape
        self.record = record
        self.solver = z3.Solver()
        self.solver.add(*domain, *fixed)
        self.solver.add(*[z3.Not(c) if rule_id in break_ else c for rule_id, c in rules.items()])
        self.found = 0

    def next(self, seed: int = 0) -> Optional[dict]:
        r = self.record
        self.solver.set("random_seed", seed)
        rng = random.Random(seed)
        model = self._check(self.solver, self._hints(r, rng), rng, prefix=f"hint{self.found}")
        if model is None:
            return None
        self.found += 1
        values = {name: model.eval(term, model_completion=True).as_long() for name, term in vars(r).items()}
        self.solver.add(z3.Not(z3.And(*[t == model.eval(t, model_completion=True) for t in self._shape(r)])))
        return values


def evaluate(record, rules: dict, values: dict) -> dict:
    """rule id -> whether concrete field values obey it (substituted into the rules' terms over `record`)."""
    pairs = [(getattr(record, name), z3.IntVal(v)) for name, v in values.items()]
    return {rule_id: z3.is_true(z3.simplify(z3.substitute(c, *pairs))) for rule_id, c in rules.items()}
