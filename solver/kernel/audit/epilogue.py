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
from dataclasses import dataclass
from typing import Optional

from spec.mma import fragment
from spec.rule import SpecError
from spec.tmem import accumulator, ld_st
from spec.tmem import address as tmem_address

from solver.kernel import mma
from solver.kernel.audit import commits, compose, operations, pairs, phases
from solver.kernel.audit.report import Property
from solver.kernel.audit.tally import VACUOUS, Definition, Tally
from solver.kernel.audit.trace import TensorStore, Trace, Write, watched

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
DEFINITIONS = (LANDS, FENCED)
_MISSING, _MIXED = "missing", "mixed"

_OTHER_GLOBAL_WRITERS = re.compile(r"^(red|atom)\.global|^st\.async|^cp\.async\.bulk\.global|^red\.async")


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
    accumulator: tuple             # which accumulator (Sources.resolve)
    element: tuple                 # which element of it
    place: tuple                   # the global coordinates (TMA), or (address,) (st.global)
    source: tuple                  # A's row coordinates + B's row coordinates
    where: dict


@dataclass
class Writer:
    """The tcgen05.mmas of one warp on one accumulator with the same traced rows: the first and the latest."""
    earliest: int                  # tick
    latest: int                    # tick
    warp: int
    line: int
    earliest_clock: Optional[tuple]
    latest_clock: Optional[tuple]
    index: int                     # the latest's, in Trace.tmem_writes
    traced: dict                   # its traced rows of A and B
    group: int                     # its accumulator group (Sources._groups)


