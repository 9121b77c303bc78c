"""A kernel's tensor-memory allocation operations (tcgen05.alloc, tcgen05.dealloc,
tcgen05.relinquish_alloc_permit), one CTA's sequence in program order, as Z3 constraints: the
`tmem-alloc` fuzz target's model.

Written from the PTX ISA, independently of spec/tmem/alloc.py, which labels the cases (the tests compare
the two):
  9.7.16.1    tensor memory is 128 lanes x 512 columns;
  9.7.16.1.2  it is allocated by a single warp of the CTA, in columns (all 128 lanes of each), and all of
              it must be explicitly deallocated before the kernel exits;
  9.7.16.5    issue granularity: alloc / dealloc are issued by one warp (cta_group::2: one in each CTA of
              the pair);
  9.7.16.7.1  nCols, "the number of columns to be allocated or de-allocated", is a power of 2 in
              [32, 512]; tcgen05.alloc blocks until the requested amount is available; the taddr of
              tcgen05.dealloc must point to a previous allocation; the columns allocated should not increase
              between two allocations in the CTA's execution order; after any thread of the CTA executes
              tcgen05.relinquish_alloc_permit the CTA may not allocate; all tcgen05 instructions of a kernel
              specify the same .cta_group.

The record is a fixed-length sequence of MAX_OPS slots, the first `length` of them operations, the rest
padding (kind NONE, every field 0). Per slot i (Z3 constants `kind[i]`, ... so that the coverage graph
sees one field per name):
  kind[i]       KINDS code: alloc, dealloc, relinquish_alloc_permit, none
  warp[i]       the issuing warp's index in the CTA, 0..MAX_WARP
  columns[i]    nCols (alloc, dealloc; 0 on relinquish), 0..MAX_COLUMNS
  cta_group[i]  1 or 2
  names[i]      dealloc: the index of the operation whose allocation its taddr holds (the case gives each
                alloc the address `its own index`; a dealloc that names a slot that is not an earlier alloc,
                or one freed since, names no live allocation); 0 elsewhere

Liveness needs no state: the allocation of alloc t is live at operation i when t < i and no dealloc
between them names t (the first dealloc that names a live allocation frees it, whatever its nCols; a
later one naming it again names nothing live). One constraint per rule id (the fuzzer's hints and anchors:
solver/fuzz/tmem_alloc_sampling.py).
"""
from __future__ import annotations

import z3

from solver.model import field as field_model
from solver.model.field import between as _between

KINDS = ("alloc", "dealloc", "relinquish_alloc_permit", None)
ALLOC, DEALLOC, RELINQUISH, NONE = range(len(KINDS))
MAX_OPS = 8
MAX_WARP = 7                    # warps 0..7: two warpgroups, the CTA the PTX format launches
CAPACITY = 512                  # columns of tensor memory (9.7.16.1)
MAX_COLUMNS = 2 * CAPACITY      # the domain of nCols: beyond the legal range, not unboundedly
LEGAL_COLUMNS = (32, 64, 128, 256, 512)                 # powers of 2 in [32, 512] (9.7.16.7.1)
SLOT_FIELDS = ("kind", "warp", "columns", "cta_group", "names")
FIELDS = ("length",) + tuple(f"{name}[{i}]" for name in SLOT_FIELDS for i in range(MAX_OPS))
# The GPUs with tensor memory (tcgen05: sm_100a and sm_103a); sm90 has none, so no case.
ARCHES = ("sm100", "sm103")


class Record:
    """The symbolic sequence: vars(record) is {field name: Int} over FIELDS ("length", "kind[0]", ...);
    record.kind (and .warp, .columns, .cta_group, .names) lists a field's MAX_OPS slots."""

    def __init__(self, prefix: str = ""):
        for name in FIELDS:
            setattr(self, name, z3.Int(prefix + name))

    def slots(self, name: str) -> list:
        return [getattr(self, f"{name}[{i}]") for i in range(MAX_OPS)]

    kind = property(lambda self: self.slots("kind"))
    warp = property(lambda self: self.slots("warp"))
    columns = property(lambda self: self.slots("columns"))
    cta_group = property(lambda self: self.slots("cta_group"))
    names = property(lambda self: self.slots("names"))


def symbolic_record(prefix: str = "") -> Record:
    return Record(prefix)


def is_alloc_or_dealloc(r, i: int):
    return z3.Or(r.kind[i] == ALLOC, r.kind[i] == DEALLOC)


def freed_between(r, t: int, i: int):
    """A dealloc strictly between operations t and i names t."""
    return z3.Or(*[z3.And(r.kind[k] == DEALLOC, r.names[k] == t) for k in range(t + 1, i)])


def named_live(r, i: int):
    """The taddr of operation i points to an allocation still live: that of an earlier alloc t that no
    dealloc between them freed."""
    return z3.Or(*[z3.And(r.names[i] == t, r.kind[t] == ALLOC, z3.Not(freed_between(r, t, i)))
                   for t in range(i)])


def named_columns(r, i: int):
    """nCols of the operation that operation i names (an If-chain over names[i])."""
    term = z3.IntVal(0)
    for t in range(MAX_OPS):
        term = z3.If(r.names[i] == t, r.columns[t], term)
    return term


