"""audit.scales.path: the scale factors of every block-scaled tcgen05.mma of the run, followed from the MMA
back to the global scale tensor and compared with the interleaved (128 x 4) writer (issue 28).

For one MMA visit, each step by the executable specification:
1. the kind and scale vector (the opcode's qualifier, spec.scales.vectors.vector_of), the scale-factor ids
   (the instruction descriptor's bits [29,31) for A and [4,6) for B, spec.mma.instr_desc), M and N (the
   same descriptor), and the scale operands' addresses (lane 0: the 4 x 1 data path of .cta_group::1);
2. row r of A (n of B) and its scale s: the cell spec.scales.tmem.scale_cell gives;
3. the tcgen05.cp that last wrote the cell's column before the MMA. It must be a .32x128b.warpx4 at lane
   0, which writes all 128 lanes of its 4 columns (spec.tmem.cp.row_lanes: row r to lanes r + 32 q, so
   the four sub-partitions the MMA may read agree); by the MMA's warp, after that warp's last mbarrier
   wait before the MMA (so the phases the MMA waited for were complete when it copied). Its descriptor
   gives the shared-memory byte (spec.tmem.cp.row_source: row = lane mod 32, byte 4 (column - the copy's
   column) + the cell's byte);
4. that byte among the boxes of the phases the MMA's warp waited for (compose.visible_map) -> the scale
   map's global element -> its byte offset in the scale tensor (coordinate 0 in bytes of a UINT8 map,
   the others times the map's globalStrides);
5. the element's own row and K block: A's traced element (r, 0) gives the global row m and the first k,
   k0, along the one dimension of A's map that follows the rows and the one that follows k; the block is
   k0 / block + s; the scale matrix has A's extent along the rows as rows and K / block blocks (K: A's
   extent along k, in elements);
6. the scale the writer put there: spec.scales.layouts.offset("interleaved", m, block, rows, blocks).
A step that is not known makes the property unknown, with the reason; a byte at another offset refutes it,
with the element, the MMA and the copy. B likewise, with its column n.
"""
from __future__ import annotations

import bisect
import functools
from typing import Optional

from spec import fast
from spec.mma import descriptor as smem_descriptor
from spec.mma import instr_desc
from spec.rule import SpecError
from spec.scales import layouts, tmem as scale_tmem, vectors
from spec.tmem import cp

from solver.kernel.audit import compose
from solver.kernel.audit.trace import CP_COLUMNS
from solver.kernel.audit.report import Property
from solver.kernel.audit.tally import Definition, Tally

PATH = Definition(
    "audit.scales.path", "Every block-scaled tcgen05.mma applies to each row of A and column of B, for each K "
    "block, the scale the interleaved (128 x 4) writer put for it in the scale tensor its tcgen05.cp copies "
    "came from.",
    "PTX ISA 9.0 9.7.16.10.7 (block scaling: the scale-factor A / B layouts, the scale-factor ids), 9.7.16.9.1 "
    "(tcgen05.cp), 9.7.16.4.2 (Tables 43, 44); cuBLAS documentation, 1D Block Scaling Factors Layout")
COPY_SHAPE, COPY_MULTICAST = "32x128b", "warpx4"
COPY_COLUMNS = 4
MAX_SCALE_CHECKS = 512          # distinct MMA visits followed per kernel (then: unknown)


def _qualifier(opcode: str) -> str:
    parts = opcode.split(".")
    found = [p for p in parts if p.startswith(("scale_vec::", "block16", "block32"))]
    return "." + found[0] if found else ""


def _kind(opcode: str) -> Optional[str]:
    return next((p.split("::")[1] for p in opcode.split(".") if p.startswith("kind::")), None)