class Sources:
    """Which accumulator element a stored piece is, and the global rows of A and B behind it:
    * a wgmma's (Piece origin: its statement): element e of lane t in warp w is D[row][column] of its
      64 x N tile (spec/mma/fragment.py), the wgmma's last visit by w before the store;
    * a tcgen05.mma's (Piece origin ("tmem", k): the k-th tcgen05.ld, element j its register j): the cell
      register j of thread t reads (spec.tmem.ld_st.fragment_map), in the accumulator of the tcgen05.mmas
      that wrote that cell (spec.tmem.accumulator.d_locations, the issuing CTA's rows; _tmem says which)."""

    def __init__(self, trace: Trace, rows: dict, run, sites: dict):
        self.trace, self.rows, self.run, self.sites = trace, rows, run, sites
        self.layouts: dict = {}          # tmem write index -> ({(lane, column): (m, n)}, M, N) or a reason
        self.shapes: dict = {}           # (M, N, cta_group, ws, sparse) -> that layout, computed once
        self.grouped = None              # _groups()
        self.identities: dict = {}       # (group, m, n) -> one global row of A and of B there (_one_identity)
        self.merged: dict = {}           # groups -> their writers by tick (_merged)
        self.fragments: dict = {}        # (shape, num) -> spec.tmem.ld_st.fragment_map
        self.pairing = None              # commits.Pairing, made when MMAs of several tiles share a cell
        self.paired: dict = {}           # (warp, tick of a tcgen05.ld, writers' signature, stores) -> _paired
        self.stores = None               # ({cell: [TmemStore]}, [TmemStore over columns or not known])
        self.stores_after: dict = {}     # (warp, tick of a tcgen05.ld, id(store)) -> Pairing.after
        self.placed: dict = {}           # (a tcgen05.ld's line, warp, address, shape, num; lane, register) -> _place
        self.cell_stores: dict = {}      # cell -> _stores_on

    def resolve(self, origin, warp: int, lane: int, element: int, order: int):
        """(accumulator, element, row, column, traced rows, the MMA's line), or the reason it is not known."""
        if isinstance(origin, tuple):
            return self._tmem(origin[1], lane, element)
        visits = self.rows.get((warp, origin), [])
        k = bisect.bisect_left(visits, (order,)) - 1
        if k < 0:
            return "the wgmma that wrote the element was not traced before the store"
        index, traced = visits[k]
        row, column = fragment.accumulator_position(warp % fragment.WARPS_PER_GROUP, lane, element)
        return ("wgmma", origin, warp, index), (lane, element), row, column, traced, self.trace.lines.get(origin)

    def _tmem(self, k: int, lane: int, register: int):
        """The element a tcgen05.ld register holds. When every tcgen05.mma of the run on the cell holds the
        same global rows of A and B there, theirs (the latest before the load). Otherwise the latest whose
        completion the load waited for, when every other one is after the load (commits.py)."""
        load = self.trace.tmem_loads[k]
        key = (load.line, load.warp, load.address, load.shape, load.num, lane, register)
        if key not in self.placed:       # (the same for every run of one load: a loop's loads share it)
            self.placed[key] = self._place(load, lane, register)
        placed = self.placed[key]
        if isinstance(placed, str):
            return placed
        at, found, signature = placed
        writers = self._merged(signature)
        stores = tuple(store for store in self._stores_on(at) if not self._store_after(load, store))
        if not stores and len(found) == 1 and self._one_identity(found[0][0], *found[0][1]):
            ticks = [w.latest for w in writers]
            j = bisect.bisect_left(ticks, load.tick) - 1
            return self._resolution(writers[max(j, 0)], found[0][1])
        key = (load.warp, load.tick, signature, tuple(id(store) for store in stores))
        if key not in self.paired:        # (the same MMAs and stores on every cell of one accumulator)
            self.paired[key] = self._paired(load, writers, stores)
        chosen = self.paired[key]
        if isinstance(chosen, str):
            return f"the tcgen05.ld at line {load.line} reads lane {at[0]}, column {at[1]}, which " \
                   f"{'MMAs of several output tiles' if not stores else 'tcgen05.st / tcgen05.cp and MMAs'} " \
                   f"wrote: {chosen}"
        place = next(p for g, p in found if g == writers[chosen].group)
        return self._resolution(writers[chosen], place)

    def _place(self, load, lane: int, register: int):
        """(the cell register `register` of thread `lane` reads, [(accumulator group, (m, n))] of the
        tcgen05.mma layouts that cover it, those groups), or the reason there are none."""
        form = (load.shape, load.num)
        if form not in self.fragments:
            self.fragments[form] = ld_st.fragment_map(*form)
        cell = self.fragments[form][lane][2 * register]
        at = ((load.address >> 16) + cell[0], (load.address & 0xFFFF) + cell[1])
        if at[0] not in tmem_address.lane_quarter(load.warp):
            return f"the tcgen05.ld at line {load.line} (warp {load.warp}) names lane {at[0]}, outside its lane " \
                   "quarter (audit.tmem.access): what it reads is not the manual's to say"
        groups = self._groups()
        if isinstance(groups, str):
            return groups
        found = [(g, place) for g, (address, inverse, writers) in enumerate(groups)
                 for place in [inverse.get((at[0] - (address >> 16), at[1] - (address & 0xFFFF)))] if place is not None]
        if not found:
            return f"the tcgen05.ld at line {load.line} reads lane {at[0]}, column {at[1]}, which no tcgen05.mma " \
                   "of the run wrote"
        return at, found, tuple(g for g, _ in found)

    def _store_after(self, load, store) -> bool:
        key = (load.warp, load.tick, id(store))
        if key not in self.stores_after:
            self.stores_after[key] = self._pairing().after(load, store.warp, store.tick, store.clock)
        return self.stores_after[key]

    def _pairing(self) -> commits.Pairing:
        if self.pairing is None:
            self.pairing = commits.Pairing(self.trace.mbarriers, self.run)
        return self.pairing

    def _stores_on(self, at: tuple) -> list:
        """The run's tcgen05.st and tcgen05.cp that may write cell `at` (trace.TmemStore)."""
        if self.stores is None:
            self.stores = ({}, [])
            for store in self.trace.tmem_stores:
                if isinstance(store.cells, frozenset):
                    for cell in store.cells:
                        self.stores[0].setdefault(cell, []).append(store)
                else:
                    self.stores[1].append(store)
        if at not in self.cell_stores:
            exact, ranges = self.stores
            self.cell_stores[at] = exact.get(at, []) + [store for store in ranges if store.cells is None or
                                                        store.cells[1] <= at[1] < store.cells[2]]
        return self.cell_stores[at]

    @staticmethod
    def _resolution(writer: "Writer", place: tuple) -> tuple:
        return ("tmem", writer.index), place, place[0], place[1], writer.traced, writer.line

    def _one_identity(self, group: int, m: int, n: int) -> bool:
        """Whether every MMA of the group holds one global row of A at m and one of B at n (cached)."""
        key = (group, m, n)
        if key not in self.identities:
            a_rows, b_rows = set(), set()
            for writer in self._groups()[group][2]:
                a, b = writer.traced.get("a"), writer.traced.get("b")
                a_rows.add(tuple(a[m]) if a and m < len(a) else None)
                b_rows.add(tuple(b[n]) if b and n < len(b) else None)
            self.identities[key] = len(a_rows) == 1 and len(b_rows) == 1 and None not in a_rows | b_rows
        return self.identities[key]

    def _merged(self, signature: tuple) -> list:
        """The writers of the groups named, by their latest tick (cached)."""
        if signature not in self.merged:
            groups = self._groups()
            self.merged[signature] = sorted((w for g in signature for w in groups[g][2]), key=lambda w: w.latest)
        return self.merged[signature]

    def _paired(self, load, writers: list, stores: tuple = ()):
        """Of MMAs (of several output tiles, or beside tcgen05.st / tcgen05.cp) on one cell: the index of the
        latest complete before the load, every other MMA after the load, every store not after the load
        before that MMA (commits.py); else the reason not."""
        pairing = self._pairing()
        limits = pairing.complete_before(load)
        done = []
        for k, writer in enumerate(writers):
            if writer.latest < limits.get(writer.warp, -1):
                done.append(k)
            elif not pairing.after(load, writer.warp, writer.earliest, writer.earliest_clock):
                why = pairing.unpaired()
                return f"the MMA at line {writer.line} is neither complete before it (tcgen05.commit, a wait) " \
                       f"nor after it{f' ({why})' if why else ''}"
        if not done:
            return "none of the MMAs complete before it (tcgen05.commit, a wait)"
        if len({writers[k].warp for k in done}) > 1:
            return "MMAs of several warps complete before it"
        chosen = max(done, key=lambda k: writers[k].latest)
        for store in stores:
            if not pairing.after(store, writers[chosen].warp, writers[chosen].latest, writers[chosen].latest_clock):
                return f"the tcgen05.st or tcgen05.cp at line {store.line} is neither before the MMA it follows " \
                       f"(line {writers[chosen].line}) nor after the load"
        return chosen

    def _groups(self):
        """The run's tcgen05.mma writes grouped by accumulator address and layout: [(address, {(lane,
        column): (m, n)}, [Writer: one per issuing warp and distinct traced rows, by latest tick])],
        computed once; or the reason a write is not known."""
        if self.grouped is None:
            groups: dict = {}
            for w, write in enumerate(self.trace.tmem_writes):
                layout = self._layout(w)
                if isinstance(layout, str):
                    self.grouped = layout
                    return layout
                entries = self.rows.get((write.warp, write.statement), [])
                j = bisect.bisect_left(entries, (write.order,))
                traced = entries[j][1] if j < len(entries) and entries[j][0] == write.order else {}
                group = groups.setdefault((write.address, id(layout[0])), (write.address, layout[0], {}))
                rows_key = (write.warp,) + tuple(id(traced.get(role)) for role in ("a", "b"))
                first = group[2][rows_key][0] if rows_key in group[2] else write
                group[2][rows_key] = (first, w, write, traced)      # (the first and the latest)
            self.grouped = []
            for g, (address, inverse, kept) in enumerate(groups.values()):
                writers = sorted((Writer(first.tick, write.tick, write.warp, write.line, first.clock, write.clock, w,
                                         traced, g)
                                  for first, w, write, traced in kept.values()), key=lambda x: x.latest)
                self.grouped.append((address, inverse, writers))
        return self.grouped

    def _layout(self, w: int):
        found = self.layouts.get(w)
        if found is None:
            write = self.trace.tmem_writes[w]
            visit = self.run.visits[write.order] if write.order < len(self.run.visits) else None
            site = self.sites.get(write.line)
            if write.address is None or visit is None or site is None or visit.line != write.line:
                found = f"line {write.line}: the tcgen05.mma's accumulator address or shape is not known"
            else:
                now = mma.at_visit(site, visit.values)
                # (a block-scaled kind's instruction descriptor has no D type: .kind::mxf8f6f4, ::mxf4 and
                # ::mxf4nvf4 accumulate into .f32, PTX ISA 9.0 9.7.16.10.9)
                d_type = now.d_type or ("f32" if now.block_scale else None)
                if now.m is None or now.n is None or d_type not in ("f32", "s32"):
                    found = f"line {write.line}: the tcgen05.mma's shape or 32-bit accumulator type is not known"
                else:
                    shape = (now.m, now.n, now.cta_group, now.ws, now.sparse)
                    found = self.shapes.get(shape)
                    if found is None:
                        try:
                            places = accumulator.d_locations(*shape[:4], 0, now.sparse)
                        except SpecError as error:
                            found = f"line {write.line}: {error}"
                        else:
                            found = ({(lane, column): mn for mn, (cta, lane, column) in places.items() if cta == 0},
                                     now.m, now.n)
                        self.shapes[shape] = found
            self.layouts[w] = found
        return found

    def expected(self, accumulator_key: tuple) -> set:
        """Every element of the accumulator that the issuing CTA holds."""
        if accumulator_key[0] == "wgmma":
            count = self.trace.elements.get(accumulator_key[1], 0)
            return {(lane, e) for lane in range(32) for e in range(count)}
        layout = self._layout(accumulator_key[1])
        return set(layout[0].values()) if not isinstance(layout, str) else set()

    def position(self, accumulator_key: tuple, element: tuple) -> tuple:
        if accumulator_key[0] == "wgmma":
            return fragment.accumulator_position(accumulator_key[2] % fragment.WARPS_PER_GROUP, *element)
        return element


