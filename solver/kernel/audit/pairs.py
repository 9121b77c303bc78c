"""audit.attention.pairs: a wgmma whose A is in registers computed from an earlier wgmma's accumulator
(attention's P = softmax(S), S = Q K^T, then P V) pairs each key's score with that key's value. What P's
registers hold comes from the run's trace (trace.RegisterA: which accumulator element each A element is);
the rows of K and V from the MMA checks (properties.decide_reads' rows).
"""
from __future__ import annotations

import bisect
from typing import Optional

from solver.kernel.audit.report import Property
from solver.kernel.audit.tally import VACUOUS, Definition, Tally
from solver.kernel.audit.trace import RegisterA, Trace

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


def decide_pairs(trace: Optional[Trace], rows: dict, run, statements: list) -> Property:
    """audit.attention.pairs over every wgmma visit reading A from registers."""
    pairs = Tally(PAIRS)
    if trace is None:
        return pairs.result("the run did not follow the accumulators")
    in_tmem = next((s.instruction for s in statements if s.instruction is not None and
                    s.instruction.opcode.startswith("tcgen05.mma") and len(s.instruction.operands) > 1 and
                    s.instruction.operands[1].strip().startswith("[")), None)
    if in_tmem is not None:       # (sm_100 attention: P in tensor memory, which the tags do not follow)
        pairs.unknown(f"line {in_tmem.line}: a tcgen05.mma reads A from tensor memory, which is not followed")
    stopped = next((w for w in run.warps if w.stopped), None)
    if stopped is not None:
        pairs.unknown(f"warp {stopped.warp} stopped ({stopped.stopped})")
    if not any(s.instruction is not None and s.instruction.opcode.startswith("wgmma.mma_async") and
               len(s.instruction.operands) > 1 and s.instruction.operands[1].strip().startswith("{")
               for s in statements) and in_tmem is None:
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
        v, s = visits[k][1], before[j][1]
        if "b_first_row" not in v or "b" not in s or "b_k_dims" not in s:
            pairs.unknown(f"line {use.line}: B of the MMA, or of the one its A came from, was not traced")
            continue
        _check_pairs(use, s, v, trace, pairs)
    return pairs.result("no MMA reading A from registers was reached in the run")


def _check_pairs(use: RegisterA, s: dict, v: dict, trace: Trace, pairs: Tally) -> None:
    """A's column k holds S's column c: K's row c (S's B) and V's row at k (this MMA's B) are one row of
    the same index space: equal on every global dimension but the ones K's k and V's n run along."""
    s_dims = [d for d in range(len(s["b"][0]) + len(s["b_k_dims"])) if d not in s["b_k_dims"]]
    for k, column in use.pairs:
        if column >= len(s["b"]) or k >= len(v["b_first_row"]):
            pairs.unknown(f"line {use.line}: A's column {k} holds column {column}, past what was traced")
            return
        key = dict(zip(s_dims, s["b"][column]))
        value = v["b_first_row"][k]
        shared = sorted(key)
        if set(key) != set(range(len(value))) - set(v["b_n_dims"]):
            pairs.unknown(f"line {use.line}: K's and V's maps do not share their dimensions")
            return
        if any(key[d] != value[d] for d in shared):
            pairs.refuted({"what": f"A's column {k} holds the probability of the key at K's global row "
                                   f"{[key[d] for d in shared]}, but B's row at k {k} is V's global row "
                                   f"{[value[d] for d in shared]}", "mma_line": use.line, "warp": use.warp,
                           "score_mma_line": trace.lines.get(use.origin), "k": k, "score_column": column})
            return
    pairs.proved()
