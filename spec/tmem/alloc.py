"""Tensor-memory allocation: tcgen05.alloc, tcgen05.dealloc, tcgen05.relinquish_alloc_permit
(PTX 9.7.16.1.2 Tensor Memory Allocation, 9.7.16.5 Issue Granularity, 9.7.16.7.1).

Allocation is by columns: all 128 lanes of each column; nCols a power of two in [32, 512]. One warp
allocates (cta_group::1; with cta_group::2 one warp in each CTA of the pair); everything allocated is
deallocated before the kernel exits; after tcgen05.relinquish_alloc_permit the CTA may not allocate; all
tcgen05 instructions of a kernel name the same .cta_group; the columns of successive allocations should
not increase. `check_sequence` checks a kernel's sequence of these operations, each a dict:
  {"op": "alloc" | "dealloc" | "relinquish_alloc_permit", "warp": w, "columns": n, "cta_group": 1 | 2,
   "address": a}   (address: what alloc wrote / what dealloc names; optional)
"""
from __future__ import annotations

from typing import Optional

from spec.rule import Consequence, SpecError, Violation, rule
from spec.tmem.address import COLUMNS

MIN_COLUMNS = 32
OPS = ("alloc", "dealloc", "relinquish_alloc_permit")


def is_legal_columns(columns: int) -> bool:
    """A power of two in [32, 512] (9.7.16.7.1)."""
    return MIN_COLUMNS <= columns <= COLUMNS and columns & (columns - 1) == 0


# --- Constraints on one instruction (subject "tmem_instruction", from spec/tmem/instruction.py) ---------
ALLOC_COLUMNS = rule(
    "tmem.alloc.columns", "PTX 9.7.16.7.1",
    "The nCols of tcgen05.alloc is a power of two in [32, 512].",
    subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0 refuses an immediate nCols: \"value must be power of 2\", \"out of range, expected "
         "to be in range [32..512]\"; a register nCols is rule tmem.alloc.columns.run_time's.")


@ALLOC_COLUMNS.checker
def _alloc_columns(instr):
    if instr.kind == "alloc" and isinstance(instr.ncols, int) and not is_legal_columns(instr.ncols):
        return f"tcgen05.alloc of {instr.ncols} columns: nCols is a power of two in [32, 512]"
    return None


DEALLOC_GRANULE = rule(
    "tmem.dealloc.columns_granule", "PTX 9.7.16.7.1",
    "The nCols of tcgen05.dealloc is a multiple of 32 (the unit of de-allocation).",
    subject="tmem_instruction", enforced_by="ptxas",
    note="ptxas 13.0 refuses an immediate that is not: \"expected to be multiple of 32\".")


@DEALLOC_GRANULE.checker
def _dealloc_granule(instr):
    if instr.kind == "dealloc" and isinstance(instr.ncols, int) and instr.ncols % MIN_COLUMNS:
        return f"tcgen05.dealloc of {instr.ncols} columns: not a multiple of 32"
    return None


DEALLOC_COLUMNS = rule(
    "tmem.dealloc.columns", "PTX 9.7.16.7.1",
    "The nCols of tcgen05.dealloc is a power of two in [32, 512].",
    subject="tmem_instruction", enforced_by="nobody",
    note="ptxas 13.0 checks only the multiple of 32 (tmem.dealloc.columns_granule): it accepts an "
         "immediate 0, 96 or 2048.")


@DEALLOC_COLUMNS.checker
def _dealloc_columns(instr):
    if instr.kind == "dealloc" and isinstance(instr.ncols, int) and not is_legal_columns(instr.ncols):
        return f"tcgen05.dealloc of {instr.ncols} columns: nCols is a power of two in [32, 512]"
    return None


# --- Constraints on a kernel's sequence of allocation operations ---------------------------------------
def _normalized(ops: list) -> list:
    checked = []
    for index, op in enumerate(ops):
        if not isinstance(op, dict) or op.get("op") not in OPS:
            raise SpecError(f"ops[{index}].op", op.get("op") if isinstance(op, dict) else op,
                            "expected alloc, dealloc or relinquish_alloc_permit", SINGLE_WARP.id)
        if op["op"] != "relinquish_alloc_permit" and not isinstance(op.get("columns"), int):
            raise SpecError(f"ops[{index}].columns", op.get("columns"), "an integer column count",
                            RUN_TIME_COLUMNS.id)
        if op.get("cta_group", 1) not in (1, 2):
            raise SpecError(f"ops[{index}].cta_group", op.get("cta_group"), "expected 1 or 2",
                            CTA_GROUP_UNIFORM.id)
        checked.append({"warp": 0, "cta_group": 1, "address": None, **op})
    return checked


def _first(breaches: list) -> Optional[str]:
    return breaches[0][1] if breaches else None


