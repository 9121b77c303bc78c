"""What the field-level Z3 models of the fuzz targets share (solver/model/desc_case.py,
solver/model/recipe.py, ...): records of Int fields, the rule registry, enum and range terms, the
hint-dropping check, the one Problem that finds values breaking exactly some rules, one new shape at a
time (the fuzz targets' anchors: solver/fuzz/desc_sampling.py and solver/fuzz/tensormap_sampling.py give
it their hints and shapes), and concrete evaluation."""
from __future__ import annotations

import random
from dataclasses import fields as _fields, make_dataclass
from typing import Callable, Optional

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


class IsolatedSolver:
    """A z3 Solver in a context of its own. Terms are built in z3's main context as usual and copied in,
    so what it answers depends only on what was added to it: not on what else the process solved before
    (z3's search follows the internal ids of terms, which a shared context hands out in the order any
    code made them). That is what makes the same seed give the same cases in-process, whether a
    campaign is the first or the tenth one run (`fuzz`, the hypothesis strategies)."""

    def __init__(self):
        self.context = z3.Context()
        self._solver = z3.Solver(ctx=self.context)

    def add(self, *terms) -> None:
        self._solver.add(*[term.translate(self.context) for term in terms])

    def set(self, *args, **keys) -> None:
        self._solver.set(*args, **keys)

    def check(self, *assumptions):
        return self._solver.check(*[term.translate(self.context) for term in assumptions])

    def model(self) -> "IsolatedModel":
        return IsolatedModel(self._solver.model(), self.context)

    def unsat_core(self) -> list:
        """The core's tracking literals, as Bool constants of the main context (they are constants)."""
        return [z3.Bool(str(literal)) for literal in self._solver.unsat_core()]

    def reason_unknown(self) -> str:
        return self._solver.reason_unknown()


class IsolatedModel:
    """A model of an IsolatedSolver; eval takes terms of the main context and answers in it."""

    def __init__(self, model: z3.ModelRef, context: z3.Context):
        self._model, self._context = model, context

    def eval(self, term, model_completion: bool = False):
        value = self._model.eval(term.translate(self._context), model_completion=model_completion)
        return value.translate(z3.main_ctx())


def check_with_hints(solver: IsolatedSolver, hints: list, rng: random.Random, prefix: str = "hint"):
    """A model honouring as many hints as the rules allow (hints in an unsat core are dropped one at a
    time, chosen by rng), or None when the rules alone are unsatisfiable. Z3 'unknown' raises: never read
    as unsat. `prefix` names the hint trackers (distinct per call on one solver)."""
    trackers = {z3.Bool(f"{prefix}.{i}"): hint for i, hint in enumerate(hints)}
    solver.add(*[z3.Implies(t, h) for t, h in trackers.items()])
    live = list(trackers)
    while True:
        answer = solver.check(*live)
        if answer == z3.sat:
            return solver.model()
        if answer == z3.unknown:
            raise RuntimeError(f"z3 could not decide the query: {solver.reason_unknown()}")
        if not live:
            return None
        core = [t for t in solver.unsat_core() if t in trackers]
        if not core:
            return None
        live.remove(rng.choice(core))


def descriptor_row_bytes(swizzle_var):
    """W, the row bytes of the descriptor swizzle whose code (index in DESCRIPTOR_SWIZZLES) the term holds."""
    return table(swizzle_var, DESCRIPTOR_SWIZZLES, DESCRIPTOR_ROW_BYTES)


class Undecided(RuntimeError):
    """Z3 did not decide a Problem's query within its budget (rlimit, deterministic: not a timeout)."""


def field_values(model, record) -> dict:
    """{field name: int} of a field-level record (record_type) in a model: what Problem.next gives by default."""
    return {name: model.eval(term, model_completion=True).as_long() for name, term in vars(record).items()}