def allocated_at(r, j: int):
    """The columns allocated when alloc j has been granted: every alloc up to j, less the nCols of every
    dealloc before j that freed a live allocation (9.7.16.7.1: nCols is what dealloc de-allocates)."""
    allocated = z3.Sum(*[z3.If(r.kind[t] == ALLOC, r.columns[t], 0) for t in range(j + 1)])
    freed = z3.Sum(*[z3.If(z3.And(r.kind[k] == DEALLOC, named_live(r, k)), r.columns[k], 0) for k in range(j)]
                   ) if j else z3.IntVal(0)
    return allocated - freed


def domain(r) -> list:
    """Well-formedness, not rules: `length` operations then padding; codes and ranges; the fields an
    operation does not have hold 0 (a relinquish has no nCols, only a dealloc names an operation)."""
    facts = [_between(r.length, 1, MAX_OPS)]
    for i in range(MAX_OPS):
        real = i < r.length
        facts += [_between(r.kind[i], 0, len(KINDS) - 1), (r.kind[i] == NONE) == z3.Not(real),
                  z3.If(real, z3.And(_between(r.warp[i], 0, MAX_WARP), _between(r.cta_group[i], 1, 2)),
                        z3.And(r.warp[i] == 0, r.cta_group[i] == 0)),
                  z3.If(is_alloc_or_dealloc(r, i), _between(r.columns[i], 0, MAX_COLUMNS), r.columns[i] == 0),
                  z3.If(r.kind[i] == DEALLOC, z3.And(r.names[i] >= 0, r.names[i] < r.length), r.names[i] == 0)]
    return facts


RULES: dict = {}
_rule = field_model.rule_registry(RULES)


@_rule("tmem.alloc.columns.run_time")
def _run_time_columns(r):
    # 9.7.16.7.1: nCols "must be power of 2" and "within the range [32, 512]", for alloc and dealloc alike
    return z3.And(*[z3.Implies(is_alloc_or_dealloc(r, i), z3.Or(*[r.columns[i] == n for n in LEGAL_COLUMNS]))
                    for i in range(MAX_OPS)])


@_rule("tmem.alloc.single_warp")
def _single_warp(r):
    # 9.7.16.1.2 / 9.7.16.7.1: one warp of the CTA performs the allocation and de-allocation (per
    # .cta_group); relinquish_alloc_permit is not an allocation
    return z3.And(*[z3.Implies(z3.And(is_alloc_or_dealloc(r, i), is_alloc_or_dealloc(r, j),
                                      r.cta_group[i] == r.cta_group[j]), r.warp[i] == r.warp[j])
                    for i in range(MAX_OPS) for j in range(i + 1, MAX_OPS)])


@_rule("tmem.alloc.dealloc_all")
def _dealloc_all(r):
    # 9.7.16.1.2: everything allocated is explicitly deallocated before the kernel exits
    return z3.And(*[z3.Implies(r.kind[t] == ALLOC,
                               z3.Or(*[z3.And(r.kind[k] == DEALLOC, r.names[k] == t) for k in range(t + 1, MAX_OPS)]))
                    for t in range(MAX_OPS)])


@_rule("tmem.alloc.dealloc_live")
def _dealloc_live(r):
    # 9.7.16.7.1: "The operand taddr must point to a previous Tensor Memory allocation"
    return z3.And(*[z3.Implies(r.kind[i] == DEALLOC, named_live(r, i)) for i in range(MAX_OPS)])


@_rule("tmem.alloc.dealloc_columns")
def _dealloc_columns(r):
    # 9.7.16.7.1 read as: a dealloc frees the whole allocation its taddr points to
    return z3.And(*[z3.Implies(z3.And(r.kind[i] == DEALLOC, named_live(r, i)), r.columns[i] == named_columns(r, i))
                    for i in range(MAX_OPS)])


@_rule("tmem.alloc.cta_group_uniform")
def _cta_group_uniform(r):
    # 9.7.16.7.1: all tcgen05 instructions within a kernel specify the same .cta_group
    return z3.And(*[z3.Implies(r.kind[i] != NONE, r.cta_group[i] == r.cta_group[0]) for i in range(1, MAX_OPS)])


@_rule("tmem.alloc.after_relinquish")
def _after_relinquish(r):
    # 9.7.16.7.1: "it is illegal for a CTA to perform tcgen05.alloc after any of its constituent threads
    # execute tcgen05.relinquish_alloc_permit"
    return z3.And(*[z3.Not(z3.And(r.kind[i] == RELINQUISH, r.kind[j] == ALLOC))
                    for i in range(MAX_OPS) for j in range(i + 1, MAX_OPS)])


@_rule("tmem.alloc.capacity")
def _capacity(r):
    # 9.7.16.1 / 9.7.16.7.1: 512 columns; an alloc beyond them blocks until columns are freed
    return z3.And(*[z3.Implies(r.kind[j] == ALLOC, allocated_at(r, j) <= CAPACITY) for j in range(MAX_OPS)])


@_rule("tmem.alloc.non_increasing")
def _non_increasing(r):
    # 9.7.16.7.1: the columns allocated "should not increase between any two allocations in the execution
    # order within the CTA"
    return z3.And(*[z3.Implies(z3.And(r.kind[i] == ALLOC, r.kind[j] == ALLOC), r.columns[j] <= r.columns[i])
                    for i in range(MAX_OPS) for j in range(i + 1, MAX_OPS)])


RULE_IDS = tuple(RULES)


def constraints(r) -> dict:
    return {rule_id: predicate(r) for rule_id, predicate in RULES.items()}


TERMS = field_model.Terms(symbolic_record, constraints, domain)     # also the terms the fuzz sampling poses over
evaluate, violated, in_domain = TERMS.evaluate, TERMS.violated, TERMS.in_domain
