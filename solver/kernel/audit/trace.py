"""What the audit's run records beside the executor's visits (executor.Tracer): the accumulator's values,
named byte by byte (solver/kernel/concrete/tags.py), from the wgmma that writes them to every store; the
stores themselves (st.shared, stmatrix, st / st.global, TMA stores), the CTA barriers and the proxy fences
each warp passes; the wgmmas whose A is in registers (attention's P . V); the address a tcgen05.alloc
writes to shared memory (audit.assume.tmem_base). The properties built on it: epilogue.py, pairs.py.
"""
from __future__ import annotations

import re
from dataclasses import MISSING, dataclass, field, fields
from typing import Optional

from spec.mma import fragment
from spec.tmem import ld_st

from solver.kernel.audit import commits, operations
from solver.kernel.concrete import executor, memory, tags
from solver.kernel.concrete.values import Lanes, Unknown, lane_of
from solver.kernel.frontend.instruction import registers_in

TMEM_BASE = 0                  # audit.assume.tmem_base: the first allocation's address (lane 0, column 0)
MAX_CELLS = 8_000_000          # shared and global bytes recorded per run (then: unknown)
MAX_NOTES = 64
BARRIER = re.compile(r"^(bar|barrier)(\.cta)?\.(sync|red)(\.|$)")


