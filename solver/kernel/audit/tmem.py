"""Tensor memory in the run (issue 27, item 3, "Tensor memory"): the rules spec/tmem states, applied to what
the kernel does.

* audit.tmem.access: every tcgen05.ld / tcgen05.st a warp executes, at the address the run computes, breaks
  none of the rules spec.tmem.instruction.check applies with the address and the warp known (the warp's
  lane quarter, PTX ISA 9.0 9.7.16.8.1; the 128 x 512 cells, 9.7.16.1; the lane alignment of a shape).
* audit.tmem.alloc: the run's tcgen05.alloc, tcgen05.dealloc and tcgen05.relinquish_alloc_permit, in the
  order each warp executed them, break none of spec.tmem.alloc's sequence rules (one warp allocates,
  everything allocated is deallocated with its column count, nothing after relinquishing, 512 columns).

The executor runs one warp after another, not interleaved: the allocation rules are about one warp's own
sequence (one warp allocates), which the run gives in order. Only a Blackwell GPU could confirm these
verdicts; they rest on the manual, as spec/tmem does.
"""
from __future__ import annotations

import re

from spec.rule import SpecError
from spec.tmem import alloc as tmem_alloc
from spec.tmem import instruction as tmem_instruction

from solver.kernel.audit.report import Property
from solver.kernel.audit.tally import VACUOUS, Definition, Tally, first_time
from solver.kernel.audit import operations, phases

ACCESS = Definition(
    "audit.tmem.access", "Every tcgen05.ld / tcgen05.st the run executes, at its address and from its warp, "
    "touches only that warp's lane quarter and cells inside the 128 lanes x 512 columns.",
    "PTX ISA 9.0 9.7.16.8.1 (access restrictions: warp w of a warpgroup reaches lanes 32(w mod 4) .. +31), "
    "9.7.16.1 (128 x 512 cells); the rules of spec/tmem (layoutproof rules --subject tmem_access)")
ALLOC = Definition(
    "audit.tmem.alloc", "The run's tcgen05.alloc / dealloc / relinquish_alloc_permit break no allocation rule: "
    "one warp allocates, everything allocated is deallocated with its column count, none after relinquishing, "
    "512 columns at most.",
    "PTX ISA 9.0 9.7.16.1.2 (tensor memory allocation), 9.7.16.7.1; the rules of spec/tmem/alloc.py")
DEFINITIONS = (ACCESS, ALLOC)

TMEM_ACCESS = re.compile(r"^tcgen05\.(ld|st)(\.|$)")
TMEM_ALLOCATION = re.compile(r"^tcgen05\.(alloc|dealloc|relinquish_alloc_permit)(\.|$)")
_TARGETS = {"sm_100a": "sm_100a", "sm_100f": "sm_100f", "sm_101a": "sm_101a", "sm_103a": "sm_103a",
            "sm_110a": "sm_110a"}
MAX_ACCESS_CHECKS = 20_000


def is_recorded(ins) -> bool:
    """The allocation statements (the run keeps their visits; tcgen05.ld/st and alloc are sites already)."""
    return TMEM_ALLOCATION.match(ins.opcode) is not None


def decide(statements: list, run, targets: list) -> list:
    return [_decide_access(statements, run, targets), _decide_alloc(statements, run)]


def _vacuous(definition: Definition, why: str) -> Property:
    return Property(definition.id, "proved", definition.statement, definition.source, reason=why)


def _stopped(run) -> str:
    """Why the run is not whole (a warp stopped, lanes left unfollowed, visits cut: executor.Run.incomplete),
    or ""."""
    return run.incomplete() or phases.undecided(run) or ""