def decide(trace: Optional[Trace], run, statements: list, params: list, maps: dict, rows: dict,
           sites: Optional[dict] = None) -> list:
    """[audit.epilogue.lands, audit.epilogue.fenced]. rows: (warp, wgmma statement) -> [(visit index, {role:
    global rows})] from the MMA checks (properties.decide_reads)."""
    lands, fenced = Tally(LANDS), Tally(FENCED)
    if trace is None:
        return [t.result("the run did not follow the accumulators") for t in (lands, fenced)]
    for line, why in trace.unfollowed[:1]:
        lands.unknown(f"line {line}: {why}")
    cut = run.incomplete() or phases.undecided(run)    # (a warp stopped, lanes left unfollowed, visits cut,
                                                        # an event on an undecided path)
    if cut is not None:
        lands.unknown(f"{cut}: the epilogue was not followed whole")
        fenced.unknown(cut)
    other = next((s.instruction for s in statements if s.instruction is not None and
                  _OTHER_GLOBAL_WRITERS.match(s.instruction.opcode)), None)
    pairs.rows_through_registers(trace, rows, lands)
    memory = Memory(trace)
    tensor, plain = [], []
    params_of: dict = {}
    sources = Sources(trace, rows, run, sites or {})
    for store in trace.tensor_stores:
        _tensor_landings(store, trace, memory, statements, params, maps, sources, params_of, lands, fenced, tensor)
    for write in trace.global_:
        _global_landings(write, sources, lands, plain)
    _check_places(tensor, lands)
    _check_addresses(plain, lands)
    _check_complete(tensor + plain, trace, sources, lands, other)
    nothing = "no accumulator element reached a store the check follows (st.shared / stmatrix and a TMA " \
              "store, or st.global)"
    if not any(watched(s.instruction) and operations.TMA_OPCODE.match(s.instruction.opcode)
               for s in statements if s.instruction is not None) and fenced.reason is None:
        return [lands.result(nothing), Property(FENCED.id, "proved", FENCED.statement, FENCED.source,
                                                reason=f"{VACUOUS} TMA store: nothing to fence")]
    return [lands.result(nothing), fenced.result("no TMA store of the run read bytes the warps wrote")]


