"""What the field-level Z3 models of the fuzz targets share (solver/model/desc_case.py,
solver/model/recipe.py, ...): records of Int fields, the rule registry, enum and range terms, concrete
evaluation, and Terms, a model's record, rules and domain built once. The models hold constraints only:
asking Z3 for cases that break exactly some rules (the one Problem class, its hints and shapes) is the
fuzz targets' sampling policy, in solver/fuzz/problem.py and solver/fuzz/<target>_sampling.py."""
from __future__ import annotations

from dataclasses import fields as _fields, make_dataclass
from typing import Callable

import z3

from solver.model.vocab import DESCRIPTOR_ROW_BYTES, DESCRIPTOR_SWIZZLES


def _symbolic(record_class: type, prefix: str = ""):
    """A record of fresh Int constants, each named prefix + its field's name."""
    return record_class(*[z3.Int(prefix + f.name) for f in _fields(record_class)])


def record_type(name: str, field_names: tuple) -> type:
    """A dataclass with one z3 Int term per field (a fuzz target's field-level record); its class method
    symbolic(prefix="") makes one of fresh constants."""
    return make_dataclass(name, [(f, z3.ArithRef) for f in field_names],
                          namespace={"symbolic": classmethod(_symbolic)})


def rule_registry(rules: dict) -> Callable:
    """The decorator factory `rule(rule_id)`: it records the predicate it decorates in `rules`."""
    def rule(rule_id: str):
        def register(predicate):
            rules[rule_id] = predicate
            return predicate
        return register
    return rule


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


def descriptor_row_bytes(swizzle_var):
    """W, the row bytes of the descriptor swizzle whose code (index in DESCRIPTOR_SWIZZLES) the term holds."""
    return table(swizzle_var, DESCRIPTOR_SWIZZLES, DESCRIPTOR_ROW_BYTES)


def evaluate(record, rules: dict, values: dict) -> dict:
    """rule id -> whether concrete field values obey it (substituted into the rules' terms over `record`)."""
    pairs = [(getattr(record, name), z3.IntVal(v)) for name, v in values.items()]
    return {rule_id: z3.is_true(z3.simplify(z3.substitute(c, *pairs))) for rule_id, c in rules.items()}


class Terms:
    """A field model's symbolic record with its rules and domain, built once on first use (the fuzz
    targets' sampling modules pose their Problems over them: each copies them into a Z3 context of its
    own, so sharing them changes no answer), and what the fuzz targets ask of it: concrete evaluation,
    the rules concrete values break, the domain."""

    def __init__(self, make_record: Callable, constraints: Callable, domain: Callable):
        self._build = (make_record, constraints, domain)
        self._built = None

    def terms(self) -> tuple:
        """(record, {rule id: constraint}, [domain fact]): the shared terms, built on first use."""
        if self._built is None:
            make_record, constraints, domain = self._build
            record = make_record()
            self._built = (record, constraints(record), domain(record))
        return self._built

    def evaluate(self, values: dict) -> dict:
        """rule id -> whether concrete field values ({name: int}) obey it."""
        record, rules, _ = self.terms()
        return evaluate(record, rules, values)

    def violated(self, values: dict) -> list:
        """The rule ids (registry order) concrete field values break."""
        return [rule_id for rule_id, ok in self.evaluate(values).items() if not ok]

    def in_domain(self, values: dict) -> bool:
        """Whether concrete field values are a well-formed record (the domain's facts hold)."""
        record, _, facts = self.terms()
        pairs = [(getattr(record, name), z3.IntVal(v)) for name, v in values.items()]
        return all(z3.is_true(z3.simplify(z3.substitute(fact, *pairs))) for fact in facts)
