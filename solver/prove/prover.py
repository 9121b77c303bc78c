"""Running properties: Z3 queries with a time limit, counterexamples replayed through spec/ and, only
when asked, written to a directory as <property id>.json.

Soundness: "proved" only when Z3 answers unsat for assumptions AND NOT claim; a timeout or "unknown"
is reported as "unknown". A counterexample that spec/ does not confirm is reported as "unknown"
with the reason, never as "refuted": it means the Z3 model and the executable spec disagree.

Determinism: every query is translated into a fresh Z3 context (terms numbered afresh, so nothing built
or solved before it matters) and asked of a fresh z3.Solver with a fixed random seed (SOLVER_SEED): a
property gives the same counterexample run after run, in any process, alone or with the whole catalogue.
A saved counterexample file holds no timing, so writing the corpus twice gives the same bytes.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Optional

import z3

from solver.prove.property import Property

SOLVER_SEED = 0             # z3.Solver's random_seed for every query


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


def _into(context: z3.Context, term):
    """The term in `context` (a Python bool as a Z3 constant)."""
    return term.translate(context) if isinstance(term, z3.AstRef) else z3.BoolVal(bool(term), context)


def _check(query, timeout: float):
    """Assumptions AND NOT claim, in a fresh context and solver with a fixed seed: (z3 answer, solver)."""
    context = z3.Context()
    solver = z3.Solver(ctx=context)
    solver.set("random_seed", SOLVER_SEED)
    solver.set("timeout", max(1, int(timeout * 1000)))
    solver.add(*[_into(context, a) for a in query.assumptions])
    solver.add(z3.Not(_into(context, query.claim)))
    return solver.check(), solver


def _counterexample(query, solver) -> dict:
    model = solver.model()
    return {name: _value(model, _into(solver.ctx, expr), name in query.signed)
            for name, expr in query.variables.items()}


def prove(p: Property, timeout: float = 30.0, save_dir: Optional[str] = None) -> Result:
    """Prove or refute `p` within `timeout` seconds. With `save_dir`, a refutation's counterexample is
    written to save_dir/<id>.json (save_counterexample); nothing is written otherwise.

    A property whose build returns a list of lemmas is proved when every lemma is; a lemma that
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
    if save_dir is not None:
        result.saved_as = save_counterexample(p, counterexample, save_dir)
    return result


def counterexample_path(directory: str, property_id: str) -> str:
    return os.path.join(directory, f"{property_id}.json")


def save_counterexample(p: Property, counterexample: dict, directory: str) -> str:
    """directory/<id>.json: the property, its statement, range and rules, and the counterexample (JSON,
    sorted keys, a trailing newline); an earlier file of the property is overwritten. The path."""
    os.makedirs(directory, exist_ok=True)
    path = counterexample_path(directory, p.id)
    with open(path, "w") as f:
        json.dump({"property": p.id, "statement": p.statement, "domain": p.domain, "rules": list(p.rules),
                   "counterexample": counterexample}, f, indent=1, sort_keys=True)
        f.write("\n")
    return path



# --- many properties over processes ------------------------------------------------------------------------
_POOL_PROPERTIES: list = []      # the properties a forked worker proves, by index (set before the fork)


def _prove_index(job: tuple) -> tuple:
    index, timeout = job
    r = prove(_POOL_PROPERTIES[index], timeout=timeout)
    return index, r.status, r.seconds, r.counterexample, r.reason


def prove_many(properties: list, timeout: float = 30.0, save_dir: Optional[str] = None, jobs: int = 1,
               on_result=None) -> list:
    """prove() of each property, in order. With jobs > 1 they run in that many forked processes (each
    query already runs in a fresh Z3 context with a fixed seed, so a property's answer does not depend on
    the process); results come back in the properties' order, on_result(index, result) as each arrives,
    and counterexamples are saved by this process."""
    results = []
    if jobs <= 1 or len(properties) < 2 or "fork" not in mp_contexts():
        for index, p in enumerate(properties):
            results.append(prove(p, timeout=timeout, save_dir=save_dir))
            if on_result:
                on_result(index, results[-1])
        return results
    import multiprocessing
    _POOL_PROPERTIES[:] = properties
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for index, status, seconds, counterexample, reason in pool.imap(
                    _prove_index, [(i, timeout) for i in range(len(properties))]):
                p = properties[index]
                result = Result(p, status, seconds, counterexample, reason)
                if status == "refuted" and save_dir is not None:
                    result.saved_as = save_counterexample(p, counterexample, save_dir)
                results.append(result)
                if on_result:
                    on_result(index, result)
    finally:
        _POOL_PROPERTIES.clear()
    return results


def mp_contexts() -> list:
    import multiprocessing
    return multiprocessing.get_all_start_methods()