class _Copies:
    """The run's tcgen05.cp that may write each column (a copy spans at most trace.CP_COLUMNS from its
    address; one whose address is not known may write any), in tick order; the warps' mbarrier waits."""

    def __init__(self, trace):
        self.by_column: dict = {}
        self.anywhere: list = []
        for copy in sorted(trace.scale_copies, key=lambda c: c.tick):
            if copy.address is None:
                self.anywhere.append(copy)
            else:
                for column in range(copy.address & 0xFFFF, (copy.address & 0xFFFF) + CP_COLUMNS):
                    self.by_column.setdefault(column, []).append(copy)
        self.ticks = {column: [c.tick for c in found] for column, found in self.by_column.items()}
        self.anywhere_ticks = [c.tick for c in self.anywhere]
        # other writes into tensor memory, which may overwrite a scale between its copy and the MMA:
        # tcgen05.st (cells, or None when not known) and every MMA's accumulator (D from its address)
        self.stores = sorted((t for t in trace.tmem_stores if not isinstance(t.cells, tuple)), key=lambda t: t.tick)
        self.mma_writes = sorted(trace.tmem_writes, key=lambda w: w.tick)
        self.scale_n = {m.tick: _accumulator_columns(m) for m in trace.scale_mmas}
        self.waits: dict = {}
        for event in trace.mbarriers:
            if event.kind == "wait":
                self.waits.setdefault(event.warp, []).append(event.tick)
        for ticks in self.waits.values():
            ticks.sort()
        self.sources: dict = {}

    def last_before(self, column: int, tick: int):
        """The last copy before `tick` that may write `column`, or None."""
        found = None
        for candidates, ticks in ((self.by_column.get(column, ()), self.ticks.get(column, ())),
                                  (self.anywhere, self.anywhere_ticks)):
            j = bisect.bisect_left(ticks, tick)
            if j and (found is None or candidates[j - 1].tick > found.tick):
                found = candidates[j - 1]
        return found

    def overwritten(self, column: int, after: int, before: int) -> Optional[str]:
        """Why a cell of `column` may have been written between two ticks by something other than a copy
        (None when nothing may have): a tcgen05.st, or an MMA whose accumulator may span the column (a
        block-scaled MMA's D takes N columns from its address; another MMA's extent is not known here, so it
        may span every column from its address on)."""
        for store in self.stores:
            if after < store.tick < before and (store.cells is None or any(c == column for _, c in store.cells)):
                return f"line {store.line}: a tcgen05.st may write column {column} between the copy and the MMA"
        for write in self.mma_writes:
            if not after < write.tick < before:
                continue
            if write.address is None:
                return f"line {write.line}: an MMA whose accumulator address is not known runs between the copy and the MMA"
            first = write.address & 0xFFFF
            span = self.scale_n.get(write.tick)
            if first <= column and (span is None or column < first + span):
                return f"line {write.line}: an MMA's accumulator may span column {column} between the copy and the MMA"
        return None

    def last_wait(self, warp: int, tick: int) -> int:
        ticks = self.waits.get(warp, ())
        j = bisect.bisect_left(ticks, tick)
        return ticks[j - 1] if j else -1

    def source(self, copy, row: int, byte: int) -> int:
        key = (copy.descriptor, row, byte)
        if key not in self.sources:
            self.sources[key] = cp.row_source(COPY_SHAPE, smem_descriptor.decode("sm100", copy.descriptor), row, byte)
        return self.sources[key]


@functools.lru_cache(maxsize=1 << 14)
def _cell(r: int, s: int, vector: str, sf_id: int, rows: int) -> tuple:
    """spec.scales.tmem.scale_cell, kept (every MMA asks for the same few thousand cells)."""
    return scale_tmem.scale_cell(r, s, vector, sf_id, rows=rows)


def _accumulator_columns(mma) -> Optional[int]:
    """The columns a block-scaled MMA's f32 accumulator takes from its address: N (PTX ISA 9.0 9.7.16.10.5,
    layouts A and D: one column per n), from its instruction descriptor; None when not known."""
    kind = _kind(mma.opcode)
    if mma.idesc is None or kind not in vectors.KINDS:
        return None
    return instr_desc.decode(kind, mma.idesc).n


def _copy_problem(copy, mma, column: int, copies: _Copies) -> Optional[str]:
    if copy is None:
        return f"no tcgen05.cp writes column {column} before the MMA"
    if copy.address is None or copy.descriptor is None:
        return f"line {copy.line}: the tcgen05.cp's address or descriptor is not known"
    if COPY_SHAPE not in copy.opcode or COPY_MULTICAST not in copy.opcode or "cta_group::1" not in copy.opcode:
        return f"line {copy.line}: {copy.opcode} (only .cta_group::1 .32x128b.warpx4 copies are followed)"
    if copy.address >> 16:
        return f"line {copy.line}: the copy's lane {copy.address >> 16} (lane 0 only)"
    if not (copy.address & 0xFFFF) <= column < (copy.address & 0xFFFF) + COPY_COLUMNS:
        return f"line {copy.line}: the copy at column {copy.address & 0xFFFF} may write column {column} (not followed)"
    if copy.warp != mma.warp:
        return f"line {copy.line}: the copy is warp {copy.warp}'s, the MMA warp {mma.warp}'s (their order not followed)"
    if copy.tick < copies.last_wait(mma.warp, mma.tick):
        return f"line {copy.line}: the copy comes before the MMA's warp's last mbarrier wait"
    return copies.overwritten(column, copy.tick, mma.tick)