def watched(ins) -> bool:
    opcode = ins.opcode
    if opcode.startswith("st.") or opcode == "st":
        return not any(ins.has(space) for space in ("local", "param"))
    if operations.TMA_OPCODE.match(opcode):
        try:
            return operations.tma_form(ins).kind in ("store", "reduce")
        except operations.FormError:
            return False
    return opcode.startswith(("stmatrix", "fence.proxy.async")) or BARRIER.match(opcode) is not None


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
    elements: dict = field(default_factory=dict)        # wgmma statement -> its accumulator's elements per lane
    lines: dict = field(default_factory=dict)           # wgmma statement -> its line
    register_a: list = field(default_factory=list)      # RegisterA: a wgmma reading A from registers
    tmem_slots: dict = field(default_factory=dict)      # shared address -> [(warp, epoch, tick, value | None)]
    tmem_writes: list = field(default_factory=list)     # TmemWrite: a tcgen05.mma's accumulator, where it is
    tmem_loads: list = field(default_factory=list)      # TmemLoad: a tcgen05.ld, what its registers hold
    tmem_stores: list = field(default_factory=list)     # TmemStore: a tcgen05.st or tcgen05.cp, where it writes
    scale_copies: list = field(default_factory=list)    # ScaleCopy: a tcgen05.cp, its address and descriptor
    scale_mmas: list = field(default_factory=list)      # ScaleMma: a block-scaled tcgen05.mma's scale operands
    allocations: int = 0                                # tcgen05.alloc executed (all warps)
    mbarriers: list = field(default_factory=list)       # MbarrierEvent: init, arrive, commit, wait (commits.py)
    tick: int = 0
    cells: int = 0
    _accumulators: dict = field(default_factory=dict)
    _pairs: dict = field(default_factory=dict)

    def restart(self) -> None:
        """Everything but the statements back to its start (the executor runs again: memory.py)."""
        for f in fields(self):
            if f.name != "statements":
                setattr(self, f.name, f.default_factory() if f.default_factory is not MISSING else f.default)

    def watches(self, ins) -> bool:
        return watched(ins) or ins.opcode.startswith(("tcgen05.alloc", "tcgen05.mma", "tcgen05.commit", "tcgen05.st",
                                                      "tcgen05.cp")) or \
            (ins.opcode.startswith("mbarrier.") and commits.kind_of(ins) is not None)

    def takes(self, ins) -> bool:
        return ins.opcode.startswith(("wgmma.mma_async", "tcgen05.ld")) or \
            (bool(self.tmem_slots) and ins.base == "ld" and (ins.has("shared") or ins.has("shared::cta")))

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
            if ins.opcode.startswith(("tcgen05.st", "tcgen05.cp")):
                self.tmem_stores.append(TmemStore(self.tick, warp.index, ins.line, None, _clock(warp)))
                if ins.opcode.startswith("tcgen05.cp"):
                    self.scale_copies.append(ScaleCopy(self.tick, warp.index, ins.line, ins.opcode, None, None))
            elif ins.opcode.startswith("tcgen05.mma") and ins.has("block_scale"):
                self.scale_mmas.append(ScaleMma(self.tick, order, statement, warp.index, ins.line, ins.opcode,
                                                None, None, None, f"under an unknown predicate ({guard.reason})"))
            if ins.opcode.startswith("tcgen05.mma"):       # (it may write: its cells are not known)
                self.tmem_writes.append(TmemWrite(self.tick, order, statement, warp.index, ins.line, None,
                                                  _clock(warp), len(ins.operands) > 1 and
                                                  ins.operands[1].strip().startswith("[")))
            return
        lanes = [lane for lane in range(32) if warp.active[lane] and
                 (not isinstance(guard, Lanes) or guard.values[lane])]
        if ins.opcode.startswith("tcgen05.alloc"):
            self._allocate(ins, warp, lanes)
        elif ins.opcode.startswith("tcgen05.mma"):
            if lanes:
                address = _tmem_address(ins.operands[0], warp, lanes)
                a_operand = ins.operands[1] if len(ins.operands) > 1 else ""
                a_address = _tmem_address(a_operand, warp, lanes) if a_operand.strip().startswith("[") else None
                self.tmem_writes.append(TmemWrite(self.tick, order, statement, warp.index, ins.line, address,
                                                  _clock(warp), a_operand.strip().startswith("["), a_address))
                if ins.has("block_scale"):
                    self.scale_mmas.append(_scale_mma(self.tick, order, statement, ins, warp, lanes))
        elif ins.opcode.startswith(("tcgen05.st", "tcgen05.cp")):
            if lanes:
                cells, values = _tmem_cells(ins, warp, lanes), None
                if ins.opcode.startswith("tcgen05.st") and isinstance(cells, frozenset):
                    values = _tmem_values(ins, warp, lanes)
                self.tmem_stores.append(TmemStore(self.tick, warp.index, ins.line, cells, _clock(warp), values))
                if ins.opcode.startswith("tcgen05.cp"):
                    brackets = [o for o in ins.operands if o.strip().startswith("[")]
                    self.scale_copies.append(ScaleCopy(
                        self.tick, warp.index, ins.line, ins.opcode,
                        _tmem_address(brackets[0], warp, lanes) if brackets else None,
                        _uniform(ins.operands[1], warp, lanes, 64) if len(ins.operands) > 1 else None))
        elif ins.opcode.startswith(("tcgen05.commit", "mbarrier.")):
            if lanes:
                self.mbarriers.append(commits.observe(ins, warp, lanes, self.tick))
        elif BARRIER.match(ins.opcode):
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
        found = memory.lane_addresses(ins.operands[0], warp, lanes[:1], "shared")[0]
        self.allocations += 1
        if found is None:
            return
        self._slot_write(found[1], warp.index, TMEM_BASE if self.allocations == 1 else None)

    def _tensor_store(self, ins, warp, lanes: list) -> None:
        if not lanes:
            return
        form = operations.tma_form(ins)
        coordinates = tuple(_one_value(warp.read(c, 32), lanes) for c in form.coordinates)
        smem = memory.lane_addresses(form.smem, warp, lanes[:1], "shared")[0]
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
        addresses = memory.lane_addresses(ins.operands[0], warp, lanes, space)
        spaces = {"shared": [], "global": []}
        for lane, found in zip(lanes, addresses):
            if found is None:
                if space != "global":       # (it may have overwritten any shared byte, a tcgen05.alloc slot too)
                    for slot in list(self.tmem_slots):
                        self._slot_write(slot, warp.index, None)
                    self._note(self.unfollowed, ins.line, f"a store to shared memory at an address not known "
                                                          f"({ins.operands[0]})")
                elif any(tags.is_tagged(v) for v in values):
                    self._note(self.unfollowed, ins.line, f"an accumulator value stored at an address not known "
                                                          f"({ins.operands[0]})")
                return
            where, address = found
            for k, value in enumerate(values):
                parts = tags.bytes_of(lane_of(value, lane), width)
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
        addresses = memory.lane_addresses(ins.operands[0], warp, list(range(32)), "shared")
        if any(a is None or a[0] != "shared" for a in addresses[:8 * count]) or len(names) != count:
            for slot in list(self.tmem_slots):
                self._slot_write(slot, warp.index, None)
            self._note(self.unfollowed, ins.line, f"{ins.opcode}: a row address is not known")
            return
        rows = [a[1] for a in addresses[:8 * count]]
        values = [warp.read(n, 32) for n in names]
        cells = []
        for lane, register, half, address in fragment.stmatrix_cells(count, ins.has("trans"), rows):
            parts = tags.bytes_of(lane_of(values[register], lane), 32)
            for b in range(2):
                cells.append((address + b, _absolute(parts[2 * half + b], warp.index, lane)))
        self._record(cells, self.shared, warp, order, ins.line)

    def _record(self, cells: list, into: list, warp, order: int, line: int) -> None:
        if not cells:
            return
        if into is self.shared and self.tmem_slots:     # a slot tcgen05.alloc wrote, written over: not known
            written = {address for address, _ in cells}
            for slot in [s for s in self.tmem_slots if any(s + b in written for b in range(4))]:
                self._slot_write(slot, warp.index, None)
        self.cells += len(cells)
        if self.cells > MAX_CELLS:
            self._note(self.unfollowed, line, f"more than {MAX_CELLS} stored bytes recorded")
            return
        into.append(Write(warp.index, self.tick, order, line, cells))

    def execute(self, statement: int, ins, guard, warp, order: int) -> Optional[dict]:
        if ins.base == "ld" and not tags.reads_tagged(ins, warp.env):
            return self._load_slot(ins, guard, warp)
        if ins.opcode.startswith("tcgen05.ld"):
            return self._load_tmem(ins, guard, warp)
        if ins.opcode.startswith("wgmma.mma_async"):
            if len(ins.operands) > 1 and ins.operands[1].strip().startswith("{"):
                use = _register_a(statement, ins, warp, order)
                use.pairs = self._pairs.setdefault(use.pairs, use.pairs)     # (one tuple per distinct pairing)
                self.register_a.append(use)
            found = self._accumulators.get(statement)
            if found is None:
                found = self._accumulators[statement] = tags.wgmma_accumulator(ins, statement)
                self.elements[statement] = tags.wgmma_elements_per_register(ins.opcode) * len(found)
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

    def _load_tmem(self, ins, guard, warp) -> dict:
        """tcgen05.ld.SHAPE.NUM{.pack::16b}.b32 {r...}, [taddr] (PTX ISA 9.0 9.7.16.8.3): register j of thread
        t holds the cell spec.tmem.ld_st.fragment_map gives, relative to taddr. Each register is named
        (Piece origin ("tmem", the load), element j): what the cell holds is resolved once the run is done
        (epilogue.py: the tcgen05.mma that last wrote it)."""
        self.tick += 1
        names = registers_in(ins.operands[0])
        lanes = [lane for lane in range(32) if warp.active[lane]]
        shape, num = _shape_num(ins)
        address = _tmem_address(next((o for o in ins.operands if o.strip().startswith("[")), ""), warp, lanes)
        why = None
        if guard is not None and guard != 1:
            why = "a tcgen05.ld under a predicate"
        elif shape is None or num is None or shape == "16x32bx2" or ins.has("pack::16b") or ins.has("red"):
            why = f"{ins.opcode}: only the unpacked .32x32b, .16x64b, .16x128b and .16x256b loads are followed"
        elif address is None:
            why = "the tensor-memory address is not known"
        if why is not None:
            self._note(self.unfollowed, ins.line, why)
            return {name: Unknown(f"line {ins.line}: {why}") for name in names}
        k = len(self.tmem_loads)
        self.tmem_loads.append(TmemLoad(self.tick, warp.index, ins.line, address, shape, num, _clock(warp)))
        return {name: tags.Tagged("an accumulator value", tags.element_parts(("tmem", k), j, 4))
                for j, name in enumerate(names)}

    def _load_slot(self, ins, guard, warp) -> Optional[dict]:
        """ld.shared.b32 of the slot a tcgen05.alloc wrote: the address it holds; anything else, None."""
        if guard is not None and guard != 1 or len(ins.operands) != 2 or ins.width != 32 \
                or ins.operands[0].strip().startswith("{"):
            return None
        lanes = [lane for lane in range(32) if warp.active[lane]]
        addresses = {a for a in memory.lane_addresses(ins.operands[1], warp, lanes, "shared") if a is not None}
        if len(addresses) != 1 or len(lanes) == 0:
            return None
        space, address = addresses.pop()
        if space != "shared" or address not in self.tmem_slots:
            return None
        value = self._slot_read(address, warp.index)
        return None if value is None else {ins.operands[0].strip(): value}

    def _epoch(self, warp: int) -> int:
        return len(self.barriers.get(warp, []))

    def _slot_write(self, address: int, warp: int, value) -> None:
        self.tmem_slots.setdefault(address, []).append((warp, self._epoch(warp), self.tick, value))

    def _slot_read(self, address: int, warp: int):
        """What a read of the slot by `warp` now sees, as Memory (epilogue.py) orders shared writes: the
        warp's own earlier writes, and other warps' from before a CTA barrier both passed (epochs); None when
        that is not one known value (the executor runs warp after warp, so a later warp's overwrite of the
        slot comes before an earlier warp's read in the run, not in the kernel)."""
        epoch = self._epoch(warp)
        seen = [w for w in self.tmem_slots[address] if w[0] == warp or w[1] < epoch]
        if not seen:
            return None
        top = max(w[1] for w in seen)
        latest = [w for w in seen if w[1] == top]
        own = [w for w in latest if w[0] == warp]
        values = {max(own, key=lambda w: w[2])[3]} if own else {w[3] for w in latest}
        return values.pop() if len(values) == 1 else None


