"""Fuzz target `tmem-alloc`: one CTA's sequence of tensor-memory allocation operations (tcgen05.alloc,
tcgen05.dealloc, tcgen05.relinquish_alloc_permit) in program order.

A case is what `layoutproof tmem alloc` takes (docs/CLI.md): {"ops": [op, ...]}, 1 to MAX_OPS operations,
each {"op": "alloc" | "dealloc", "warp", "columns", "cta_group", "address"} or {"op":
"relinquish_alloc_permit", "warp", "cta_group"}. The real tensor-memory address an alloc writes is known
only at run time, so the case names it by the alloc's own index in "ops": ops[i] allocates "address" i,
and a dealloc's "address" is the index of the operation whose address it frees (one that is not an
earlier alloc, or one freed since, names no live allocation). The kernels of --format ptx keep that
meaning: alloc i writes its address to shared slot i, and a dealloc of "address" t reads slot t
(solver/fuzz/formats/tmem_alloc_ptx.py).

Generation: Z3 anchors over solver/model/tmem_alloc.py's constraints (solver/fuzz/tmem_alloc_sampling.py:
each of a new length and sequence of op kinds), then samples that redraw one to three things of an anchor
(the allocating warp, the cta_group of all, an alloc's nCols with the deallocs that freed it whole, the
order, a pair alloc + dealloc added or dropped, a relinquish_alloc_permit added, what a dealloc names), each
kept only when spec.tmem.alloc.check_sequence labels it with exactly the asked rules. The arch is the GPU
the kernel runs on: sm100 (sm_100a) or sm103 (sm_103a); sm90 has no tensor memory and gets no case.

Labels (spec.tmem.alloc.check_sequence): the broken rules; the outcome "refused" when the kernel mixes
.cta_group::1 and ::2 (ptxas refuses the function, PTX 9.7.16.7.1), else "hang" when an alloc asks for
more columns than are free (it blocks until columns are freed, PTX 9.7.16.7.1; in one CTA's sequence
the operations after it wait for it, so nothing frees them), else "unknown": the manual says what must
hold and not what happens otherwise, and none of these rules is one it calls undefined behaviour. The
witness: "index", the first operation that breaks the rules deciding the outcome, "because", spec's
messages for those rules (every broken rule's when unknown), "also", the other broken rules, if any,
and "by": "ptxas" (refused) or a "note".
"""
from __future__ import annotations

import random
from typing import Iterator, Optional
from spec.tmem import alloc as spec_alloc

from solver.model import tmem_alloc as model
from solver.fuzz import tmem_alloc_sampling as sampling
from solver.fuzz.engine import Stats, anchored, exactly
from spec.rule import CATALOGUE

from solver.fuzz.outcome import catalogue_order, Label, outcome_ids, rule_outcome

RULE_IDS = model.RULE_IDS
ARCHES = model.ARCHES           # the GPUs with tensor memory; `fuzz --arch sm90` is refused for this target
MAX_OPS = model.MAX_OPS
ALLOC, DEALLOC, RELINQUISH = "alloc", "dealloc", "relinquish_alloc_permit"
# What each broken rule leads to is the rule's record (spec.rule.Rule.outcome_on: ptxas refuses a kernel mixing
# .cta_group::1 and ::2; an alloc past 512 columns hangs). No rule of a sequence is one the manual calls
# undefined behaviour: it says "must", "should" or "illegal", and nothing of what follows.
LABELLED_OUTCOMES = ("refused", "hang")          # worst first: the outcomes a sequence's rules lead to
UNKNOWN_NOTE = ("ptxas accepts the kernel; the manual states the rule (PTX 9.7.16.1.2, 9.7.16.7.1) but not what "
                "happens when it is broken; no GPU here runs tcgen05 to observe it")


# --- Rendering the model's values as a case ---------------------------------------------------------------
def sequence_of(values: Optional[dict]) -> Optional[list]:
    """The model's field values as the sampler's sequence: [{"op", "warp", "columns", "cta_group",
    "names"}] ("names": the index a dealloc names; None elsewhere), or None for None."""
    if values is None:
        return None
    ops = []
    for i in range(values["length"]):
        kind = model.KINDS[values[f"kind[{i}]"]]
        ops.append({"op": kind, "warp": values[f"warp[{i}]"], "columns": values[f"columns[{i}]"],
                    "cta_group": values[f"cta_group[{i}]"],
                    "names": values[f"names[{i}]"] if kind == DEALLOC else None})
    return ops


