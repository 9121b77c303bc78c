"""The one Problem class of the fuzz targets: Z3 solutions over a model's constraints that break exactly
some rules, steered by the target's seed-dependent hints, one new shape at a time (each target's anchors:
solver/fuzz/<target>_sampling.py gives it the model's record, rules and domain, its hints and its
shape), with what it needs: a Z3 solver in a context of its own and the hint-dropping check.

The models (solver/model) hold the constraints only; asking Z3 for steered, varied cases is the fuzzers'
sampling policy, so it lives here."""
from __future__ import annotations

import random
from typing import Callable, Optional

import z3


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


class Undecided(RuntimeError):
    """Z3 did not decide a Problem's query within its budget (rlimit, deterministic: not a timeout)."""


def field_values(model, record) -> dict:
    """{field name: int} of a field-level record (solver.model.field.record_type) in a model: what
    Problem.next gives by default."""
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