@dataclass
class TmemWrite:
    """A tcgen05.mma: it writes its accumulator at `address` (lane << 16 | column), or None when not known."""
    tick: int
    order: int                     # its visit's index among the run's visits
    statement: int
    warp: int
    line: int
    address: Optional[int]
    clock: Optional[tuple] = None  # the warp's CTA-barrier arrivals (memory.arrive)
    a_in_tmem: bool = False        # A read from tensor memory ([a-tmem]: attention's P . V on sm_100)
    a_address: Optional[int] = None   # that address (lane << 16 | column), None when not known


@dataclass
class TmemLoad:
    tick: int
    warp: int
    line: int
    address: int
    shape: str
    num: int
    clock: Optional[tuple] = None  # the warp's CTA-barrier arrivals (memory.arrive)


@dataclass
class TmemStore:
    """A tcgen05.st or tcgen05.cp: the cells it writes ((lane, column) set; for tcgen05.cp ("columns", first,
    end), every lane), or None where that is not known (the epilogue then reads no cell as known)."""
    tick: int
    warp: int
    line: int
    cells: object
    clock: Optional[tuple] = None
    values: Optional[dict] = None  # tcgen05.st: (lane, column) -> (thread, its 4 bytes: tags.bytes_of parts)


@dataclass
class ScaleCopy:
    """A tcgen05.cp (PTX ISA 9.0 9.7.16.9.1: [taddr], s-desc): its opcode (shape, multicast), the tensor-memory
    address and the shared-memory descriptor it copies with, None where not known (audit/scales.py)."""
    tick: int
    warp: int
    line: int
    opcode: str
    address: Optional[int]
    descriptor: Optional[int]