def _run_time_columns(ops):
    return [(i, f"ops[{i}]: {op['op']} of {op['columns']} columns; a power of two in [32, 512]")
            for i, op in enumerate(ops) if op["op"] != "relinquish_alloc_permit"
            and not is_legal_columns(op["columns"])]


def _single_warp(ops):
    found, owner = [], {}
    for i, op in enumerate(ops):
        if op["op"] == "relinquish_alloc_permit":
            continue
        first = owner.setdefault(op["cta_group"], op["warp"])
        if op["warp"] != first:
            found.append((i, f"ops[{i}]: {op['op']} by warp {op['warp']}; warp {first} manages this "
                             f"CTA's cta_group::{op['cta_group']} tensor memory"))
    return found


def _live_allocations(ops):
    """Replay: (breaches of tmem.alloc.dealloc_live, of tmem.alloc.dealloc_columns, allocations left)."""
    live, unknown, mismatched = [], [], []
    for i, op in enumerate(ops):
        if op["op"] == "alloc":
            live.append((i, op))
        elif op["op"] == "dealloc":
            match = next((k for k, (_, a) in enumerate(live) if a["address"] is not None
                          and a["address"] == op["address"]), None)
            if match is None:
                match = next((k for k, (_, a) in enumerate(live) if a["columns"] == op["columns"]
                              and (op["address"] is None or a["address"] is None)), None)
            if match is None:
                unknown.append((i, f"ops[{i}]: dealloc of {op['columns']} columns at {op['address']} "
                                   "names no live allocation"))
                continue
            j, allocated = live.pop(match)
            if allocated["columns"] != op["columns"]:
                mismatched.append((i, f"ops[{i}]: dealloc of {op['columns']} columns; ops[{j}] "
                                      f"allocated {allocated['columns']}"))
    return unknown, mismatched, live


def _dealloc_all(ops):
    return [(i, f"ops[{i}]: {op['columns']} columns allocated are never deallocated")
            for i, op in _live_allocations(ops)[2]]


def _cta_group_uniform(ops):
    if not ops:
        return []
    first = ops[0]["cta_group"]
    return [(i, f"ops[{i}]: cta_group::{op['cta_group']} in a kernel whose ops[0] is cta_group::{first}")
            for i, op in enumerate(ops) if op["cta_group"] != first]


def _after_relinquish(ops):
    found, relinquished = [], None
    for i, op in enumerate(ops):
        if op["op"] == "relinquish_alloc_permit" and relinquished is None:
            relinquished = i
        elif op["op"] == "alloc" and relinquished is not None:
            found.append((i, f"ops[{i}]: alloc after ops[{relinquished}] relinquished the permit"))
    return found


def _capacity(ops):
    found, used = [], 0
    unknown, _, _ = _live_allocations(ops)
    bad = {i for i, _ in unknown}
    live = {}
    for i, op in enumerate(ops):
        if op["op"] == "alloc":
            live[i] = op["columns"]
            used += op["columns"]
            if used > COLUMNS:
                found.append((i, f"ops[{i}]: {used} columns allocated at once, more than {COLUMNS}: "
                                 "the alloc blocks until columns are freed"))
        elif op["op"] == "dealloc" and i not in bad:
            used -= op["columns"]
    return found


def _non_increasing(ops):
    found, previous = [], None
    for i, op in enumerate(ops):
        if op["op"] == "alloc":
            if previous is not None and op["columns"] > ops[previous]["columns"]:
                found.append((i, f"ops[{i}]: alloc of {op['columns']} columns after ops[{previous}] "
                                 f"allocated {ops[previous]['columns']}"))
            previous = i
    return found


RUN_TIME_COLUMNS = rule(
    "tmem.alloc.columns.run_time", "PTX 9.7.16.7.1",
    "The nCols of every tcgen05.alloc and tcgen05.dealloc executed is a power of two in [32, 512].",
    subject="tmem_alloc_sequence", enforced_by="nobody",
    note="A register nCols is known only at run time.")


@RUN_TIME_COLUMNS.checker
def _check_run_time_columns(ops):
    return _first(_run_time_columns(_normalized(ops)))


SINGLE_WARP = rule(
    "tmem.alloc.single_warp", "PTX 9.7.16.1.2; PTX 9.7.16.5; PTX 9.7.16.7.1",
    "One warp of the CTA performs the allocations and de-allocations of a kernel's tensor memory "
    "(with cta_group::2, one warp in each CTA of the pair).",
    subject="tmem_alloc_sequence", evidence="interpretation", enforced_by="nobody",
    note="The manual says \"one warp from the CTA must perform the allocation and de-allocation\"; read "
         "here as the same warp for every tcgen05.alloc and tcgen05.dealloc of the kernel (CUTLASS's "
         "Allocator1Sm: \"only a single warp uniformly participates\"). relinquish_alloc_permit may come "
         "from any warp.")


@SINGLE_WARP.checker
def _check_single_warp(ops):
    return _first(_single_warp(_normalized(ops)))