def _decide_access(statements: list, run, targets: list) -> Property:
    if not any(s.instruction is not None and TMEM_ACCESS.match(s.instruction.opcode) for s in statements):
        return _vacuous(ACCESS, f"{VACUOUS} tcgen05.ld / tcgen05.st")
    tally = Tally(ACCESS)
    target = next((_TARGETS[t] for t in targets if t in _TARGETS), None)
    if target is None:
        tally.unknown(f"the module's .target ({', '.join(targets) or 'none'}) is no tcgen05 target")
        return tally.result("")
    if _stopped(run):
        tally.unknown(_stopped(run) + ": its later accesses were not seen")
    done: set = set()
    for visit in run.visits:
        ins = statements[visit.statement].instruction
        if not TMEM_ACCESS.match(ins.opcode) or visit.lanes == 0:
            continue
        address = operations.address_of(_address_operand(ins), visit.values, {})
        if not isinstance(address, int):
            tally.unknown(f"line {visit.line}: the tensor-memory address is not known ({address.reason})")
            continue
        new = first_time(done, (visit.statement, address, visit.warp % 4), MAX_ACCESS_CHECKS, tally, "accesses")
        if new is None:
            break
        if not new:
            continue
        try:
            verdict = tmem_instruction.check(_unguarded(ins.text), target, warp=visit.warp, address=address)
        except SpecError as error:
            tally.unknown(f"line {visit.line}: {error}")
            continue
        broken = [v for v in verdict["undefined"] + verdict["violations"]]
        if broken:
            tally.refuted({"what": f"{broken[0].rule.id}: {broken[0].message}", "line": visit.line,
                           "warp": visit.warp, "iteration": list(visit.iteration), "address": hex(address),
                           "rule": broken[0].rule.id})
        else:
            tally.proved()
    return tally.result("no tcgen05.ld / tcgen05.st was reached in the run")


def _unguarded(text: str) -> str:
    """The statement as spec reads one instruction: without its guard, its registers under their written
    names (the front end renames a { } block's own registers NAME$$N), its address a plain register (spec
    takes the address's value apart), with its semicolon."""
    text = re.sub(r"\$\$\d+", "", text.strip().rstrip(";").strip())
    text = re.sub(r"\[[^\]]*\]", "[%r0]", text)          # (the address's value is given apart: any register)
    return re.sub(r"^@!?[%\w$]+\s+", "", text) + ";"


def _address_operand(ins) -> str:
    """taddr: the [address] operand (the last for ld, the first for st)."""
    return next((o for o in ins.operands if o.strip().startswith("[")), "")


def _decide_alloc(statements: list, run) -> Property:
    if not any(s.instruction is not None and TMEM_ALLOCATION.match(s.instruction.opcode) for s in statements):
        return _vacuous(ALLOC, f"{VACUOUS} tcgen05.alloc / dealloc")
    tally = Tally(ALLOC)
    if _stopped(run):
        tally.unknown(_stopped(run) + ": its later allocations were not seen")
        return tally.result("")
    ops, lines = [], []
    for visit in run.visits:
        ins = statements[visit.statement].instruction
        m = TMEM_ALLOCATION.match(ins.opcode)
        if m is None or visit.lanes == 0:
            continue
        if visit.lanes is None:
            tally.unknown(f"line {visit.line}: whether the warp executes it is not known")
            return tally.result("")
        group = 2 if "cta_group::2" in ins.opcode else 1
        op = {"op": m.group(1), "warp": visit.warp, "cta_group": group}
        if m.group(1) != "relinquish_alloc_permit":
            columns = operations.value_of(ins.operands[-1], visit.values, 0xFFFFFFFF)
            if not isinstance(columns, int):
                tally.unknown(f"line {visit.line}: the column count is not known ({columns.reason})")
                return tally.result("")
            op["columns"] = columns
        ops.append(op)
        lines.append(visit.line)
    try:
        breaches = tmem_alloc.check_sequence(ops)
    except SpecError as error:
        tally.unknown(str(error))
        return tally.result("")
    if breaches:
        index, violation = breaches[0]
        tally.refuted({"what": f"{violation.rule.id}: {violation.message}", "line": lines[index],
                       "warp": ops[index]["warp"], "rule": violation.rule.id})
    elif ops:
        tally.checked += len(ops)
    return tally.result("no tensor-memory allocation was reached in the run")