@dataclass
class ScaleMma:
    """A block-scaled tcgen05.mma (PTX ISA 9.0 9.7.16.10.9.1: [d], a, b, idesc, [scale-A-tmem],
    [scale-B-tmem], enable-input-d): its scale operands' addresses and its instruction descriptor, None where
    not known (`why`, when the whole instruction was not followed)."""
    tick: int
    order: int                     # its visit's index among the run's visits
    statement: int
    warp: int
    line: int
    opcode: str
    scale_a: Optional[int]
    scale_b: Optional[int]
    idesc: Optional[int]
    why: str = ""


def _uniform(operand: str, warp, lanes: list, width: int) -> Optional[int]:
    """A register's (or an immediate's) value, the same in every lane given, or None."""
    text = operand.strip()
    if re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)", text):
        return int(text, 0) & ((1 << width) - 1)
    value = warp.read(text, width)
    if isinstance(value, Unknown):
        return None
    found = {lane_of(value, t) for t in lanes}
    if len(found) != 1:
        return None
    only = found.pop()
    return only if isinstance(only, int) else None


def _scale_mma(tick: int, order: int, statement: int, ins, warp, lanes: list) -> ScaleMma:
    operands = ins.operands
    scale_a = _tmem_address(operands[4], warp, lanes) if len(operands) > 5 else None
    scale_b = _tmem_address(operands[5], warp, lanes) if len(operands) > 5 else None
    idesc = _uniform(operands[3], warp, lanes, 32) if len(operands) > 3 else None
    return ScaleMma(tick, order, statement, warp.index, ins.line, ins.opcode, scale_a, scale_b, idesc)


