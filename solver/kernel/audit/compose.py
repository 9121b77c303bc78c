"""What one MMA visit reads, element by element, traced back to the global tensor: the read map of its
descriptor (spec.mma.readmap) against the placement of the TMA boxes its warp waited for
(spec.tma.place), each box at its coordinates.

A box element at box index (i0, i1, ...) of a load at tensor coordinates (c0, c1, ...) is the global
element (c0 + i0, c1 + i1 * elementStrides[1], ...) (PTX ISA 5.5.3, Tiled mode: no traversal stride along
dimension 0). Tensor maps come from the user's documents (`--tensormap PARAM=DOC`), keyed by the
parameter (and the byte offset in it) that the kernel passes to cp.async.bulk.tensor.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spec import fast
from spec.mma import readmap
from spec.rule import SpecError
from spec.tma import place

from solver.kernel import mma
from solver.kernel.audit.phases import Load

MAX_PLACEMENTS = 4096          # distinct (map, destination) boxes placed per audit (then: unknown)


@dataclass(frozen=True)
class Element:
    """Where one element an MMA reads came from."""
    load: Load
    box_index: tuple
    coordinates: tuple             # the global element (dimension 0 first)


@dataclass
class Outcome:
    """One operand of one MMA visit, traced into the awaited boxes: cells[mn][k] = (slot, box index), the
    slot indexing the visible loads; or why not (unknown), or the first element no awaited load wrote."""
    cells: Optional[list] = None
    unknown: Optional[str] = None
    unwritten: Optional[dict] = None   # {mn, k, address}
    slots: tuple = ()                  # the slots it read from, in order of first use
    packing: int = 1                   # elements per byte of the map (2: e2m1 packed in a UINT8 map, K-major)


class Placements:
    """address -> (box index) of each (tensor map, destination) box, computed once."""

    def __init__(self):
        self.cache: dict = {}

    def of(self, params, smem: int):
        key = (id(params), smem)
        found = self.cache.get(key)
        if found is None:
            if len(self.cache) >= MAX_PLACEMENTS:
                return None
            box = place.make_box(params.swizzle, params.dtype.bits // 8, params.box_dim, smem,
                                 params.element_strides)
            counts = box.counts
            found = {}
            for position, address in enumerate(place.place_rows(box)):
                index, rest = [], position
                for c in counts:
                    index.append(rest % c)
                    rest //= c
                found[address] = tuple(index)
            self.cache[key] = found
        return found


def global_element(load: Load, params, index: tuple, packing: int = 1) -> tuple:
    """The global coordinates of box element `index` (PTX ISA 9.0 5.5.3: the box's element i along d at
    the load's coordinate c + i * elementStrides[d], dimension 0 traversed whole). With packing p, the
    map's elements along dimension 0 are bytes that each hold p of the operand's elements (index[0] then
    counts those): the coordinate along 0 is in the operand's elements, p * c + index[0]."""
    strides = params.element_strides
    return tuple((packing * c + i) if d == 0 else c + i * strides[d]
                 for d, (c, i) in enumerate(zip(load.coordinates, index)))


def slot_key(loads: list, maps: dict) -> tuple:
    """What the placement of the loads depends on: each one's map and destination (not its coordinates)."""
    return tuple((id(maps.get(load.source)), load.smem) for load in loads)


def visible_map(loads: list, maps: dict, placements: Placements) -> tuple:
    """(address -> (slot, box index), None, None) over the loads (slot: the load's index in `loads`);
    (None, why not, None) when they cannot be placed; (None, None, (slot, slot, address)) when two of
    them write one address (the data read would depend on which lands last)."""
    merged: dict = {}
    for slot, load in enumerate(loads):
        params = maps.get(load.source)
        if params is None:
            return None, "no tensor map for the load", None      # (the caller names the parameter)
        if not isinstance(load.smem, int) or any(not isinstance(c, int) for c in load.coordinates):
            return None, f"line {load.line}: the load's destination or coordinates are unknown", None
        if params.encode != "tiled":
            return None, f"line {load.line}: an {params.encode} map (only tiled boxes are placed)", None
        if params.dtype.bits % 8:
            return None, f"line {load.line}: {params.data_type} elements are smaller than a byte (not placed)", None
        try:
            placed = placements.of(params, load.smem)
        except SpecError as error:
            return None, f"line {load.line}: the box cannot be placed ({error})", None
        if placed is None:
            return None, f"more than {MAX_PLACEMENTS} distinct boxes to place", None
        size = len(merged)
        merged.update((address, (slot, index)) for address, index in placed.items())
        if len(merged) != size + len(placed):
            for earlier in range(slot):
                other = placements.of(maps[loads[earlier].source], loads[earlier].smem)
                address = next((a for a in placed if a in other), None)
                if address is not None:
                    return None, None, (earlier, slot, address)
    return merged, None, None


def trace_operand(site: mma.Site, op: mma.Operand, merged: dict, loads: list, maps: dict) -> Outcome:
    """Where each element the operand reads sits among the boxes of `merged` (visible_map of `loads`)."""
    why = mma.missing_read_map(site, op)
    if why is not None:
        return Outcome(unknown=why)
    try:
        operand = mma.make_operand(site, op)
    except SpecError as error:
        return Outcome(unknown=f"the descriptor cannot be read: {error}")
    chunk = operand.elements_per_chunk
    packing = chunk // readmap.CHUNK if chunk > readmap.CHUNK else 1
    if readmap.CHUNK % chunk and packing * readmap.CHUNK != chunk:
        return Outcome(unknown=f"{op.dtype} elements do not fill whole bytes")
    if packing > 1 and operand.major != "K":
        return Outcome(unknown=f"{op.dtype} elements packed {packing} to a byte along MN (only K-major is placed)")
    element_bytes = readmap.CHUNK // chunk if packing == 1 else 1
    cells, used = [], {}
    for mn, row in enumerate(readmap.read_addresses(operand)):
        out = []
        for k, address in enumerate(row):
            hit = merged.get(address)
            if hit is None:
                return Outcome(unwritten={"mn": mn, "k": k, "address": address})
            used.setdefault(hit[0], None)
            if packing > 1:     # (element k in the byte's k mod p-th place: dtypes.byte_in_chunk, PTX ISA 9.0
                slot, index = hit    # 9.7.16.4.1, packed 4-bit elements of .kind::mxf4 / ::mxf4nvf4)
                hit = (slot, (packing * index[0] + k % packing,) + index[1:])
            out.append(hit)
        cells.append(out)
    for slot in used:
        params = maps[loads[slot].source]
        if params.dtype.bits // 8 != element_bytes:
            return Outcome(unknown=f"the map of {loads[slot].source.param} holds {params.dtype.bits // 8}-byte "
                                   f"elements, the MMA reads {op.dtype} ({element_bytes} bytes"
                                   f"{f' holding {packing}' if packing > 1 else ''})")
    return Outcome(cells=cells, slots=tuple(used), packing=packing)


def elements(outcome: Outcome, loads: list, maps: dict) -> list:
    """[mn][k] -> Element: the global element behind each cell (the reference the checks are defined on)."""
    return [[Element(loads[slot], index, global_element(loads[slot], maps[loads[slot].source], index,
                                                        outcome.packing))
             for slot, index in row] for row in outcome.cells]


def grid_dimensions(grid: list, coordinates=lambda element: element.coordinates) -> tuple:
    """(the global dimensions that follow k, those that follow mn, a dimension that follows both or None)
    of a [mn][k] grid: a dimension follows k when it changes along some row, mn when it changes along
    some column."""
    rank = len(coordinates(grid[0][0]))
    along_k, along_mn = set(), set()
    first_row = [coordinates(cell) for cell in grid[0]]
    for row in grid:
        start = coordinates(row[0])
        for k, cell in enumerate(row):
            here = coordinates(cell)
            for d in range(rank):
                if here[d] != start[d]:
                    along_k.add(d)
                if here[d] != first_row[k][d]:
                    along_mn.add(d)
    both = next(iter(sorted(along_k & along_mn)), None)
    return tuple(sorted(along_k - along_mn)), tuple(sorted(along_mn - along_k)), both


def operand_dimensions_by_element(outcome: Outcome, loads: list, maps: dict) -> tuple:
    """grid_dimensions of the operand's global elements (the reference of audit.gemm.same_k's dimensions:
    every element's global coordinates)."""
    return grid_dimensions(elements(outcome, loads, maps))


def operand_dimensions(outcome: Outcome, loads: list, maps: dict) -> tuple:
    """operand_dimensions_by_element; while fast paths are on (spec.fast), from the box indexes, kept per
    outcome and per placement of its boxes (solver.fast.kernel_audit_compose)."""
    return fast.fastest(operand_dimensions_by_element)(outcome, loads, maps)


def first_row(outcome: Outcome, loads: list, maps: dict) -> list:
    """The global elements of row 0 (mn = 0), k = 0, 1, ... (kept per outcome and its boxes' coordinates,
    all that they depend on: same_k and the accumulations both ask for them)."""
    placed = tuple(loads[slot].coordinates for slot in outcome.slots)
    kept = outcome.__dict__.setdefault("_first_rows", {})
    found = kept.get(placed)
    if found is None:
        found = kept[placed] = [global_element(loads[slot], maps[loads[slot].source], index, outcome.packing)
                                for slot, index in outcome.cells[0]]
    return found