def _rows_of(outcome, visible: list, maps: dict) -> Optional[tuple]:
    """(global row of each mn, global first k of the MMA, rows of the matrix, K in elements) of a traced
    operand, or None when its map has not one dimension along the rows and one along k."""
    along_k, along_mn, both = compose.operand_dimensions(outcome, visible, maps)
    if both is not None or len(along_k) != 1 or len(along_mn) != 1:
        return None
    k_dim, mn_dim = along_k[0], along_mn[0]
    firsts = [compose.global_element(visible[slot], maps[visible[slot].source], index, outcome.packing)
              for slot, index in (row[0] for row in outcome.cells)]
    params = maps[visible[outcome.cells[0][0][0]].source]
    k_total = params.global_dim[k_dim] * (outcome.packing if k_dim == 0 else 1)
    return [f[mn_dim] for f in firsts], firsts[0][k_dim], params.global_dim[mn_dim], k_total


def _global_offset(load, params, index: tuple) -> Optional[int]:
    """The byte offset in the tensor of the box element `index` of a UINT8 map (the definition: its global
    element, compose.global_element, times the map's strides; 1 byte along dimension 0)."""
    if params.dtype.bits != 8:
        return None
    coordinates = compose.global_element(load, params, index)
    return coordinates[0] + sum(c * s for c, s in zip(coordinates[1:], params.global_strides))


def offset_by_element(load, params):
    """The byte offset in the tensor of a box index of `load`, as a function of the index: _global_offset,
    element by element (the reference); None for a map that is not UINT8."""
    if params.dtype.bits != 8:
        return None
    return lambda index: _global_offset(load, params, index)


def offset_function(load, params):
    """offset_by_element; while fast paths are on (spec.fast), an affine function of the box index
    (solver.fast.kernel_audit_scales.affine_offset)."""
    return fast.fastest(offset_by_element)(load, params)