DEALLOC_ALL = rule(
    "tmem.alloc.dealloc_all", "PTX 9.7.16.1.2; PTX 9.7.16.7.1",
    "All tensor memory allocated in a kernel is explicitly deallocated before the kernel exits.",
    subject="tmem_alloc_sequence", enforced_by="nobody")


@DEALLOC_ALL.checker
def _check_dealloc_all(ops):
    return _first(_dealloc_all(_normalized(ops)))


DEALLOC_LIVE = rule(
    "tmem.alloc.dealloc_live", "PTX 9.7.16.7.1",
    "The taddr of tcgen05.dealloc points to a previous allocation that is still live.",
    subject="tmem_alloc_sequence", enforced_by="nobody")


@DEALLOC_LIVE.checker
def _check_dealloc_live(ops):
    return _first(_live_allocations(_normalized(ops))[0])


DEALLOC_COLUMNS_MATCH = rule(
    "tmem.alloc.dealloc_columns", "PTX 9.7.16.7.1",
    "A tcgen05.dealloc frees as many columns as the allocation its taddr points to.",
    subject="tmem_alloc_sequence", evidence="interpretation", enforced_by="nobody",
    note="The manual names nCols \"the number of columns to be allocated or de-allocated\" and says "
         "taddr \"must point to a previous Tensor Memory allocation\"; it does not say whether part of an "
         "allocation may be freed. Read here: a dealloc frees one whole allocation.")


@DEALLOC_COLUMNS_MATCH.checker
def _check_dealloc_columns(ops):
    return _first(_live_allocations(_normalized(ops))[1])


CTA_GROUP_UNIFORM = rule(
    "tmem.alloc.cta_group_uniform", "PTX 9.7.16.7.1",
    "All tcgen05 instructions within a kernel specify the same .cta_group.",
    subject="tmem_alloc_sequence", enforced_by="ptxas",
    note="ptxas 13.0 refuses a function that mixes them: \"uses single CTA(.cta_group::1) and CTA pair "
         "granularity(.cta_group::2) and that is not allowed\".")


@CTA_GROUP_UNIFORM.checker
def _check_cta_group_uniform(ops):
    return _first(_cta_group_uniform(_normalized(ops)))


AFTER_RELINQUISH = rule(
    "tmem.alloc.after_relinquish", "PTX 9.7.16.7.1",
    "A CTA does not execute tcgen05.alloc after any of its threads executed "
    "tcgen05.relinquish_alloc_permit.", subject="tmem_alloc_sequence", enforced_by="nobody",
    note="ptxas 13.0 accepts such a kernel.")


@AFTER_RELINQUISH.checker
def _check_after_relinquish(ops):
    return _first(_after_relinquish(_normalized(ops)))


CAPACITY = rule(
    "tmem.alloc.capacity", "PTX 9.7.16.1; PTX 9.7.16.7.1",
    "At most 512 columns are allocated at once; an alloc that asks for more blocks until enough columns "
    "are freed (in a single sequence with no dealloc in between: forever).",
    subject="tmem_alloc_sequence", enforced_by="nobody",
    consequences=[Consequence("hang", "tcgen05.alloc blocks until the columns it asks for are free (PTX "
                              "9.7.16.7.1); the operations after it in this CTA's sequence wait for it, so none "
                              "frees them: it waits forever")])


@CAPACITY.checker
def _check_capacity(ops):
    return _first(_capacity(_normalized(ops)))


NON_INCREASING = rule(
    "tmem.alloc.non_increasing", "PTX 9.7.16.7.1",
    "The number of columns allocated does not increase between any two allocations in the execution "
    "order within the CTA.", subject="tmem_alloc_sequence", enforced_by="nobody",
    note="The manual says \"should not increase\".")


@NON_INCREASING.checker
def _check_non_increasing(ops):
    return _first(_non_increasing(_normalized(ops)))


_SEQUENCE_BREACHES = (
    (RUN_TIME_COLUMNS, _run_time_columns), (SINGLE_WARP, _single_warp), (DEALLOC_ALL, _dealloc_all),
    (DEALLOC_LIVE, lambda ops: _live_allocations(ops)[0]),
    (DEALLOC_COLUMNS_MATCH, lambda ops: _live_allocations(ops)[1]),
    (CTA_GROUP_UNIFORM, _cta_group_uniform), (AFTER_RELINQUISH, _after_relinquish), (CAPACITY, _capacity),
    (NON_INCREASING, _non_increasing),
)


def check_sequence(ops: list) -> list:
    """Every breach in a kernel's allocation operations: [(index of the op, Violation)], by index.
    An allocation never deallocated is reported at the index of its alloc."""
    checked = _normalized(ops)
    found = []
    for r, breaches in _SEQUENCE_BREACHES:
        found += [(i, Violation(r, message)) for i, message in breaches(checked)]
    return sorted(found, key=lambda pair: pair[0])