CP_COLUMNS = 8     # the widest tcgen05.cp, .128x256b: 256 bits of each lane, 8 columns (PTX ISA 9.0 9.7.16.9.1)


def _tmem_cells(ins, warp, lanes: list):
    """What a tcgen05.st (PTX ISA 9.0 9.7.16.8.4: thread t's register p goes to the cell
    spec.tmem.ld_st.fragment_map gives) or tcgen05.cp writes; None when not known."""
    brackets = [o for o in ins.operands if o.strip().startswith("[")]
    address = _tmem_address(brackets[0], warp, lanes) if brackets else None
    if address is None:
        return None
    lane, column = address >> 16, address & 0xFFFF
    if ins.opcode.startswith("tcgen05.cp"):
        return ("columns", column, column + CP_COLUMNS)
    shape, num = _shape_num(ins)
    if shape is None or num is None or shape == "16x32bx2":
        return None
    pieces = ld_st.fragment_map(shape, num, ins.has("unpack::16b"))
    return frozenset((lane + cell[0], column + cell[1]) for t in lanes for cell in pieces[t])


def _tmem_values(ins, warp, lanes: list) -> Optional[dict]:
    """What an unpacked tcgen05.st writes into each cell (PTX ISA 9.0 9.7.16.8.4: register p of thread t
    to the cell spec.tmem.ld_st.fragment_map gives): {(lane, column): (t, the register's 4 bytes as
    tags.bytes_of names them)}. None for .unpack::16b (two 16-bit halves into two cells: not followed)."""
    if ins.has("unpack::16b"):
        return None
    shape, num = _shape_num(ins)
    address = _tmem_address(next(o for o in ins.operands if o.strip().startswith("[")), warp, lanes)
    names = registers_in(ins.operands[1]) if len(ins.operands) > 1 else []
    pieces = ld_st.fragment_map(shape, num)
    registers = [warp.read(name, 32) for name in names]
    lane0, column0 = address >> 16, address & 0xFFFF
    out = {}
    for t in lanes:
        for j, register in enumerate(registers):
            if 2 * j < len(pieces[t]):
                cell = pieces[t][2 * j]
                out[(lane0 + cell[0], column0 + cell[1])] = (t, tags.bytes_of(lane_of(register, t), 32))
    return out


def _shape_num(ins) -> tuple:
    """(.shape, the count of .num) of a tcgen05.ld / st, each None when not written (PTX ISA 9.0 9.7.16.8.3)."""
    return (next((m for m in ins.modifiers if m in ld_st.SHAPES), None),
            next((int(m[1:]) for m in ins.modifiers if re.fullmatch(r"x\d+", m)), None))


def _clock(warp) -> Optional[tuple]:
    clock = warp.env.get(memory.CLOCK, ())
    return None if isinstance(clock, Unknown) else clock


def _tmem_address(operand: str, warp, lanes: list) -> Optional[int]:
    """The tensor-memory address [taddr] or [taddr + imm] names, the same in every lane given, or None."""
    found = {a for a in memory.lane_addresses(operand, warp, lanes, "tmem") if a is not None}
    if len(found) != 1:
        return None
    return found.pop()[1] & 0xFFFFFFFF


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
            parts = tags.bytes_of(lane_of(values[i // 2], lane), 32)[2 * (i % 2):2 * (i % 2) + 2]
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


def _one_value(value, lanes: list):
    if isinstance(value, Lanes):
        seen = {value.values[lane] for lane in lanes}
        return seen.pop() if len(seen) == 1 else Unknown("the lanes that store hold different coordinates")
    return value


def _absolute(part, warp: int, lane: int):
    if isinstance(part, tags.Piece):
        return (part.origin, warp, lane, part.element, part.byte, part.width)
    return None




# --- the decision ---------------------------------------------------------------------------------------