def _tensor_landings(store: TensorStore, trace: Trace, memory: Memory, statements, params, maps: dict,
                     sources: Sources, params_of: dict, lands: Tally, fenced: Tally, out: list) -> None:
    form = store.form
    if form.tensormap not in params_of:
        params_of[form.tensormap] = operations.tensormap_source(statements, params, form.tensormap)
    source, why = params_of[form.tensormap]
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
        landing = _landing(pieces, size, read[0][1], sources, lands, where, place)
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


def _landing(pieces: list, size: int, write: Write, sources: Sources, lands: Tally, where: dict, place: tuple):
    """The Landing of one stored element, or None (lands says why not)."""
    first = pieces[0]
    origin, warp, lane, element = first[:4]
    if any(p[:4] != first[:4] or p[4] != b or p[5] != size for b, p in enumerate(pieces)):
        lands.refuted({"what": f"global {list(place)} gets bytes of different accumulator elements, or of one "
                               f"element at another width ({size}-byte elements stored)", **where,
                       "bytes": [list(p) for p in pieces]})
        return None
    found = sources.resolve(origin, warp, lane, element, write.order)
    if isinstance(found, str):
        lands.unknown(f"line {where.get('store_line', write.line)}: {found}")
        return None
    key, member, row, column, traced, line = found
    a, b = traced.get("a"), traced.get("b")
    if a is None or b is None or row >= len(a) or column >= len(b):
        lands.unknown(f"line {where.get('store_line', write.line)}: the rows of A and B that the MMA at line "
                      f"{line} read are not traced (an operand in registers, or not read from awaited TMA "
                      "boxes: see audit.reads.written)")
        return None
    where = {**where, "element": {"row": row, "column": column, "lane": lane, "warp": warp},
             "mma_line": line, "a_row": list(a[row]), "b_row": list(b[column])}
    return Landing(key, member, place, tuple(a[row]) + tuple(b[column]), where)


