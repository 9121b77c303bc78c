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
    """One operand of one MMA visit: the global element of each (mn, k), or why not."""
    grid: Optional[list] = None    # [mn][k] -> Element
    unknown: Optional[str] = None
    unwritten: Optional[dict] = None   # the first element no awaited load wrote: {mn, k, address}
    loads: tuple = ()              # the loads it read from


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


def global_element(load: Load, params, index: tuple) -> tuple:
    strides = params.element_strides
    return tuple(c + (i if d == 0 else i * strides[d]) for d, (c, i) in enumerate(zip(load.coordinates, index)))


def visible_map(loads: list, maps: dict, placements: Placements) -> tuple:
    """(address -> (load, box index), None, None) over the loads; (None, why not, None) when they cannot be
    placed; (None, None, witness) when two of them write one address (the data read would depend on which
    lands last)."""
    merged: dict = {}
    for load in loads:
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
        merged.update((address, (load, index)) for address, index in placed.items())
        if len(merged) != size + len(placed):
            address = next(a for a in placed if merged[a][0] is load and _earlier(loads, load, a, maps, placements))
            other = _earlier(loads, load, address, maps, placements)
            return None, None, {"address": hex(address), "load_lines": [other.line, load.line]}
    return merged, None, None


def _earlier(loads: list, load: Load, address: int, maps: dict, placements: Placements) -> Optional[Load]:
    """A load before `load` in `loads` that also writes `address`, or None."""
    for other in loads[:loads.index(load)]:
        if address in placements.of(maps[other.source], other.smem):
            return other
    return None


def trace_operand(site: mma.Site, op: mma.Operand, merged: dict, maps: dict) -> Outcome:
    why = mma.missing_read_map(site, op)
    if why is not None:
        return Outcome(unknown=why)
    try:
        operand = mma.make_operand(site, op)
    except SpecError as error:
        return Outcome(unknown=f"the descriptor cannot be read: {error}")
    chunk = operand.elements_per_chunk
    if readmap.CHUNK % chunk:
        return Outcome(unknown=f"{op.dtype} elements do not fill whole bytes")
    element_bytes = readmap.CHUNK // chunk
    addresses = readmap.read_addresses(operand)
    grid, used = [], {}
    for mn, row in enumerate(addresses):
        out = []
        for k, address in enumerate(row):
            hit = merged.get(address)
            if hit is None:
                return Outcome(unwritten={"mn": mn, "k": k, "address": address})
            load, index = hit
            params = maps[load.source]
            if params.dtype.bits // 8 != element_bytes:
                return Outcome(unknown=f"the map's {params.data_type} elements are {params.dtype.bits // 8} bytes, "
                                       f"the MMA's {op.dtype} {element_bytes}")
            used[id(load)] = load
            out.append(Element(load, index, global_element(load, params, index)))
        grid.append(out)
    return Outcome(grid=grid, loads=tuple(used.values()))


def grid_dimensions(grid: list) -> tuple:
    """(the global dimensions that follow k, those that follow mn, a dimension that follows both or None)
    of a [mn][k] grid of Elements: a dimension follows k when it changes along some row, mn when it
    changes along some column."""
    rank = len(grid[0][0].coordinates)
    along_k, along_mn = set(), set()
    first_row = grid[0]
    for row in grid:
        start = row[0].coordinates
        for element in row:
            for d in range(rank):
                if element.coordinates[d] != start[d]:
                    along_k.add(d)
    for row in grid:
        for k, element in enumerate(row):
            for d in range(rank):
                if element.coordinates[d] != first_row[k].coordinates[d]:
                    along_mn.add(d)
    both = next(iter(sorted(along_k & along_mn)), None)
    return tuple(sorted(along_k - along_mn)), tuple(sorted(along_mn - along_k)), both
