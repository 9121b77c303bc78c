"""Running properties: Z3 queries with a time limit, counterexamples replayed through spec/ and, only
when asked, written to a directory as <property id>.json.

Soundness: "proved" only when Z3 answers unsat for assumptions AND NOT claim; a timeout or "unknown"
is reported as "unknown". A counterexample that spec/ does not confirm is reported as "unknown"
with the reason, never as "refuted": it means the Z3 model and the executable spec disagree.

Determinism: every query is translated into a fresh Z3 context (terms numbered afresh, so nothing built
or solved before it matters) and asked of a fresh z3.Solver with a fixed random seed (SOLVER_SEED): a
property gives the same counterexample run after run, in any process, alone or with the whole catalogue.
A saved counterexample file holds no timing, so writing the corpus twice gives the same bytes.

Strategies: a property may name a proof strategy (STRATEGIES, Property.strategy), a Z3 tactic pipeline
tried first on each of its queries, in a fresh context with the same seed. Only its "unsat" is used
(proved); on "sat" or "unknown" the query is asked again of the default solver with the time left, so
counterexamples and unknowns are exactly those of the default solver, with or without a strategy.
A query this process has already proved (the same terms: another property's identical lemma) is not
asked again (_PROVED); only proofs are remembered, so no counterexample comes from the memo.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Optional

import z3

from spec.rule import SpecError

from solver.prove.property import Property

SOLVER_SEED = 0             # z3.Solver's random_seed for every query

# Proof strategies (Property.strategy): Z3 tactic pipelines. "smt": Z3's SMT core after light
# preprocessing, without the default solver's eager bit-blasting: 3-5x faster on the queries with
# products and divisions by unknowns (tmem's fragment and accumulator maps, the allocation bound,
# model.no_wrap's overflow conditions) and on the non-linear integer lemma of canonical.injective; 3-15x
# slower on the table-heavy TMA placement queries, which keep the default solver.
STRATEGIES = {"smt": ("simplify", "propagate-values", "solve-eqs", "smt")}


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


def _solver(context: z3.Context, strategy: str = ""):
    if not strategy:
        return z3.Solver(ctx=context)
    return z3.Then(*STRATEGIES[strategy], ctx=context).solver()


def _check(query, timeout: float, strategy: str = ""):
    """Assumptions AND NOT claim, in a fresh context and solver (the default one, or `strategy`'s) with a
    fixed seed: (z3 answer, solver)."""
    context = z3.Context()
    solver = _solver(context, strategy)
    solver.set("random_seed", SOLVER_SEED)
    solver.set("timeout", max(1, int(timeout * 1000)))
    solver.add(*[_into(context, a) for a in query.assumptions])
    solver.add(z3.Not(_into(context, query.claim)))
    return solver.check(), solver


# Queries this process has proved (unsat), by the identity of their terms: Z3 makes one term of equal
# terms, so two queries with the same assumptions and claim (lemmas that several properties share, such
# as canonical.injective's disjoint-blocks lemma of one block shape) have the same ids. The terms are kept
# in the entry so that their ids are never reused. A query built by a patched model function is made of
# other terms, hence another key; only "unsat" is remembered, so a counterexample or an "unknown" is always
# asked afresh.
_PROVED: dict = {}


def forget_proofs() -> None:
    """Empty _PROVED (a benchmark that times a second pass in one process proves afresh)."""
    _PROVED.clear()


def _proof_key(query) -> tuple:
    return (tuple(a.get_id() if isinstance(a, z3.AstRef) else ("python", bool(a)) for a in query.assumptions),
            query.claim.get_id() if isinstance(query.claim, z3.AstRef) else ("python", bool(query.claim)))


def _decide(query, timeout: float, strategy: str = ""):
    """_check, first with `strategy` when one is named: its unsat is the answer; otherwise the default
    solver's answer with the time left (so a counterexample never depends on the strategy). A query
    proved before in this process is unsat again: (unsat, None)."""
    key = _proof_key(query)
    if key in _PROVED:
        return z3.unsat, None
    answer, solver = z3.unknown, None
    if strategy:
        began = time.perf_counter()
        answer, solver = _check(query, timeout, strategy)
        timeout = max(0.001, timeout - (time.perf_counter() - began))
    if answer != z3.unsat:
        answer, solver = _check(query, timeout)
    if answer == z3.unsat:
        _PROVED[key] = (list(query.assumptions), query.claim)
    return answer, solver


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
            answer, solver = _decide(lemma, max(0.001, timeout - (time.perf_counter() - began)), p.strategy)
            if answer != z3.unsat:
                reason = (f"lemma {number + 1} of {len(built)}: "
                          + ("counterexample to the lemma " + json.dumps(_counterexample(lemma, solver))
                             if answer == z3.sat else f"z3: {solver.reason_unknown()}"))
                return Result(p, "unknown", time.perf_counter() - began, reason=reason)
        return Result(p, "proved", time.perf_counter() - began)
    query = built
    answer, solver = _decide(query, timeout, p.strategy)
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
    path = counterexample_path(directory, p.id)
    try:
        os.makedirs(directory, exist_ok=True)
        with open(path, "w") as f:
            json.dump({"property": p.id, "statement": p.statement, "domain": p.domain, "rules": list(p.rules),
                       "counterexample": counterexample}, f, indent=1, sort_keys=True)
            f.write("\n")
    except OSError as error:       # the folder was checked before the proofs (cli.prove); a disk may still fill
        raise SpecError("save", path, f"cannot be written: {error.strerror or error}") from None
    return path



# --- many properties over processes ------------------------------------------------------------------------
_POOL_PROPERTIES: list = []      # the properties a forked worker proves, by index (set before the fork)


def _prove_batch(job: tuple) -> list:
    indices, timeout = job
    found = []
    for index in indices:
        r = prove(_POOL_PROPERTIES[index], timeout=timeout)
        found.append((index, r.status, r.seconds, r.counterexample, r.reason))
    return found


# Rough proving times in milliseconds (one process, quiet machine) of the properties that take longest, by
# id prefix; any other property counts DEFAULT_COST_MS. prove_many hands the longest work out first so that
# no long property starts last and leaves one process working alone. Only the order of the work depends on
# these: a wrong or missing entry costs time, never an answer, and results are still reported in order.
COST_HINTS_MS = (("tmem.accumulator.read_once.", 200), ("model.no_wrap", 170),
                 ("tmem.fragment.footprint.16x32bx2", 90), ("tmem.alloc.inside.16x32bx2", 45),
                 ("canonical.injective.", 25), ("tmem.accumulator.injective.", 25), ("tma_mma.", 12))
DEFAULT_COST_MS = 10
# Families whose properties share queries (tma_mma.agree: dtypes of one width build one query;
# canonical.injective: the disjoint-blocks and swizzle lemmas of one block shape): each goes to one process
# as one batch, so that _PROVED proves a shared query once.
SHARED_PREFIXES = ("tma_mma.agree.", "canonical.injective.")


def cost_hint(p: Property) -> float:
    for prefix, weight in COST_HINTS_MS:
        if p.id.startswith(prefix):
            return weight
    return DEFAULT_COST_MS


def batches(properties: list) -> list:
    """The work of prove_many: lists of property indices, a family of SHARED_PREFIXES in one list, any
    other property alone; longest first by cost_hint (ties in the properties' order)."""
    grouped: dict = {}
    for index, p in enumerate(properties):
        key = next((prefix for prefix in SHARED_PREFIXES if p.id.startswith(prefix)), index)
        grouped.setdefault(key, []).append(index)
    work = list(grouped.values())
    return sorted(work, key=lambda batch: -sum(cost_hint(properties[i]) for i in batch))      # stable


def prove_many(properties: list, timeout: float = 30.0, save_dir: Optional[str] = None, jobs: int = 1,
               on_result=None) -> list:
    """prove() of each property, in order. With jobs > 1 they run in that many forked processes (each
    query already runs in a fresh Z3 context with a fixed seed, so a property's answer does not depend on
    the process), in batches handed out longest first (batches); results come back in the properties'
    order, on_result(index, result) for each in that order as soon as it and every earlier one are in,
    and counterexamples are saved by this process."""
    results = []
    if jobs <= 1 or len(properties) < 2 or "fork" not in mp_contexts():
        for index, p in enumerate(properties):
            results.append(prove(p, timeout=timeout, save_dir=save_dir))
            if on_result:
                on_result(index, results[-1])
        return results
    import multiprocessing
    arrived: dict = {}
    _POOL_PROPERTIES[:] = properties
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            for found in pool.imap_unordered(_prove_batch, [(batch, timeout) for batch in batches(properties)]):
                for index, status, seconds, counterexample, reason in found:
                    arrived[index] = Result(properties[index], status, seconds, counterexample, reason)
                while len(results) in arrived:
                    result = arrived.pop(len(results))
                    if result.status == "refuted" and save_dir is not None:
                        result.saved_as = save_counterexample(result.property, result.counterexample, save_dir)
                    results.append(result)
                    if on_result:
                        on_result(len(results) - 1, result)
    finally:
        _POOL_PROPERTIES.clear()
    return results


def mp_contexts() -> list:
    import multiprocessing
    return multiprocessing.get_all_start_methods()
