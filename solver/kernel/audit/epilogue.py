"""The epilogue: each accumulator element D[m][n] a wgmma computed reaches global (m, n) (issue 27, item 4).

The run follows the accumulator's values (solver/kernel/concrete/tags.py: each byte names the element it
holds) from the wgmma's registers through the conversions and packs to where they are stored:
* `st.shared` / `st` to a shared address, and `stmatrix` (spec/mma/fragment.py), into shared memory;
* then a TMA store (`cp.async.bulk.tensor.Nd.global.shared::cta`, or its reduce form) of a box: the box's
  element at box index i, at shared address placed by the map (spec.tma.place), goes to the global
  coordinates c + i (PTX ISA 9.0 5.5.3); or `st.global` / `st` to a global address, directly.

Which element a register holds is lane-relative; the store's lane and warp make it absolute: element e
of lane t in warp w of the wgmma at line L is D[row][col] of its 64 x N tile (spec/mma/fragment.py), and
the MMA's traced operands (compose.py) give the global row of A behind `row` and of B behind `col`.

What a TMA store reads in shared memory is what the warps wrote there before it: a write by the storing
warp earlier in its run, or one by another warp before a CTA barrier (bar.sync / barrier.sync) the two
both passed. The executor runs one warp after the other; the barriers each warp passed order their
writes (each warp's count of barriers passed: its epoch). Two warps writing one byte in the same epoch
make what is read unknown.

audit.epilogue.lands: every element stored this way lands at the global coordinates that are, dimension
by dimension, its coordinates in A's rows and B's rows (one assignment for the whole kernel, reported: it
says whether C is stored (n, m) or (m, n)); for plain global stores, at an address that is one affine
function of those coordinates; no two elements land on one place; every element of each accumulator
that reaches global memory at all reaches it.
audit.epilogue.fenced: a fence.proxy.async lies between every shared-memory write a TMA store reads and
the store: the writer's after the write and before the barrier, or the storing warp's after that barrier
(TileLang fences in the issuing thread only, CUTLASS and Triton in every writer).
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Optional

from spec.mma import fragment
from spec.rule import SpecError

from solver.kernel.audit import compose, operations
from solver.kernel.audit.report import Property
from solver.kernel.audit.tally import Definition, Tally
from solver.kernel.concrete import executor, tags
from solver.kernel.concrete.values import Lanes, SharedGeneric, Unknown
from solver.kernel.frontend.instruction import registers_in

LANDS = Definition(
    "audit.epilogue.lands", "Every accumulator element D[m][n] that a wgmma computed and the kernel stores "
    "reaches global memory at the coordinates of its m (A's row) and n (B's row), through the registers, "
    "shared memory and TMA store boxes it passes; no two elements land on one place, and every element of "
    "a stored accumulator is stored.",
    "PTX ISA 9.0 9.7.15.5.1 (wgmma accumulator fragments), stmatrix, 9.7.9.25.5.1 (cp.async.bulk.tensor "
    "store: the box at the coordinates), 5.5.3 (the box's elements), 9.7.9.21 (cvt)")
FENCED = Definition(
    "audit.epilogue.fenced", "Between every shared-memory write a TMA store reads and the store, a "
    "fence.proxy.async lies on the path that orders them: the writer's, before the barrier, or the storing "
    "thread's, after it.",
    "PTX ISA 9.0 8 (memory consistency model: a generic-proxy write and an async-proxy read are ordered "
    "through a proxy fence in their base causality order), 9.7.13.4 (fence.proxy.async); CUDA C++ "
    "Programming Guide, TMA (fence.proxy.async.shared::cta before a TMA store of data the threads wrote)")
PAIRS = Definition(
    "audit.attention.pairs", "Every MMA whose A is in registers computed from an earlier MMA's accumulator "
    "(attention's P = softmax(S), S = Q K^T, then P V) reads, at A's row m and column k, the element of S at row "
    "m and at the column whose row of K is the row of B (V) at k: each key's probability meets that key's value.",
    "PTX ISA 9.0 9.7.15.5.1 (wgmma: A in registers, its fragment; the accumulator's fragment), 9.7.15.5.2 "
    "(D = A x B + D summed over k)")
DEFINITIONS = (LANDS, FENCED, PAIRS)

VACUOUS = "the kernel has no"   # how a property true for want of any instance begins its reason (static)
TMEM_BASE = 0                  # audit.assume.tmem_base: the first allocation's address (lane 0, column 0)
MAX_CELLS = 8_000_000          # shared and global bytes recorded per run (then: unknown)
MAX_NOTES = 64
_BARRIER = re.compile(r"^(bar|barrier)(\.cta)?\.(sync|red)(\.|$)")
_OTHER_GLOBAL_WRITERS = re.compile(r"^(red|atom)\.global|^st\.async|^cp\.async\.bulk\.global|^red\.async")


def watched(ins) -> bool:
    opcode = ins.opcode
    if opcode.startswith("st.") or opcode == "st":
        return not any(ins.has(space) for space in ("local", "param"))
    if operations.TMA_OPCODE.match(opcode):
        try:
            return operations.tma_form(ins).kind in ("store", "reduce")
        except operations.FormError:
            return False
    return opcode.startswith(("stmatrix", "fence.proxy.async")) or _BARRIER.match(opcode) is not None


@dataclass
class Write:
    """Bytes some lanes of a warp stored: (address, piece) with piece (origin, warp, lane, element, byte,
    width) or None (a byte that is no accumulator element's)."""
    warp: int
    tick: int
    order: int                     # the run's visits recorded before it (the MMA visits before it)
    line: int
    cells: list


@dataclass
class TensorStore:
    warp: int
    tick: int
    line: int
    form: object                   # operations.TmaForm
    coordinates: tuple             # int | Unknown each
    smem: object                   # int | Unknown


@dataclass
class Trace(executor.Tracer):
    """The executor's Tracer for the audit: the accumulator's tags, and every store, barrier and fence."""
    statements: list
    shared: list = field(default_factory=list)          # Write into shared memory
    global_: list = field(default_factory=list)         # Write into global memory
    tensor_stores: list = field(default_factory=list)   # TensorStore
    barriers: dict = field(default_factory=dict)        # warp -> [tick]
    fences: dict = field(default_factory=dict)          # warp -> [tick]
    lost: list = field(default_factory=list)            # (line, why) where tagged values stopped being followed
    unfollowed: list = field(default_factory=list)      # (line, why): a store whose bytes are not known
    elements: dict = field(default_factory=dict)        # wgmma statement -> (elements per lane, N)
    lines: dict = field(default_factory=dict)           # wgmma statement -> its line
    register_a: list = field(default_factory=list)      # RegisterA: a wgmma reading A from registers
    tmem_slots: dict = field(default_factory=dict)      # shared address -> the tensor-memory address written
    allocations: int = 0                                # tcgen05.alloc executed (all warps)
    tick: int = 0
    cells: int = 0
    _accumulators: dict = field(default_factory=dict)

    def watches(self, ins) -> bool:
        return watched(ins) or ins.opcode.startswith("tcgen05.alloc")

    def takes(self, ins) -> bool:
        return ins.opcode.startswith("wgmma.mma_async") or (bool(self.tmem_slots) and ins.base == "ld" and
                                                             (ins.has("shared") or ins.has("shared::cta")))

    def _note(self, where: list, line: int, why: str) -> None:
        if len(where) < MAX_NOTES:
            where.append((line, why))

    def observe(self, statement: int, ins, guard, warp, order: int) -> None:
        self.tick += 1
        if guard is not None and guard == 0:
            return
        if isinstance(guard, Unknown):
            if not ins.opcode.startswith("fence"):
                self._note(self.unfollowed, ins.line, f"{ins.opcode} under an unknown predicate ({guard.reason})")
            return
        lanes = [lane for lane in range(32) if warp.active[lane] and
                 (not isinstance(guard, Lanes) or guard.values[lane])]
        if ins.opcode.startswith("tcgen05.alloc"):
            self._allocate(ins, warp, lanes)
        elif _BARRIER.match(ins.opcode):
            self.barriers.setdefault(warp.index, []).append(self.tick)
        elif ins.opcode.startswith("fence.proxy.async"):
            self.fences.setdefault(warp.index, []).append(self.tick)
        elif operations.TMA_OPCODE.match(ins.opcode):
            self._tensor_store(ins, warp, lanes)
        elif ins.opcode.startswith("stmatrix"):
            self._stmatrix(ins, warp, lanes, order)
        else:
            self._store(ins, warp, lanes, order)

    def _allocate(self, ins, warp, lanes: list) -> None:
        """tcgen05.alloc [dst], nCols writes the allocated tensor-memory address to shared dst (PTX ISA 9.0
        9.7.16.7.1). Under audit.assume.tmem_base the CTA's first allocation is lane 0, column 0; a later
        one's is not known (the slot then reads as any shared load)."""
        if not lanes:
            return
        found = _address(ins.operands[0], warp, lanes[:1], "shared")[0]
        self.allocations += 1
        if found is None:
            return
        if self.allocations == 1:
            self.tmem_slots[found[1]] = TMEM_BASE
        else:
            self.tmem_slots.pop(found[1], None)

    def _tensor_store(self, ins, warp, lanes: list) -> None:
        if not lanes:
            return
        form = operations.tma_form(ins)
        coordinates = tuple(_one_value(warp.read(c, 32), lanes) for c in form.coordinates)
        smem = _address(form.smem, warp, lanes[:1], "shared")[0]
        smem = smem[1] if smem is not None and smem[0] == "shared" else Unknown(f"{form.smem}: not known")
        self.tensor_stores.append(TensorStore(warp.index, self.tick, ins.line, form, coordinates, smem))

    def _store(self, ins, warp, lanes: list, order: int) -> None:
        """st{.space}{.vN}.TYPE [address], value (PTX ISA 9.0 9.7.9.9): the vector's elements one after the
        other from the address."""
        if len(ins.operands) != 2 or not lanes:
            return
        width = ins.width
        size = max(1, width // 8)
        data = ins.operands[1].strip()
        names = [n.strip() for n in data[1:-1].split(",")] if data.startswith("{") else [data]
        values = [warp.read(n, width) for n in names]
        space = "shared" if ins.has("shared") or ins.has("shared::cta") else "global" if ins.has("global") else None
        addresses = _address(ins.operands[0], warp, lanes, space)
        spaces = {"shared": [], "global": []}
        for lane, found in zip(lanes, addresses):
            if found is None:
                if any(tags.is_tagged(v) for v in values):
                    self._note(self.unfollowed, ins.line, f"an accumulator value stored at an address not known "
                                                          f"({ins.operands[0]})")
                return
            where, address = found
            for k, value in enumerate(values):
                parts = tags.bytes_of(_lane_value(value, lane), width)
                for b in range(size):
                    spaces[where].append((address + k * size + b, _absolute(parts[b], warp.index, lane)))
        self._record(spaces["shared"], self.shared, warp, order, ins.line)
        if any(piece is not None for _, piece in spaces["global"]):
            self._record(spaces["global"], self.global_, warp, order, ins.line)

    def _stmatrix(self, ins, warp, lanes: list, order: int) -> None:
        count = next((int(m[1:]) for m in ins.modifiers if m in ("x1", "x2", "x4")), None)
        if not ins.has("m8n8") or not ins.has("b16") or count is None or len(lanes) != 32:
            self._note(self.unfollowed, ins.line, f"{ins.opcode}: only .m8n8 .b16, all lanes, is followed")
            return
        names = registers_in(ins.operands[1])
        addresses = _address(ins.operands[0], warp, list(range(32)), "shared")
        if any(a is None or a[0] != "shared" for a in addresses[:8 * count]) or len(names) != count:
            self._note(self.unfollowed, ins.line, f"{ins.opcode}: a row address is not known")
            return
        rows = [a[1] for a in addresses[:8 * count]]
        values = [warp.read(n, 32) for n in names]
        cells = []
        for lane, register, half, address in fragment.stmatrix_cells(count, ins.has("trans"), rows):
            parts = tags.bytes_of(_lane_value(values[register], lane), 32)
            for b in range(2):
                cells.append((address + b, _absolute(parts[2 * half + b], warp.index, lane)))
        self._record(cells, self.shared, warp, order, ins.line)

    def _record(self, cells: list, into: list, warp, order: int, line: int) -> None:
        if not cells:
            return
        self.cells += len(cells)
        if self.cells > MAX_CELLS:
            self._note(self.unfollowed, line, f"more than {MAX_CELLS} stored bytes recorded")
            return
        into.append(Write(warp.index, self.tick, order, line, cells))

    def execute(self, statement: int, ins, guard, warp, order: int) -> Optional[dict]:
        if ins.base == "ld" and not tags.reads_tagged(ins, warp.env):
            return self._load_slot(ins, guard, warp)
        if ins.opcode.startswith("wgmma.mma_async"):
            if len(ins.operands) > 1 and ins.operands[1].strip().startswith("{"):
                self.register_a.append(_register_a(statement, ins, warp, order))
            found = self._accumulators.get(statement)
            if found is None:
                found = self._accumulators[statement] = tags.wgmma_accumulator(ins, statement)
                per = tags.wgmma_elements_per_register(ins.opcode)
                n = next((int(m.split("n")[1].split("k")[0]) for m in ins.modifiers if m.startswith("m64n")), None)
                self.elements[statement] = (per * len(found), n)
                self.lines[statement] = ins.line
            if guard is None or guard == 1:
                return found
            return {name: Unknown(f"line {ins.line}: a wgmma under a predicate") for name in found}
        result = tags.execute(ins, warp.read, warp.width_of, guard)
        for value in result.values():
            if isinstance(value, Unknown) and not tags.is_tagged(value):
                self._note(self.lost, ins.line, value.reason)
                break
        return result

    def _load_slot(self, ins, guard, warp) -> Optional[dict]:
        """ld.shared.b32 of the slot a tcgen05.alloc wrote: the address it holds; anything else, None."""
        if guard is not None and guard != 1 or len(ins.operands) != 2 or ins.width != 32 \
                or ins.operands[0].strip().startswith("{"):
            return None
        lanes = [lane for lane in range(32) if warp.active[lane]]
        addresses = {a for a in _address(ins.operands[1], warp, lanes, "shared") if a is not None}
        if len(addresses) != 1 or len(lanes) == 0:
            return None
        space, address = addresses.pop()
        if space != "shared" or address not in self.tmem_slots:
            return None
        return {ins.operands[0].strip(): self.tmem_slots[address]}


@dataclass
class RegisterA:
    """A wgmma whose A fragment is in registers (attention's P . V): which accumulator's elements it holds."""
    statement: int
    warp: int
    visit: int                     # the wgmma's visit (the run's visits before it executes, less one)
    line: int
    origin: Optional[int] = None   # the wgmma whose accumulator rows A's rows are
    problem: Optional[str] = None  # why not (unknown), or None
    mismatch: Optional[dict] = None   # a lane's A row that holds another row's element (refuted)
    pairs: tuple = ()              # (A's k, the accumulator's column it holds), each distinct one


def _register_a(statement: int, ins, warp, order: int) -> RegisterA:
    """The rows of a register A fragment (PTX ISA 9.0 9.7.15.5.1, A of .m64nNk16 in registers: element i of
    lane t at row 16w + t/4 + 8((i/2) mod 2), as the accumulator's): each must hold an element of one earlier
    wgmma's accumulator on the same row (the softmax's P from S = Q . K^T)."""
    found = RegisterA(statement, warp.index, order - 1, ins.line)
    a_type = next((m for m in ins.modifiers[ins.modifiers.index(next(m for m in ins.modifiers
                                                                      if m.startswith("m64n"))) + 2:]), None)
    if a_type not in ("f16", "bf16"):
        found.problem = f"line {ins.line}: A in registers of {a_type} (only 16-bit A fragments are followed)"
        return found
    values = [warp.read(name, 32) for name in registers_in(ins.operands[1])]
    origins, pairs = set(), set()
    for lane in range(32):
        if not warp.active[lane]:
            continue
        for i in range(2 * len(values)):
            parts = tags.bytes_of(_lane_value(values[i // 2], lane), 32)[2 * (i % 2):2 * (i % 2) + 2]
            element = tags.whole_element(parts)
            if element is None:
                found.problem = f"line {ins.line}: A's element {i} in lane {lane} is no accumulator element followed"
                return found
            origins.add(element[0])
            row, k = fragment.accumulator_position(warp.index % fragment.WARPS_PER_GROUP, lane, i)
            held, column = fragment.accumulator_position(warp.index % fragment.WARPS_PER_GROUP, lane, element[1])
            pairs.add((k, column))
            if held != row and found.mismatch is None:
                found.mismatch = {"what": f"A's row {row} (lane {lane}, element {i}) holds row {held} of the "
                                          f"accumulator it is computed from", "line": ins.line, "warp": warp.index,
                                  "lane": lane}
    if len(origins) != 1:
        found.problem = f"line {ins.line}: A's registers hold the elements of {len(origins)} accumulators"
        return found
    found.origin = origins.pop()
    found.pairs = tuple(sorted(pairs))
    return found


def _rows_through_registers(trace: Trace, rows: dict, lands: Tally) -> None:
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


def _lane_value(value, lane: int):
    return value.values[lane] if isinstance(value, Lanes) else value


def _one_value(value, lanes: list):
    if isinstance(value, Lanes):
        seen = {value.values[lane] for lane in lanes}
        return seen.pop() if len(seen) == 1 else Unknown("the lanes that store hold different coordinates")
    return value


def _absolute(part, warp: int, lane: int):
    if isinstance(part, tags.Piece):
        return (part.origin, warp, lane, part.element, part.byte, part.width)
    return None


_ADDRESS = re.compile(r"^\[\s*([%\w$.]+)\s*(?:([+-])\s*(-?\w+))?\s*\]$")      # [reg], [reg+imm], [reg+-imm]


def _address(operand: str, warp, lanes: list, space: Optional[str] = None) -> list:
    """Per lane: ("shared" | "global", address) or None. space: the instruction's state space (None: a
    generic address, PTX ISA 9.0 6.4.1: a SharedGeneric one is shared, any other global)."""
    m = _ADDRESS.match(operand.strip())
    if m is None:
        return [None] * len(lanes)
    base_text, sign, offset_text = m.groups()
    offset = int(offset_text, 0) if offset_text else 0
    offset = -offset if sign == "-" else offset
    base = warp.read(base_text, 64)
    out = []
    for lane in lanes:
        value = _lane_value(base, lane)
        if isinstance(value, SharedGeneric):
            out.append(("shared", value.offset + offset))
        elif isinstance(value, int):
            out.append((space or "global", value + offset))
        else:
            out.append(None)
    return out


# --- the decision ---------------------------------------------------------------------------------------

_MISSING, _MIXED = "missing", "mixed"


class Memory:
    """What a TMA store reads: per shared address, the writes of the run and the epochs they were in."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.by_address: dict = {}
        for write in trace.shared:
            epoch = self.epoch(write.warp, write.tick)
            for address, piece in write.cells:
                self.by_address.setdefault(address, []).append((epoch, write.tick, write.warp, piece, write))

    def epoch(self, warp: int, tick: int) -> int:
        return bisect.bisect_left(self.trace.barriers.get(warp, []), tick)

    def read(self, address: int, warp: int, tick: int):
        """(piece, write) of the write a store by `warp` at `tick` sees, or (_MISSING | _MIXED, None)."""
        epoch = self.epoch(warp, tick)
        seen = [w for w in self.by_address.get(address, ())
                if (w[2] == warp and w[1] < tick) or (w[2] != warp and w[0] < epoch)]
        if not seen:
            return _MISSING, None
        top = max(w[0] for w in seen)
        latest = [w for w in seen if w[0] == top]
        own = [w for w in latest if w[2] == warp]
        if own:
            best = max(own, key=lambda w: w[1])
            return best[3], best[4]
        if len({w[2] for w in latest}) > 1 and len({w[3] for w in latest}) > 1:
            return _MIXED, None
        best = max(latest, key=lambda w: w[1])
        return best[3], best[4]


@dataclass
class Landing:
    """One accumulator element stored to global memory."""
    key: tuple                     # (wgmma statement, warp, lane, element, the MMA visit)
    place: tuple                   # the global coordinates (TMA), or (address,) (st.global)
    source: tuple                  # A's row coordinates + B's row coordinates
    where: dict


def decide(trace: Optional[Trace], run, statements: list, params: list, maps: dict, rows: dict) -> list:
    """[audit.epilogue.lands, audit.epilogue.fenced]. rows: (warp, wgmma statement) -> [(visit index, {role:
    global rows})] from the MMA checks (properties.decide_reads)."""
    lands, fenced = Tally(LANDS), Tally(FENCED)
    if trace is None:
        return [t.result("the run did not follow the accumulators") for t in (lands, fenced)]
    for line, why in trace.unfollowed[:1]:
        lands.unknown(f"line {line}: {why}")
    stopped = next((w for w in run.warps if w.stopped), None)
    if stopped is not None:
        lands.unknown(f"warp {stopped.warp} stopped ({stopped.stopped}): its epilogue was not followed")
        fenced.unknown(f"warp {stopped.warp} stopped ({stopped.stopped})")
    other = next((s.instruction for s in statements if s.instruction is not None and
                  _OTHER_GLOBAL_WRITERS.match(s.instruction.opcode)), None)
    _rows_through_registers(trace, rows, lands)
    memory = Memory(trace)
    tensor, plain = [], []
    sources: dict = {}
    for store in trace.tensor_stores:
        _tensor_landings(store, trace, memory, statements, params, maps, rows, sources, lands, fenced, tensor)
    for write in trace.global_:
        _global_landings(write, rows, lands, plain, trace.lines)
    _check_places(tensor, lands)
    _check_addresses(plain, lands)
    _check_complete(tensor + plain, trace, lands, other)
    nothing = "no accumulator element reached a store the check follows (st.shared / stmatrix and a TMA " \
              "store, or st.global)"
    if not any(watched(s.instruction) and operations.TMA_OPCODE.match(s.instruction.opcode)
               for s in statements if s.instruction is not None) and fenced.reason is None:
        return [lands.result(nothing), Property(FENCED.id, "proved", FENCED.statement, FENCED.source,
                                                reason=f"{VACUOUS} TMA store: nothing to fence")]
    return [lands.result(nothing), fenced.result("no TMA store of the run read bytes the warps wrote")]


def _tensor_landings(store: TensorStore, trace: Trace, memory: Memory, statements, params, maps: dict,
                     rows: dict, sources: dict, lands: Tally, fenced: Tally, out: list) -> None:
    form = store.form
    if form.tensormap not in sources:
        sources[form.tensormap] = operations.tensormap_source(statements, params, form.tensormap)
    source, why = sources[form.tensormap]
    if source is None:
        lands.unknown(f"line {store.line}: {why}")
        return
    mapped = maps.get(source)
    if mapped is None:
        lands.unknown(f"line {store.line}: no tensor map given for parameter {source.param}"
                      + (f"+{source.offset}" if source.offset else ""))
        return
    if not isinstance(store.smem, int) or any(not isinstance(c, int) for c in store.coordinates):
        lands.unknown(f"line {store.line}: the TMA store's source address or coordinates are not known")
        return
    if mapped.encode != "tiled" or mapped.dtype.bits % 8:
        lands.unknown(f"line {store.line}: the store's map is not a tiled map of whole-byte elements")
        return
    try:
        placed = compose.Placements().of(mapped, store.smem)
    except SpecError as error:
        lands.unknown(f"line {store.line}: the box cannot be placed ({error})")
        return
    size = mapped.dtype.bits // 8
    coordinates = [c - (1 << 32) if c >> 31 else c for c in store.coordinates]
    unfenced = None
    for address, index in placed.items():
        place = tuple(c + (i if d == 0 else i * mapped.element_strides[d]) for d, (c, i) in
                      enumerate(zip(coordinates, index)))
        if any(not 0 <= p < extent for p, extent in zip(place, mapped.global_dim)):
            continue                                   # (out of bounds: the store skips it, PTX ISA 5.5.3)
        read = [memory.read(address + b, store.warp, store.tick) for b in range(size)]
        where = {"store_line": store.line, "warp": store.warp, "global": list(place), "shared": hex(address)}
        pieces = [r[0] for r in read]
        if _MISSING in pieces or _MIXED in pieces or any(p is None for p in pieces):
            what = "no store of the run wrote it" if _MISSING in pieces else \
                "two warps wrote it between the same barriers" if _MIXED in pieces else \
                "it holds a value that is no accumulator element the check follows"
            lands.unknown(f"line {store.line}: the TMA store reads shared {address:#x} for global {list(place)}, "
                          f"and {what}")
            continue
        for r in read:
            if unfenced is None and not _fenced(trace, r[1], store):
                unfenced = (r[1], address)
        landing = _landing(pieces, size, read[0][1], rows, lands, where, place, trace.lines)
        if landing is not None:
            out.append(landing)
    if unfenced is None:
        fenced.proved()
    else:
        write, address = unfenced
        fenced.refuted({"what": f"shared {address:#x}, written at line {write.line} by warp {write.warp}, is read "
                                f"by the TMA store at line {store.line} with no fence.proxy.async between",
                        "store_line": store.line, "write_line": write.line, "warp": write.warp,
                        "shared": hex(address)})


def _fenced(trace: Trace, write: Write, store: TensorStore) -> bool:
    """A fence.proxy.async on the causality path from the write to the store: by the writer after the write
    and before the barrier that orders it before the store, or by the storing warp after that barrier and
    before the store (the storing warp's own write: any fence between the two)."""
    store_fences = trace.fences.get(store.warp, [])
    if write.warp == store.warp:
        return _fence_between(store_fences, write.tick, store.tick)
    writer_barriers = trace.barriers.get(write.warp, [])
    after = bisect.bisect_right(writer_barriers, write.tick)
    limit = writer_barriers[after] if after < len(writer_barriers) else 1 << 62
    if _fence_between(trace.fences.get(write.warp, []), write.tick, limit):
        return True
    store_barriers = trace.barriers.get(store.warp, [])     # the storing warp's barrier number `after` is the one
    if after >= len(store_barriers):                        # that orders the write before it (epochs, Memory)
        return False
    return _fence_between(store_fences, store_barriers[after], store.tick)


def _fence_between(fences: list, start: int, end: int) -> bool:
    k = bisect.bisect_right(fences, start)
    return k < len(fences) and fences[k] < end


def _landing(pieces: list, size: int, write: Write, rows: dict, lands: Tally, where: dict, place: tuple,
             lines: dict):
    """The Landing of one stored element, or None (lands says why not)."""
    first = pieces[0]
    origin, warp, lane, element = first[:4]
    if any(p[:4] != first[:4] or p[4] != b or p[5] != size for b, p in enumerate(pieces)):
        lands.refuted({"what": f"global {list(place)} gets bytes of different accumulator elements, or of one "
                               f"element at another width ({size}-byte elements stored)", **where,
                       "bytes": [list(p) for p in pieces]})
        return None
    visits = rows.get((warp, origin), [])
    k = bisect.bisect_left(visits, (write.order,)) - 1
    if k < 0:
        lands.unknown(f"line {where.get('store_line', write.line)}: the wgmma that wrote the element was not "
                      "traced before the store")
        return None
    index, traced = visits[k]
    row, column = fragment.accumulator_position(warp % fragment.WARPS_PER_GROUP, lane, element)
    a, b = traced.get("a"), traced.get("b")
    if a is None or b is None or row >= len(a) or column >= len(b):
        lands.unknown(f"line {where.get('store_line', write.line)}: the rows of A and B that the wgmma at line "
                      f"{lines.get(origin)} (warp {warp}) read are not traced (an operand in registers, or not "
                      "read from awaited TMA boxes: see audit.reads.written)")
        return None
    where = {**where, "element": {"row": row, "column": column, "lane": lane, "warp": warp},
             "mma_line": lines.get(origin), "a_row": list(a[row]), "b_row": list(b[column])}
    return Landing((origin, warp, lane, element, index), place, tuple(a[row]) + tuple(b[column]), where)


def _global_landings(write: Write, rows: dict, lands: Tally, out: list, lines: dict) -> None:
    """st.global of accumulator elements: the element's bytes must sit in order at consecutive addresses."""
    by_element: dict = {}
    for address, piece in write.cells:
        if piece is not None:
            by_element.setdefault(piece[:4] + (piece[5],), {})[piece[4]] = address
    for (origin, warp, lane, element, size), found in by_element.items():
        where = {"store_line": write.line, "warp": warp}
        first = found.get(0)
        if first is None or any(found.get(b) != first + b for b in range(size)):
            lands.unknown(f"line {write.line}: accumulator element {element} of lane {lane} is stored in part, or "
                          "its bytes out of order")
            continue
        pieces = [(origin, warp, lane, element, b, size) for b in range(size)]
        landing = _landing(pieces, size, write, rows, lands, {**where, "global_address": hex(first)}, (first,), lines)
        if landing is not None:
            out.append(landing)


def _check_places(landings: list, lands: Tally) -> None:
    """One assignment of A's and B's row coordinates to the global dimensions holds for every landing,
    and no two elements land on one place."""
    if not landings:
        return
    rank = len(landings[0].place)
    width = len(landings[0].source)
    assignment = []
    for d in range(rank):
        matching = [s for s in range(width) if all(x.place[d] == x.source[s] for x in landings)]
        if not matching:
            best = max(range(width), key=lambda s: sum(x.place[d] == x.source[s] for x in landings))
            bad = next(x for x in landings if x.place[d] != x.source[best])
            lands.refuted({"what": f"global {list(bad.place)} gets the element of A row {bad.where['a_row']}, "
                                   f"B row {bad.where['b_row']}: its coordinate {d} is {bad.place[d]}, not "
                                   f"{bad.source[best]} as the other elements' are", **bad.where})
            return
        unused = [m for m in matching if m not in assignment]      # (equal coordinates in this run: e.g. head
        assignment.append((unused or matching)[0])                 # and batch both 0 in CTA 0)
    _check_distinct(landings, lands)
    lands.checked += len(landings)
    lands.details.append("TMA-stored coordinates = (" + ", ".join(_source_name(s, landings[0]) for s in assignment)
                         + ")")


def _check_distinct(landings: list, lands: Tally) -> None:
    at: dict = {}
    for x in landings:
        other = at.setdefault(x.place, x)
        if other.key[:4] != x.key[:4] and other.source != x.source:
            lands.refuted({"what": f"two accumulator elements (A row {other.where['a_row']}, B row "
                                   f"{other.where['b_row']} and A row {x.where['a_row']}, B row {x.where['b_row']}) "
                                   f"land on global {list(x.place)}", **x.where})
            return


def _check_addresses(landings: list, lands: Tally) -> None:
    """st.global: address = base + sum of stride_s * source_s, one base and strides for every landing."""
    if not landings:
        return
    base = landings[0]
    width = len(base.source)
    strides = []
    for s in range(width):
        pair = next((x for x in landings if x.source[s] != base.source[s] and
                     all(x.source[t] == base.source[t] for t in range(width) if t != s)), None)
        if pair is None:
            if any(x.source[s] != base.source[s] for x in landings):
                lands.unknown("st.global: the stride of a coordinate cannot be read off the stores")
                return
            strides.append(0)
            continue
        delta, step = pair.place[0] - base.place[0], pair.source[s] - base.source[s]
        if delta % step:
            lands.refuted({"what": "st.global addresses that no whole stride explains", **pair.where})
            return
        strides.append(delta // step)
    for x in landings:
        expected = base.place[0] + sum(st * (x.source[s] - base.source[s]) for s, st in enumerate(strides))
        if x.place[0] != expected:
            lands.refuted({"what": f"the element of A row {x.where['a_row']}, B row {x.where['b_row']} is stored at "
                                   f"{x.place[0]:#x}, not {expected:#x} where the other elements' addresses place it",
                           **x.where})
            return
    _check_distinct(landings, lands)
    lands.checked += len(landings)
    terms = " + ".join(f"{stride}*{_source_name(s, base)}" for s, stride in enumerate(strides) if stride)
    lands.details.append(f"st.global address = base + {terms}")


def _source_name(index: int, landing) -> str:
    """A's row coordinates first (m, then any batch), then B's (n, ...)."""
    rank_a = len(landing.where["a_row"])
    return f"m[{index}]" if index < rank_a else f"n[{index - rank_a}]"


def _check_complete(landings: list, trace: Trace, lands: Tally, other) -> None:
    """Every element of each accumulator (wgmma visit, warp) that reaches global memory reaches it."""
    stored: dict = {}
    for x in landings:
        origin, warp, lane, element, index = x.key
        stored.setdefault((origin, warp, index), set()).add((lane, element))
    for (origin, warp, index), found in stored.items():
        count, _ = trace.elements.get(origin, (0, None))
        for lane in range(32):
            for element in range(count):
                if (lane, element) not in found:
                    row, column = fragment.accumulator_position(warp % fragment.WARPS_PER_GROUP, lane, element)
                    why = trace.lost[0] if trace.lost else None
                    if why is not None or other is not None:
                        lands.unknown(f"accumulator D[{row}][{column}] of warp {warp} (the wgmma at line "
                                      f"{trace.lines.get(origin)}) reaches no store the check follows"
                                      + (f" (line {why[0]}: {why[1]})" if why else f" ({other.opcode} at line "
                                                                                   f"{other.line} is not followed)"))
                    else:
                        lands.refuted({"what": f"accumulator D[{row}][{column}] of warp {warp} is never stored",
                                       "warp": warp, "element": {"row": row, "column": column, "lane": lane},
                                       "mma_line": trace.lines.get(origin)})
                    return
