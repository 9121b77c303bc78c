"""What a property is: a claim over a parameter range, the query that decides it, and the rules it proves.

A property states a claim over a parameter range. Its `build` returns a Query: named variables, the
assumptions that fix the range, and the claim (or a list of lemma Queries whose conjunction implies the
claim). The prover (solver/prove/prover.py) asks Z3 for a model of assumptions AND NOT claim: none means
"proved" (over exactly that range), one means "refuted" with a counterexample, and a timeout or an
incomplete answer means "unknown". A property may name a proof `strategy` (prover.STRATEGIES: a Z3 tactic
pipeline that proves its queries faster than the default solver); it only decides proofs: a query the
strategy does not prove unsat is asked again of the default solver, so every counterexample and every
"unknown" is the default solver's. Every counterexample is replayed through spec/ (the concrete
executor) by the property's `replay`, which must confirm it. `rules` names the spec/ rules (ids that
spec.rules.resolve knows) whose consequence or model the property checks.

The topic modules (layout, swizzle, tma, descriptor, im2col) register their properties here with `prop`;
solver/prove/catalogue.py imports them all.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

STATUSES = ("proved", "refuted", "unknown")


@dataclass
class Query:
    variables: dict                     # name -> z3 expression to report in a counterexample
    assumptions: list                   # the parameter range and side conditions
    claim: object                       # z3 Bool that must hold everywhere in the range
    signed: tuple = ()                  # variables to report as signed integers


@dataclass
class Property:
    id: str
    statement: str
    domain: str                         # the parameter range, in words
    source: str
    expected: str                       # "proved" or "refuted"
    build: Callable[[], Query] = field(repr=False)
    replay: Optional[Callable[[dict], bool]] = field(default=None, repr=False)
    family: str = ""
    rules: tuple = ()                   # the spec/ rule ids the property is about
    strategy: str = ""                  # a prover.STRATEGIES name to try first for proofs ("": none)

    def as_json(self) -> dict:
        return {"id": self.id, "statement": self.statement, "domain": self.domain,
                "source": self.source, "expected": self.expected, "rules": list(self.rules)}


PROPERTIES: dict = {}


def prop(id: str, statement: str, domain: str, source: str, expected: str,
         replay: Optional[Callable[[dict], bool]] = None, family: str = "", rules: tuple = (),
         strategy: str = ""):
    """Decorator: register the query builder it decorates as a property."""
    if expected not in ("proved", "refuted"):
        raise ValueError(f"{id}: expected must be proved or refuted")

    def register(build):
        if id in PROPERTIES:
            raise ValueError(f"duplicate property {id}")
        PROPERTIES[id] = Property(id, statement, domain, source, expected, build, replay, family, tuple(rules),
                                  strategy)
        return build
    return register