def _check_operand(role: str, mma, visit_entry, copies: _Copies, maps: dict, vector: str, block: int,
                   sf_id: int, base: int, mn_count: int, tally: Tally, where: dict, merged_cache: dict) -> bool:
    """One operand's scales; False when the check stopped (unknown or refuted)."""
    site, traced, visible = visit_entry
    outcome = traced.get(role)
    if outcome is None or outcome.cells is None:
        tally.unknown(f"line {mma.line}: operand {role.upper()} was not traced to its global tensor")
        return False
    shape = _rows_of(outcome, visible, maps)
    if shape is None:
        tally.unknown(f"line {mma.line}: operand {role.upper()}'s map has not one dimension along its rows and one "
                      "along k")
        return False
    rows_global, k0, rows_total, k_total = shape
    if k0 % block:
        tally.unknown(f"line {mma.line}: the MMA's first k, {k0}, is not at a K block's start")
        return False
    slots = compose.slot_key(visible, maps)
    if slots not in merged_cache:
        merged_cache[slots] = compose.visible_map(visible, maps, compose.Placements())
    merged, why, _ = merged_cache[slots]
    if merged is None:
        tally.unknown(f"line {mma.line}: the awaited boxes cannot be placed ({why})")
        return False
    blocks_total = -(-k_total // block)
    if not 0 < mn_count <= scale_tmem.MAX_ROWS or len(rows_global) < mn_count:
        tally.unknown(f"line {mma.line}: {role.upper()} has {mn_count} rows in the instruction descriptor and "
                      f"{len(rows_global)} traced")
        return False
    cell_rows = -(-mn_count // scale_tmem.LANES_PER_QUARTER) * scale_tmem.LANES_PER_QUARTER
    writers: dict = {}                  # column -> the copy that wrote it (checked once per column)
    offset_of: dict = {}                # slot -> the byte in the scale tensor of a box index (offset_function)
    for r in range(mn_count):
        for s in range(vectors.SCALES_PER_ROW[vector]):
            lanes, column, byte = _cell(r, s, vector, sf_id, cell_rows)
            column += base
            if column not in writers:
                copy = copies.last_before(column, mma.tick)
                problem = _copy_problem(copy, mma, column, copies)
                if problem:
                    tally.unknown(f"line {mma.line} operand {role.upper()} row {r}: {problem}")
                    return False
                writers[column] = copy
            copy = writers[column]
            row, in_row = lanes[0] % 32, 4 * (column - (copy.address & 0xFFFF)) + byte
            address = copies.source(copy, row, in_row)
            hit = merged.get(address)
            if hit is None:
                tally.unknown(f"line {mma.line}: the scale byte {address:#x} the copy at line {copy.line} reads is "
                              "written by no load of the phases the MMA's warp waited for")
                return False
            slot, index = hit
            if slot not in offset_of:
                offset_of[slot] = offset_function(visible[slot], maps[visible[slot].source])
            got = offset_of[slot](index) if offset_of[slot] is not None else None
            if got is None:
                tally.unknown(f"line {visible[slot].line}: the scales' map is not UINT8")
                return False
            m, c = rows_global[r], k0 // block + s
            wanted = layouts.offset("interleaved", m, c, rows_total, blocks_total)
            if got != wanted:
                tally.refuted({"what": f"operand {role.upper()} row {m}, K block {c} (k {c * block}..{(c + 1) * block - 1}) "
                                       f"gets the scale at byte {got} of the scale tensor, not {wanted}", **where,
                               "operand": role.upper(), "row": m, "k_block": c, "applied_offset": got,
                               "expected_offset": wanted, "copy_line": copy.line, "load_line": visible[slot].line})
                return False
    return True


def decide(trace, scaled: dict, maps: dict):
    tally = Tally(PATH)
    if trace is None:
        return tally.result("the run was not traced")
    if not trace.scale_mmas:            # true for want of any instance (tally.VACUOUS)
        return Property(PATH.id, "proved", PATH.statement, PATH.source,
                        reason="the kernel has no block-scaled tcgen05.mma")
    copies = _Copies(trace)
    merged: dict = {}              # the awaited boxes' placement, per their maps and destinations
    for count, mma in enumerate(trace.scale_mmas):
        if count >= MAX_SCALE_CHECKS:
            tally.unknown(f"more than {MAX_SCALE_CHECKS} block-scaled MMA visits")
            break
        where = {"mma_line": mma.line, "warp": mma.warp}
        if mma.why or mma.scale_a is None or mma.scale_b is None or mma.idesc is None:
            tally.unknown(f"line {mma.line}: the MMA's scale operands or instruction descriptor are not known"
                          + (f" ({mma.why})" if mma.why else ""))
            continue
        if "cta_group::1" not in mma.opcode:
            tally.unknown(f"line {mma.line}: {mma.opcode} (only .cta_group::1 scales are followed)")
            continue
        kind = _kind(mma.opcode)
        try:
            vector = vectors.vector_of(kind, _qualifier(mma.opcode))
            idesc = instr_desc.decode(kind, mma.idesc)
        except SpecError as error:
            tally.unknown(f"line {mma.line}: {error}")
            continue
        if (mma.scale_a >> 16) or (mma.scale_b >> 16):
            tally.unknown(f"line {mma.line}: a scale operand at lane {max(mma.scale_a, mma.scale_b) >> 16} (lane 0 only)")
            continue
        entry = scaled.get(mma.order)
        if entry is None:
            tally.unknown(f"line {mma.line}: the MMA's operands were not traced (audit.reads.written says why)")
            continue
        block = vectors.block_size(kind, vector)
        try:
            ok = (_check_operand("a", mma, entry, copies, maps, vector, block, idesc.field("a_scale_id"),
                                 mma.scale_a & 0xFFFF, idesc.m, tally, where, merged) and
                  _check_operand("b", mma, entry, copies, maps, vector, block, idesc.field("b_scale_id"),
                                 mma.scale_b & 0xFFFF, idesc.n, tally, where, merged))
        except SpecError as error:
            tally.unknown(f"line {mma.line}: {error}")
            continue
        if ok:
            tally.proved()
    return tally.result("no block-scaled tcgen05.mma of the run was followed")