def _global_landings(write: Write, sources: Sources, lands: Tally, out: list) -> None:
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
        landing = _landing(pieces, size, write, sources, lands, {**where, "global_address": hex(first)}, (first,))
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
        if (other.accumulator, other.element) != (x.accumulator, x.element) and other.source != x.source:
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


def _check_complete(landings: list, trace: Trace, sources: Sources, lands: Tally, other) -> None:
    """Every element of each accumulator (a wgmma visit's, per warp; a tcgen05.mma's) that reaches global
    memory reaches it."""
    stored: dict = {}
    for x in landings:
        stored.setdefault(x.accumulator, (set(), x.where.get("mma_line")))[0].add(x.element)
    for key, (found, line) in stored.items():
        missing = sorted(sources.expected(key) - found)
        if not missing:
            continue
        row, column = sources.position(key, missing[0])
        why = trace.lost[0] if trace.lost else None
        if lands.reason is not None:            # an element stored that could not be told: it may be this one
            return
        if why is not None or other is not None:
            lands.unknown(f"accumulator D[{row}][{column}] (the MMA at line {line}) reaches no store the check "
                          "follows" + (f" (line {why[0]}: {why[1]})" if why else f" ({other.opcode} at line "
                                                                                 f"{other.line} is not followed)"))
        else:
            lands.refuted({"what": f"accumulator D[{row}][{column}] of the MMA at line {line} is never stored",
                           "element": {"row": row, "column": column}, "mma_line": line})
        return