class Problem:
    """Values of `record` that obey `domain` and `fixed`, break every rule in `break_` and keep the other
    rules of `rules` (asserted in the dict's order; a caller that keeps only some rules passes only those
    and the broken ones). next(seed) gives one more (steered by hints(record, rng), dropped where they
    conflict), read from Z3's model by read(model, record) (default: field_values), each of a new shape
    (the terms shape(record) differ from every earlier solution), or None when none is left.

    `budget` bounds each Z3 check (its rlimit, counted in Z3's deterministic resource units, so the same
    seed gets the same answer); `next` raises Undecided where a check runs past it. None: no bound, and
    Z3 'unknown' is a RuntimeError."""

    def __init__(self, record, rules: dict, domain: list, fixed: list, break_, hints: Callable, shape: Callable,
                 read: Callable = field_values, budget: Optional[int] = None):
        unknown = set(break_) - set(rules)
        if unknown:
            raise ValueError(f"unknown rule ids: {', '.join(sorted(unknown))}")
        self._hints, self._shape, self._read = hints, shape, read
        self.record = record
        self.solver = IsolatedSolver()
        self.solver.add(*domain, *fixed)
        self.solver.add(*[z3.Not(c) if rule_id in break_ else c for rule_id, c in rules.items()])
        self.budget = budget
        if budget is not None:
            self.set_budget(budget)
        self.found = 0
        self.calls = 0

    def set_budget(self, budget: Optional[int]) -> None:
        """The rlimit of each later check (None: no bound)."""
        self.budget = budget
        self.solver.set("rlimit", budget or 0)

    def next(self, seed: int = 0):
        """One more solution, None when none is left; with a budget, Undecided when Z3 gives up on this
        seed's query (another seed may do; the solver is left as it was, less the hints)."""
        r = self.record
        self.solver.set("random_seed", seed)
        rng = random.Random(seed)
        self.calls += 1
        # the hint trackers of a call after one that raised Undecided get names of their own
        prefix = f"hint{self.found}" if self.calls == self.found + 1 else f"hint{self.found}.{self.calls}"
        try:
            model = check_with_hints(self.solver, self._hints(r, rng), rng, prefix=prefix)
        except RuntimeError as error:          # z3 'unknown': never read as unsat
            if self.budget is None:
                raise
            raise Undecided(str(error)) from None
        if model is None:
            return None
        self.found += 1
        values = self._read(model, r)
        self.solver.add(z3.Not(z3.And(*[t == model.eval(t, model_completion=True) for t in self._shape(r)])))
        return values


def evaluate(record, rules: dict, values: dict) -> dict:
    """rule id -> whether concrete field values obey it (substituted into the rules' terms over `record`)."""
    pairs = [(getattr(record, name), z3.IntVal(v)) for name, v in values.items()]
    return {rule_id: z3.is_true(z3.simplify(z3.substitute(c, *pairs))) for rule_id, c in rules.items()}


class Terms:
    """A field model's symbolic record with its rules and domain, built once on first use (each Problem
    copies them into a Z3 context of its own, so sharing them changes no answer), and what the fuzz
    targets ask of it: a Problem, concrete evaluation, the rules concrete values break, the domain."""

    def __init__(self, make_record: Callable, constraints: Callable, domain: Callable):
        self._build = (make_record, constraints, domain)
        self._built = None

    def _terms(self) -> tuple:
        if self._built is None:
            make_record, constraints, domain = self._build
            record = make_record()
            self._built = (record, constraints(record), domain(record))
        return self._built

    def problem(self, fixed: Callable, break_, hints: Callable, shape: Callable) -> Problem:
        """Problem over the shared terms; fixed(record) -> the facts that pin the case (its arch, say)."""
        record, rules, facts = self._terms()
        return Problem(record, rules, facts, fixed(record), break_, hints, shape)

    def evaluate(self, values: dict) -> dict:
        """rule id -> whether concrete field values ({name: int}) obey it."""
        record, rules, _ = self._terms()
        return evaluate(record, rules, values)

    def violated(self, values: dict) -> list:
        """The rule ids (registry order) concrete field values break."""
        return [rule_id for rule_id, ok in self.evaluate(values).items() if not ok]

    def in_domain(self, values: dict) -> bool:
        """Whether concrete field values are a well-formed record (the domain's facts hold)."""
        record, _, facts = self._terms()
        pairs = [(getattr(record, name), z3.IntVal(v)) for name, v in values.items()]
        return all(z3.is_true(z3.simplify(z3.substitute(fact, *pairs))) for fact in facts)
