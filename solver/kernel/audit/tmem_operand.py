"""A tcgen05.mma whose A is in tensor memory (sm_100 attention: P = softmax(S) stored with tcgen05.st,
then P . V): what each element of A is, followed from the cells the MMA reads back to the accumulator
element the softmax loaded.

A[m][k] of one MMA lies at the cell spec.tmem.accumulator.a_locations gives, relative to the MMA's
[a-tmem] address (PTX ISA 9.0 9.7.16.10.1, the A matrix in tensor memory). That cell holds what the
latest tcgen05.st before the MMA wrote there (trace.TmemStore.values: the register's bytes as the tags
name them, PTX ISA 9.0 9.7.16.8.4), when:
* the store is before the MMA: earlier in the MMA's warp, or before a CTA barrier or an mbarrier phase
  the MMA's warp waited for (commits.Pairing.after);
* every later store to the cell comes after the MMA completed (a tcgen05.commit whose phase the storing
  warp waited for: Pairing.complete_before), so the asynchronous MMA cannot read it;
* the cell's stores are all of one warp (their program order is the run's), no tcgen05.cp or store of
  cells not known writes it, and no MMA writes it (P aliasing S is not modelled).
Not checked here, and assumed: a tcgen05.st is complete before the arrival that orders it
(tcgen05.wait::st, PTX ISA 9.0 9.7.16.8.5) and the tcgen05 fences around the barrier are in place
(9.7.16.6.4); the audit trusts the compiler's fence discipline as it does for TMA's.

The stored half is an element of a tcgen05.ld register (tags: the softmax keeps each score's element
through exp, scale and cvt), which epilogue.Sources resolves to the element (m', c) of the accumulator S
that the load read. A's row m must be S's row m' (else refuted), and A's column k holds S's column c:
the pairs audit.attention.pairs checks against K's and V's rows. A's rows of global memory are then S's
rows of A (Q's), which the epilogue needs for the output accumulator.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Optional

from spec.rule import SpecError
from spec.tmem import accumulator

from solver.kernel import mma
from solver.kernel.audit.trace import TmemStore, Trace
from solver.kernel.concrete import tags


@dataclass
class TmemA:
    """One tcgen05.mma visit reading A from tensor memory, and what its A holds."""
    write: int                     # its index in Trace.tmem_writes
    statement: int
    warp: int
    order: int                     # its visit's index among the run's visits
    line: int
    origin: Optional[tuple] = None        # the accumulator A's elements are of (Sources.resolve's key)
    origin_line: Optional[int] = None     # the MMA that wrote that accumulator
    origin_rows: Optional[dict] = None    # that MMA's traced rows (properties.decide_reads)
    problem: Optional[str] = None         # why not followed (unknown), or None
    mismatch: Optional[dict] = None       # A's row m holding another row's element (refuted)
    pairs: tuple = ()                     # (A's k, the accumulator's column it holds), each distinct one


def follow(trace: Optional[Trace], rows: dict, run, sites: dict, sources) -> list:
    """[TmemA] for every tcgen05.mma visit of the run whose A is in tensor memory; fills the rows of A of
    each one followed (rows: properties.decide_reads's (warp, statement) -> [(visit index, {role: rows})]).
    sources: an epilogue.Sources over the same trace and rows (it resolves a tcgen05.ld's elements)."""
    if trace is None:
        return []
    reader = _Reader(trace, run, sites, sources)
    found = []
    for w, write in enumerate(trace.tmem_writes):
        if not write.a_in_tmem:
            continue
        use = TmemA(w, write.statement, write.warp, write.order, write.line)
        reader.read(use, write)
        found.append(use)
        if use.problem is None and use.mismatch is None and use.origin_rows and "a" in use.origin_rows:
            entries = rows.get((write.warp, write.statement), [])
            j = bisect.bisect_left(entries, (write.order,))
            if j < len(entries) and entries[j][0] == write.order and "a" not in entries[j][1]:
                entries[j][1]["a"] = use.origin_rows["a"]
    return found


class _Reader:
    def __init__(self, trace: Trace, run, sites: dict, sources):
        self.trace, self.run, self.sites, self.sources = trace, run, sites, sources
        self.chosen: dict = {}           # (id of the cell's stores, MMA write index) -> TmemStore | reason
        self.cell_stores: dict = {}      # cell -> (its stores by tick, the number of that list of stores)
        self.lists: dict = {}            # the ids of a list of stores -> its number
        self.places: dict = {}           # (M, kind, cta_group) -> [((lane, column), [(m, k, half)])] of this CTA
        self.mma_cells = None            # every cell a tcgen05.mma of the run writes (absolute)

    def read(self, use: TmemA, write) -> None:
        visit = self.run.visits[write.order] if write.order < len(self.run.visits) else None
        site = self.sites.get(write.line)
        if write.a_address is None or visit is None or site is None or visit.line != write.line:
            use.problem = f"line {write.line}: the tcgen05.mma's A address or shape is not known"
            return
        now = mma.at_visit(site, visit.values)
        if now.m is None or now.kind is None or now.sparse:
            use.problem = f"line {write.line}: the tcgen05.mma's M or kind is not known (or it is sparse)"
            return
        if accumulator.A_KINDS.get(now.kind) != 16:
            use.problem = f"line {write.line}: A in tensor memory of .kind::{now.kind} (only 16-bit A is followed)"
            return
        lane0, column0 = write.a_address >> 16, write.a_address & 0xFFFF
        origins, pairs = set(), set()
        places = self._places(now.m, now.kind, now.cta_group)
        if isinstance(places, str):
            use.problem = f"line {write.line}: {places}"
            return
        for (lane, column), elements in places:
            at = (lane0 + lane, column0 + column)
            store = self._store_read(at, write)
            if isinstance(store, str):
                use.problem = f"line {write.line}: A's cell lane {at[0]}, column {at[1]}: {store}"
                return
            thread, parts = store.values[at]
            for m, k, half in elements:
                if not self._element(use, write, store, at, thread, parts, m, k, half, origins, pairs):
                    return
        if len(origins) != 1:
            use.problem = f"line {write.line}: A's cells hold the elements of {len(origins)} accumulators"
            return
        use.origin = origins.pop()
        use.pairs = tuple(sorted(pairs))

    def _element(self, use: TmemA, write, store: TmemStore, at: tuple, thread: int, parts: tuple, m: int, k: int,
                 half: int, origins: set, pairs: set) -> bool:
        """A[m][k], in half `half` of the cell `at` the store wrote: the accumulator element it holds, its
        row checked against m; False when that is not known (use.problem says why)."""
        element = tags.whole_element(parts[2 * half:2 * half + 2])
        if element is None or not isinstance(element[0], tuple):
            use.problem = (f"line {write.line}: A's element ({m}, {k}) (the tcgen05.st at line {store.line}) is "
                           "no element of a tcgen05.ld the run followed")
            return False
        resolved = self.sources.resolve(element[0], store.warp, thread, element[1], store.tick)
        if isinstance(resolved, str):
            use.problem = f"line {write.line}: A's element ({m}, {k}) comes from a tcgen05.ld: {resolved}"
            return False
        key, _, row, column_of_s, traced, line = resolved
        origins.add(key)
        use.origin_rows, use.origin_line = traced, line
        pairs.add((k, column_of_s))
        if row != m and use.mismatch is None:
            use.mismatch = {"what": f"A's row {m} (tensor memory lane {at[0]}, column {at[1]}) holds row {row} "
                                    "of the accumulator it is computed from", "line": write.line,
                            "warp": write.warp, "store_line": store.line}
        return True

    def _places(self, M: int, kind: str, cta_group: int):
        """The cells of one MMA's A in this CTA (a_locations), each with the elements (m, k) it holds and
        their 16-bit half, or why there are none."""
        key = (M, kind, cta_group)
        if key not in self.places:
            cells: dict = {}
            try:
                for m in range(M):
                    for k in range(accumulator.a_k(kind)):
                        for cta, lane, column, first_bit, _ in accumulator.a_locations(m, k, M, kind, cta_group):
                            if cta == 0:
                                cells.setdefault((lane, column), []).append((m, k, first_bit // 16))
            except SpecError as error:
                self.places[key] = str(error)
            else:
                self.places[key] = sorted(cells.items())
        return self.places[key]

    def _store_read(self, at: tuple, write):
        """The tcgen05.st whose value the MMA reads at cell `at`, or why that is not known."""
        if at not in self.cell_stores:
            stores = sorted(self.sources._stores_on(at), key=lambda s: s.tick)
            ids = tuple(id(s) for s in stores)
            self.cell_stores[at] = (stores, self.lists.setdefault(ids, len(self.lists)))
        stores, which = self.cell_stores[at]
        key = (which, id(write))
        if key not in self.chosen:
            self.chosen[key] = self._choose(stores, write)
        chosen = self.chosen[key]
        if isinstance(chosen, TmemStore):
            cells = self._mma_cells()
            if isinstance(cells, str):
                return f"whether a tcgen05.mma writes it too is not known ({cells})"
            if at in cells:
                return "a tcgen05.mma writes it too (A aliasing an accumulator is not modelled)"
        return chosen

    def _choose(self, stores: list, write):
        """Of the cell's stores (by tick), the latest before the MMA, when the next one is after the MMA
        completed. Both orders are monotone along one warp's program order (a store before the MMA makes
        every earlier one before it; an MMA complete before a store is complete before every later one),
        so a binary search finds the latest and only the next one is checked."""
        if not stores:
            return "no tcgen05.st of the run wrote it"
        if any(s.values is None for s in stores):
            odd = next(s for s in stores if s.values is None)
            return f"the tcgen05.st or tcgen05.cp at line {odd.line} writes cells or values the run does not follow"
        if len({s.warp for s in stores}) > 1:
            return "tcgen05.st of several warps write it (their order is not modelled)"
        pairing = self.sources._pairing()
        low, high = 0, len(stores)                 # stores[:low] before the MMA, stores[high:] not
        while low < high:
            middle = (low + high) // 2
            if pairing.after(stores[middle], write.warp, write.tick, write.clock):
                low = middle + 1
            else:
                high = middle
        if low == 0:
            return "no tcgen05.st is ordered before the MMA (the same warp, a CTA barrier, or an mbarrier it waited for)"
        if low < len(stores) and pairing.complete_before(stores[low]).get(write.warp, -1) <= write.tick:
            why = pairing.unpaired()
            return (f"the tcgen05.st at line {stores[low].line} may overwrite it before the MMA completes (no "
                    f"tcgen05.commit of the MMA completes a phase its warp waited for first"
                    f"{f': {why}' if why else ''})")
        return stores[low - 1]

    def _mma_cells(self):
        """Every cell a tcgen05.mma of the run writes, or the reason an MMA's cells are not known."""
        if self.mma_cells is None:
            groups = self.sources._groups()
            self.mma_cells = groups if isinstance(groups, str) else \
                {((address >> 16) + lane, (address & 0xFFFF) + column)
                 for address, inverse, _ in groups for lane, column in inverse}
        return self.mma_cells
