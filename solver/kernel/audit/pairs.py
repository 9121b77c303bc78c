"""audit.attention.pairs: a wgmma whose A is in registers computed from an earlier wgmma's accumulator
(attention's P = softmax(S), S = Q K^T, then P V) pairs each key's score with that key's value. What P's
registers hold comes from the run's trace (trace.RegisterA: which accumulator element each A element is);
the rows of K and V from the MMA checks (properties.decide_reads' rows).
"""
from __future__ import annotations

import bisect
from typing import Optional

from solver.kernel.audit import phases
from solver.kernel.audit.report import Property
from solver.kernel.audit.tally import VACUOUS, Definition, Tally
from solver.kernel.audit.trace import Trace

PAIRS = Definition(
    "audit.attention.pairs", "Every MMA whose A is in registers computed from an earlier MMA's accumulator "
    "(attention's P = softmax(S), S = Q K^T, then P V) reads, at A's row m and column k, the element of S at row "
    "m and at the column whose row of K is the row of B (V) at k: each key's probability meets that key's value.",
    "PTX ISA 9.0 9.7.15.5.1 (wgmma: A in registers, its fragment; the accumulator's fragment), 9.7.15.5.2 "
    "(D = A x B + D summed over k)")


def rows_through_registers(trace: Trace, rows: dict, lands: Tally) -> None:
    """A wgmma with A in registers reads the rows of the accumulator they came from: its rows of A are that
    accumulator's (its last visit before), when every lane's A rows hold that accumulator's same rows."""
    for use in trace.register_a:
        if use.mismatch is not None:
            lands.refuted(use.mismatch)
            continue
        visits = rows.get((use.warp, use.statement), [])
        k = bisect.bisect_left(visits, (use.visit,))
        if use.problem is not None or k >= len(visits) or visits[k][0] != use.visit:
            continue                               # (its rows of A stay untraced: the landings say unknown)
        before = rows.get((use.warp, use.origin), [])
        j = bisect.bisect_left(before, (use.visit,)) - 1
        if j >= 0 and "a" in before[j][1] and "a" not in visits[k][1]:
            visits[k][1]["a"] = before[j][1]["a"]


def decide_pairs(trace: Optional[Trace], rows: dict, run, statements: list, in_tmem: list = ()) -> Property:
    """audit.attention.pairs over every wgmma visit reading A from registers and every tcgen05.mma visit
    reading A from tensor memory (in_tmem: tmem_operand.follow's)."""
    pairs = Tally(PAIRS)
    if trace is None:
        return pairs.result("the run did not follow the accumulators")
    cut = run.incomplete() or phases.undecided(run)    # (a warp stopped, lanes left unfollowed, visits cut,
                                                        # an event on an undecided path)
    if cut is not None:
        pairs.unknown(cut)
    if not any(s.instruction is not None and len(s.instruction.operands) > 1 and (
            (s.instruction.opcode.startswith("wgmma.mma_async") and s.instruction.operands[1].strip().startswith("{"))
            or (s.instruction.opcode.startswith("tcgen05.mma") and s.instruction.operands[1].strip().startswith("[")))
               for s in statements):
        return Property(PAIRS.id, "proved", PAIRS.statement, PAIRS.source,
                        reason=f"{VACUOUS} MMA that reads A from registers or tensor memory: nothing to pair")
    for use in trace.register_a:
        if use.mismatch is not None:
            pairs.refuted(use.mismatch)
            continue
        if use.problem is not None:
            pairs.unknown(use.problem)
            continue
        visits = rows.get((use.warp, use.statement), [])
        k = bisect.bisect_left(visits, (use.visit,))
        before = rows.get((use.warp, use.origin), [])
        j = bisect.bisect_left(before, (use.visit,)) - 1
        if k >= len(visits) or visits[k][0] != use.visit or j < 0:
            pairs.unknown(f"line {use.line}: the MMA or the one its A came from was not traced")
            continue
        _pair(use.line, use.warp, use.pairs, before[j][1], visits[k][1], trace.lines.get(use.origin), pairs)
    for use in in_tmem:
        if use.mismatch is not None:
            pairs.refuted(use.mismatch)
            continue
        if use.problem is not None:
            pairs.unknown(use.problem)
            continue
        visits = rows.get((use.warp, use.statement), [])
        k = bisect.bisect_left(visits, (use.order,))
        if k >= len(visits) or visits[k][0] != use.order:
            pairs.unknown(f"line {use.line}: the MMA was not traced")
            continue
        _pair(use.line, use.warp, use.pairs, use.origin_rows or {}, visits[k][1], use.origin_line, pairs)
    return pairs.result("no MMA reading A from registers or tensor memory was reached in the run")


def _pair(line: int, warp: int, found: tuple, s: dict, v: dict, score_line: Optional[int], pairs: Tally) -> None:
    if "b_first_row" not in v or "b" not in s or "b_k_dims" not in s:
        pairs.unknown(f"line {line}: B of the MMA, or of the one its A came from, was not traced")
        return
    _check_pairs(line, warp, found, s, v, score_line, pairs)


def _check_pairs(line: int, warp: int, found: tuple, s: dict, v: dict, score_line: Optional[int],
                 pairs: Tally) -> None:
    """A's column k holds S's column c: K's row c (S's B) and V's row at k (this MMA's B) are one row of
    the same index space: equal on every global dimension but the ones K's k and V's n run along."""
    s_dims = [d for d in range(len(s["b"][0]) + len(s["b_k_dims"])) if d not in s["b_k_dims"]]
    for k, column in found:
        if column >= len(s["b"]) or k >= len(v["b_first_row"]):
            pairs.unknown(f"line {line}: A's column {k} holds column {column}, past what was traced")
            return
        key = dict(zip(s_dims, s["b"][column]))
        value = v["b_first_row"][k]
        shared = sorted(key)
        if set(key) != set(range(len(value))) - set(v["b_n_dims"]):
            pairs.unknown(f"line {line}: K's and V's maps do not share their dimensions")
            return
        if any(key[d] != value[d] for d in shared):
            pairs.refuted({"what": f"A's column {k} holds the probability of the key at K's global row "
                                   f"{[key[d] for d in shared]}, but B's row at k {k} is V's global row "
                                   f"{[value[d] for d in shared]}", "mma_line": line, "warp": warp,
                           "score_mma_line": score_line, "k": k, "score_column": column})
            return
    pairs.proved()
