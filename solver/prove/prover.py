"""Running properties: Z3 queries with a time limit, counterexamples replayed through spec/ and kept
in counterexamples/<property-id>/<n>.json.

Soundness: "proved" only when Z3 answers unsat for assumptions AND NOT claim; a timeout or "unknown"
is reported as "unknown". A counterexample that spec/ does not confirm is reported as "unknown"
with the reason, never as "refuted": it means the Z3 model and the executable spec disagree.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Optional

import z3

from solver.prove.catalogue import Property

COUNTEREXAMPLE_ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                   "counterexamples")


@dataclass
class Result:
    property: Property
    status: str
    seconds: float
    counterexample: Optional[dict] = None
    reason: str = ""
    saved_as: Optional[str] = None

    @property
    def as_expected(self) -> bool:
        return self.status == self.property.expected

    def as_json(self) -> dict:
        document = {"id": self.property.id, "statement": self.property.statement,
                    "domain": self.property.domain, "source": self.property.source,
                    "status": self.status, "expected": self.property.expected,
                    "seconds": round(self.seconds, 3), "counterexample": self.counterexample}
        if self.reason:
            document["reason"] = self.reason
        if self.saved_as:
            document["saved_as"] = self.saved_as
        return document


def _value(model, expr, signed: bool) -> int:
    value = model.eval(expr, model_completion=True)
    if z3.is_bv_value(value):
        return value.as_signed_long() if signed else value.as_long()
    if z3.is_true(value) or z3.is_false(value):
        return int(z3.is_true(value))
    return int(str(value))


def _check(query, timeout: float):
    solver = z3.Solver()
    solver.set("timeout", max(1, int(timeout * 1000)))
    solver.add(*query.assumptions)
    solver.add(z3.Not(query.claim))
    return solver.check(), solver


def _counterexample(query, solver) -> dict:
    model = solver.model()
    return {name: _value(model, expr, name in query.signed) for name, expr in query.variables.items()}


def prove(p: Property, timeout: float = 30.0, save: bool = False,
          root: str = COUNTEREXAMPLE_ROOT) -> Result:
    """A property whose build returns a list of lemmas is proved when every lemma is; a lemma that
    fails makes it "unknown" (a lemma is sufficient, not necessary), never "refuted"."""
    began = time.perf_counter()
    built = p.build()
    if isinstance(built, list):
        for number, lemma in enumerate(built):
            answer, solver = _check(lemma, max(0.001, timeout - (time.perf_counter() - began)))
            if answer != z3.unsat:
                reason = (f"lemma {number + 1} of {len(built)}: "
                          + ("counterexample to the lemma " + json.dumps(_counterexample(lemma, solver))
                             if answer == z3.sat else f"z3: {solver.reason_unknown()}"))
                return Result(p, "unknown", time.perf_counter() - began, reason=reason)
        return Result(p, "proved", time.perf_counter() - began)
    query = built
    answer, solver = _check(query, timeout)
    seconds = time.perf_counter() - began
    if answer == z3.unsat:
        return Result(p, "proved", seconds)
    if answer == z3.unknown:
        return Result(p, "unknown", seconds, reason=f"z3: {solver.reason_unknown()}")
    counterexample = _counterexample(query, solver)
    if p.replay is None:
        return Result(p, "unknown", seconds, counterexample,
                      reason="no concrete replay to confirm the counterexample")
    if not p.replay(counterexample):
        return Result(p, "unknown", seconds, counterexample,
                      reason="spec/ does not confirm the counterexample: model and spec disagree")
    result = Result(p, "refuted", seconds, counterexample)
    if save:
        result.saved_as = save_counterexample(p, counterexample, root)
    return result


def save_counterexample(p: Property, counterexample: dict, root: str = COUNTEREXAMPLE_ROOT) -> str:
    """counterexamples/<id>/<n>.json; an identical counterexample already kept is not duplicated."""
    folder = os.path.join(root, p.id)
    os.makedirs(folder, exist_ok=True)
    existing = sorted(f for f in os.listdir(folder) if f.endswith(".json"))
    for name in existing:
        with open(os.path.join(folder, name)) as f:
            if json.load(f)["counterexample"] == counterexample:
                return os.path.join(folder, name)
    path = os.path.join(folder, f"{len(existing)}.json")
    with open(path, "w") as f:
        json.dump({"property": p.id, "statement": p.statement, "domain": p.domain,
                   "counterexample": counterexample}, f, indent=1, sort_keys=True)
        f.write("\n")
    return path