def case_op(index: int, op: dict) -> dict:
    """One operation as `tmem alloc` reads it: an alloc's address is its own index."""
    if op["op"] == RELINQUISH:
        return {"op": RELINQUISH, "warp": op["warp"], "cta_group": op["cta_group"]}
    address = index if op["op"] == ALLOC else op["names"]
    return {"op": op["op"], "warp": op["warp"], "columns": op["columns"], "cta_group": op["cta_group"],
            "address": address}


def case_of(ops: list) -> Optional[dict]:
    """The case of a sequence; None when its length is outside 1..MAX_OPS."""
    if not 1 <= len(ops) <= MAX_OPS:
        return None
    return {"ops": [case_op(i, op) for i, op in enumerate(ops)]}


def field_values(case: dict) -> dict:
    """The model's field values of a case this module wrote (the inverse of case_of), read without spec,
    so that the Z3 model can judge a case on its own (model.violated)."""
    ops = case["ops"]
    if not 1 <= len(ops) <= MAX_OPS:
        raise ValueError(f"not a tmem-alloc fuzz case: {len(ops)} operations")
    v = dict.fromkeys(model.FIELDS, 0)
    v["length"] = len(ops)
    for i in range(MAX_OPS):
        if i >= len(ops):
            v[f"kind[{i}]"] = model.NONE
            continue
        op = ops[i]
        if op["op"] == ALLOC and op["address"] != i:
            raise ValueError(f"not a tmem-alloc fuzz case: ops[{i}] allocates address {op['address']}")
        v.update({f"kind[{i}]": model.KINDS.index(op["op"]), f"warp[{i}]": op["warp"],
                  f"cta_group[{i}]": op["cta_group"], f"columns[{i}]": op.get("columns", 0),
                  f"names[{i}]": op["address"] if op["op"] == DEALLOC else 0})
    return v


# --- Labels ----------------------------------------------------------------------------------------------
def witness_of(breaches: list, **extra) -> dict:
    """{"index": the first breaching operation, "because": spec's messages, by index, **extra}."""
    return {"index": breaches[0][0], "because": [str(v) for _, v in breaches], **extra}


def label(case: dict, arch: str, expect=None) -> Optional[Label]:
    """What spec says of a tmem-alloc case (SpecError when malformed). With `expect` (a set of rule ids),
    None as soon as the broken rules are known to differ from it (no witness computed)."""
    found = spec_alloc.check_sequence(case["ops"])            # [(index, Violation)], by index
    order = catalogue_order()
    ids = tuple(sorted({v.rule.id for _, v in found}, key=lambda i: order.get(i, len(order))))
    if expect is not None and set(ids) != set(expect):
        return None
    if not ids:
        return Label(ids, "ok", None)
    for outcome in LABELLED_OUTCOMES:
        rule_ids = outcome_ids(ids, arch, outcome)
        breaches = [(i, v) for i, v in found if v.rule.id in rule_ids]
        if breaches:
            others = [i for i in ids if i not in rule_ids]
            why = rule_outcome(rule_ids[0], arch)[1]
            extra = {"by": CATALOGUE[rule_ids[0]].enforced_by} if outcome == "refused" else {"note": why}
            return Label(ids, outcome, witness_of(breaches, **extra, **({"also": others} if others else {})))
    return Label(ids, "unknown", witness_of(found, note=UNKNOWN_NOTE))


# --- Sampling ----------------------------------------------------------------------------------------------
def _reorder(ops: list, order: list) -> None:
    """ops[:] = the operations at the old indices `order`, in that order (others dropped); each dealloc
    names the same operation at its new index, or itself (nothing live) when that one was dropped."""
    new_index = {old: new for new, old in enumerate(order)}
    moved = []
    for new, old in enumerate(order):
        op = dict(ops[old])
        if op["op"] == DEALLOC:
            op["names"] = new_index.get(op["names"], new)
        moved.append(op)
    ops[:] = moved


def _insert(ops: list, position: int, op: dict) -> None:
    """Insert op at position; the deallocs that name operations at or after it follow them."""
    for other in ops:
        if other["op"] == DEALLOC and other["names"] >= position:
            other["names"] += 1
    ops.insert(position, op)


def _managed(ops: list) -> list:
    return [op for op in ops if op["op"] != RELINQUISH]


