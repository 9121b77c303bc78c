"""Which rules of a fuzz target can be broken alone, and what the others are tied to.

The rule-field graph (networkx): a bipartite graph with a node per rule and per field of the target's
Z3 model (globalDim, swizzle, sbo, ...), an edge where the rule's constraint reads the field (found by
walking the Z3 term). Two rules are *neighbours* when they constrain a common field.

For each rule R, Z3's optimiser looks for a configuration that breaks R and as few other rules as
possible, every arch (and encode kind) allowed. None broken besides R: R is breakable alone (and
`layoutproof fuzz --violate R` generates cases). Otherwise `tied_to` lists the rules that break with it
in that least configuration, each marked "shares <fields>" when the graph links the two, or "implied"
when they share no field (the tie comes through the other rules). A rule that cannot be broken at all
(every configuration obeys it, given the others' domains) has breakable false and tied_to empty, with
why = "never broken".
"""
from __future__ import annotations

import re
from functools import lru_cache

import networkx as nx
import z3

from solver.model import desc_case as desc_case_model
from solver.model.bitvec import free_constants
from solver.model import tensormap as tensormap_model
from solver.fuzz.engine import TARGETS, target_module


def _fields_of(term) -> set:
    """The model fields a Z3 term reads: its uninterpreted constants, list indices dropped."""
    return {re.sub(r"\[\d+\]$", "", c.decl().name()) for c in free_constants(term)}


class Model:
    """A target's rules as Z3 terms over one symbolic record, and its domain."""

    def __init__(self, rules: dict, domain: list, context: list):
        self.rules, self.domain, self.context = rules, domain, context


def _tensormap_model() -> Model:
    r = tensormap_model.symbolic_record()
    # any encode and arch; swizzles the encoders can take
    context = [tensormap_model._swizzle_is(r, *tensormap_model.ENCODER_SWIZZLES)]
    return Model(tensormap_model.constraints(r), tensormap_model.domain(r), context)


def _desc_model() -> Model:
    r = desc_case_model.symbolic_record()
    return Model(desc_case_model.constraints(r), desc_case_model.domain(r), [])


def _recipe_model() -> Model:
    from solver.model import recipe as recipe_model
    r = recipe_model.symbolic_record()
    return Model(recipe_model.constraints(r), recipe_model.domain(r), [])


def _tmem_model() -> Model:
    from solver.model import tmem_form as tmem_model
    r = tmem_model.symbolic_record()
    return Model(tmem_model.constraints(r), tmem_model.domain(r), [])


def _tmem_alloc_model() -> Model:
    from solver.model import tmem_alloc as tmem_alloc_model
    r = tmem_alloc_model.symbolic_record()
    return Model(tmem_alloc_model.constraints(r), tmem_alloc_model.domain(r), [])


def _triton_nvmma_model() -> Model:
    from solver.model import triton_nvmma as triton_nvmma_model
    r = triton_nvmma_model.symbolic_record()
    return Model(triton_nvmma_model.constraints(r), triton_nvmma_model.domain(r), [])


def _cute_dsl_model() -> Model:
    from solver.model import cute_dsl as cute_dsl_model
    r = cute_dsl_model.symbolic_record()
    return Model(cute_dsl_model.constraints(r), cute_dsl_model.domain(r), [])


def _scales_model() -> Model:
    from solver.model import scale_config as scale_config_model
    r = scale_config_model.symbolic_record()
    return Model(scale_config_model.constraints(r), scale_config_model.domain(r), [])


MODELS = {"tensormap": _tensormap_model, "desc": _desc_model, "recipe": _recipe_model, "tmem": _tmem_model,
          "tmem-alloc": _tmem_alloc_model, "triton-nvmma": _triton_nvmma_model, "cute-dsl": _cute_dsl_model,
          "scales": _scales_model}


@lru_cache(maxsize=None)
def model_of(target: str) -> Model:
    return MODELS[target]()


def rule_field_graph(target: str) -> nx.Graph:
    """Bipartite: ("rule", id) -- ("field", name) where the rule reads the field."""
    graph = nx.Graph()
    for rule_id, term in model_of(target).rules.items():
        graph.add_node(("rule", rule_id), kind="rule")
        for name in _fields_of(term):
            graph.add_node(("field", name), kind="field")
            graph.add_edge(("rule", rule_id), ("field", name))
    return graph


def shared_fields(graph: nx.Graph, a: str, b: str) -> list:
    return sorted(name for _, name in set(graph[("rule", a)]) & set(graph[("rule", b)]))


def least_companions(target: str, rule_id: str, timeout_ms: int = 20000):
    """The fewest other rules that break together with `rule_id` (a list; [] = breakable alone), or
    None when no configuration breaks it. Where several sets are least, the one whose last rule comes
    earliest in the target's order (then the one before it, ...): each other rule i weighs 2^n + 2^i, so
    the lightest set is unique. Z3 'unknown' raises: never read as a verdict."""
    m = model_of(target)
    # A context of its own, and a unique optimum: which least set Z3 would name among equals depends on
    # what the process solved before, even in a fresh context (seen with tmem.cp.lane_alignment, tied to
    # tmem.address.range or to tmem.cp.multicast after other Z3 work).
    context = z3.Context()
    into = lambda terms: [term.translate(context) for term in terms]
    rules = {rule: term.translate(context) for rule, term in m.rules.items()}
    alone = z3.Solver(ctx=context)
    alone.set("timeout", timeout_ms)
    alone.add(*into(m.domain), *into(m.context), z3.Not(rules[rule_id]),
              *[term for other, term in rules.items() if other != rule_id])
    answer = alone.check()
    if answer == z3.sat:
        return []
    if answer != z3.unsat:
        raise RuntimeError(f"z3 could not decide whether {rule_id} breaks alone: {alone.reason_unknown()}")
    opt = z3.Optimize(ctx=context)
    opt.set("timeout", timeout_ms)
    opt.add(*into(m.domain), *into(m.context), z3.Not(rules[rule_id]))
    others = [other for other in rules if other != rule_id]
    for i, other in enumerate(others):
        opt.add_soft(rules[other], (1 << len(others)) + (1 << i), id="keep")
    answer = opt.check()
    if answer == z3.unsat:
        return None
    if answer != z3.sat:
        raise RuntimeError(f"z3 could not decide whether {rule_id} breaks alone: {opt.reason_unknown()}")
    model = opt.model()
    return [other for other, term in rules.items()
            if other != rule_id and not z3.is_true(model.eval(term, model_completion=True))]


def coverage(target: str) -> list:
    """[{"id", "breakable", "tied_to", "ties": [{"id", "why"}], "fields"}] for every rule of the target."""
    graph = rule_field_graph(target)
    report = []
    for rule_id in target_module(target).RULE_IDS:
        companions = least_companions(target, rule_id)
        fields = sorted(name for _, name in graph[("rule", rule_id)])
        entry = {"id": rule_id, "breakable": companions == [], "tied_to": companions or [], "fields": fields}
        if companions is None:
            entry["why"] = "never broken: every configuration of the target's domain obeys it"
        elif companions:
            entry["ties"] = [{"id": other, "why": ("shares " + ", ".join(shared)) if (shared := shared_fields(graph, rule_id, other))
                              else "implied (no shared field: the tie runs through other rules)"}
                             for other in companions]
        report.append(entry)
    return report


def coverage_document(targets=TARGETS) -> dict:
    return {"targets": {t: {"rules": coverage(t)} for t in targets}}
