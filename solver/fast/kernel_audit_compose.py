"""Fast path of solver/kernel/audit/compose.py: an operand's dimensions (audit.gemm.same_k) from its box
indexes, kept per trace.

A box element's global coordinate along d is c[d] + i[d] * stride[d] with stride >= 1 (global_element): in
an operand read from one box the global coordinates change exactly where the box indexes change, so its
dimensions are those of its cells' box indexes, the same for every iteration that reads that buffer the
same way (the outcome is kept per descriptor and destination). Several boxes: the reference, once per
placement of the boxes relative to each other. tests/solver_tests/kernel/test_audit.py
(test_the_optimised_same_k_gives_the_reference_report) checks the two give the same report.
"""
from __future__ import annotations

from spec import fast
from solver.kernel.audit import compose


@fast.fast_version_of(compose.operand_dimensions_by_element)
def operand_dimensions(outcome: compose.Outcome, loads: list, maps: dict) -> tuple:
    """grid_dimensions of the operand's global elements, kept per outcome and per the coordinates of its
    boxes relative to the first one's (a translation of all of them moves every element alike, and changes
    no dimension's following k or mn)."""
    first = loads[outcome.slots[0]].coordinates
    relative = tuple(tuple(c - f for c, f in zip(loads[slot].coordinates, first)) for slot in outcome.slots)
    kept = outcome.__dict__.setdefault("_dimensions", {})
    found = kept.get(relative)
    if found is None:
        if len(outcome.slots) == 1:
            found = compose.grid_dimensions(outcome.cells, lambda cell: cell[1])
        else:
            found = compose.operand_dimensions_by_element(outcome, loads, maps)
        kept[relative] = found
    return found