def _mutators(rng: random.Random):
    legal = model.LEGAL_COLUMNS

    def owner(ops):
        """The warp that allocates moves: every alloc / dealloc it issued goes to another warp."""
        managed = _managed(ops)
        if managed:
            old, new = managed[0]["warp"], rng.randrange(model.MAX_WARP + 1)
            for op in managed:
                if op["warp"] == old:
                    op["warp"] = new

    def relinquisher(ops):
        for op in ops:
            if op["op"] == RELINQUISH:
                op["warp"] = rng.randrange(model.MAX_WARP + 1)

    def cta_group(ops):
        """Every operation of the first one's .cta_group switches to the other."""
        first = ops[0]["cta_group"]
        for op in ops:
            if op["cta_group"] == first:
                op["cta_group"] = 3 - first

    def columns(ops):
        """An alloc's nCols; the deallocs that freed it whole follow."""
        allocs = [i for i, op in enumerate(ops) if op["op"] == ALLOC]
        if allocs:
            t = rng.choice(allocs)
            old = ops[t]["columns"]
            new = rng.choice(legal + legal + (0, 16, 48, 96, 1024, rng.randrange(model.MAX_COLUMNS + 1)))
            ops[t]["columns"] = new
            for op in ops:
                if op["op"] == DEALLOC and op["names"] == t and op["columns"] == old:
                    op["columns"] = new

    def dealloc_columns(ops):
        deallocs = [op for op in ops if op["op"] == DEALLOC]
        if deallocs:
            rng.choice(deallocs)["columns"] = rng.choice(legal + (0, 48, 1024))

    def swap(ops):
        if len(ops) >= 2:
            p = rng.randrange(len(ops) - 1)
            order = list(range(len(ops)))
            order[p], order[p + 1] = p + 1, p
            _reorder(ops, order)

    def move(ops):
        order = list(range(len(ops)))
        taken = order.pop(rng.randrange(len(order)))
        order.insert(rng.randrange(len(order) + 1), taken)
        _reorder(ops, order)

    def add_pair(ops):
        """An alloc by the allocating warp, no larger than the last one, and later its dealloc."""
        if len(ops) > MAX_OPS - 2:
            return
        managed = _managed(ops)
        warp = managed[0]["warp"] if managed else rng.randrange(model.MAX_WARP + 1)
        p = rng.randrange(len(ops) + 1)
        before = [op["columns"] for op in ops[:p] if op["op"] == ALLOC]
        n = rng.choice([c for c in legal if c <= min(before, default=max(legal))] or [min(legal)])
        group = ops[0]["cta_group"]
        _insert(ops, p, {"op": ALLOC, "warp": warp, "columns": n, "cta_group": group, "names": None})
        _insert(ops, rng.randrange(p + 1, len(ops) + 1),
                {"op": DEALLOC, "warp": warp, "columns": n, "cta_group": group, "names": p})

    def drop(ops):
        """An operation goes; an alloc takes the deallocs that name it along."""
        k = rng.randrange(len(ops))
        gone = {k} | ({i for i, op in enumerate(ops) if op["op"] == DEALLOC and op["names"] == k}
                      if ops[k]["op"] == ALLOC else set())
        if len(gone) < len(ops):
            _reorder(ops, [i for i in range(len(ops)) if i not in gone])

    def relinquish(ops):
        if len(ops) < MAX_OPS:
            _insert(ops, rng.randrange(len(ops) + 1), {"op": RELINQUISH, "warp": rng.randrange(model.MAX_WARP + 1),
                                                        "columns": 0, "cta_group": ops[0]["cta_group"],
                                                        "names": None})

    def rename(ops):
        deallocs = [op for op in ops if op["op"] == DEALLOC]
        if deallocs:
            rng.choice(deallocs)["names"] = rng.randrange(len(ops))

    return (owner, relinquisher, cta_group, columns, dealloc_columns, swap, move, add_pair, drop, relinquish,
            rename)


def _copy(ops: list) -> list:
    return [dict(op) for op in ops]


def generate(arch: str, violate: frozenset, count: int, seed: int, stats: Stats) -> Iterator[tuple]:
    rng = random.Random(seed)
    problem = sampling.Problem(arch, violate)
    yield from anchored(lambda s: sequence_of(problem.next(s)), case_of, exactly(label, arch, violate),
                        _mutators(rng), _copy, count, rng, stats, violate)
