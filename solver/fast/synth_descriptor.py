"""Fast paths of solver/synth/descriptor.py: a tile's addresses a row at a time, and ignored fields found
from the read map's parts.

tests/spec_tests/fast/test_fast_paths.py (test_tile_targets_*) checks targets equal to Tile.targets_reference;
tests/solver_tests/synth/test_synth_fast.py checks ignored_fields equal to ignored_fields_by_element over recipes.
"""
from __future__ import annotations

from spec import fast
from spec.cute.layout import ComposedLayout, Layout
from spec.mma import dtypes
from spec.mma import readmap
from solver.synth import descriptor as synth


@fast.fast_version_of(synth.Tile.targets_reference)
def targets(tile: synth.Tile) -> list:
    """Every element's address (Tile.targets_reference), a row at a time: L(mn, 0) and L(0, k) are kept
    across tiles of the same layout inside synth.shared_work() (one per K step of a recipe), and the byte
    and the swizzle are inlined for types with no padding (the reference for the others, and for a swizzle
    that shifts left)."""
    d = dtypes.dtype(tile.dtype)
    per_chunk = dtypes.elements_per_chunk(d, tile.kind)
    composed = isinstance(tile.layout, ComposedLayout)
    layout = tile.layout.layout if composed else tile.layout
    base = tile.layout.offset if composed else 0
    if d.bits * per_chunk != 128 or (composed and tile.layout.swizzle.shift < 0):
        return tile.targets_reference()     # padding, or a left shift
    column = _mode_offsets(layout, 1, tile.k_offset + tile.k)       # L(0, j), j < k_offset + k
    first_k = column[tile.k_offset]
    along_mn = [base + first_k + m for m in _mode_offsets(layout, 0, tile.mn)[:tile.mn]]
    along_k = [column[tile.k_offset + k] - first_k for k in range(tile.k)]
    start, bits = tile.start_address, d.bits
    if not composed:
        return [[start + ((m + k) * bits >> 3) for k in along_k] for m in along_mn]
    mask, shift = tile.layout.swizzle.yyy_mask, tile.layout.swizzle.shift
    # unpadded: byte(o) = (o div T) * 16 + ((o mod T) * bits) div 8 = (o * bits) div 8, as T * bits = 128
    return [[(a := start + ((m + k) * bits >> 3)) ^ ((a & mask) >> shift) for k in along_k] for m in along_mn]


def _mode_offsets(layout: Layout, mode: int, count: int) -> list:
    """[layout(i, 0) for i < count] (mode 0) or [layout(0, i) for i < count] (mode 1), kept inside
    synth.shared_work(): a recipe asks for the same ones at every K step."""
    kept = synth._KEPT
    key = ("offsets", layout, mode)
    found = (None if kept is None else kept.get(key)) or []
    if len(found) < count:          # the ones kept, and the rest (a later K step reads further along K)
        found = found + [layout(i, 0) if mode == 0 else layout(0, i) for i in range(len(found), count)]
        if kept is not None:
            kept[key] = found
    return found


def _read_parts(tile: synth.Tile, desc) -> tuple:
    """What readmap.first_misread reads of the operand `desc` reads: its mn parts, its k parts, the
    swizzle and the base offset (two descriptors alike in these read every element alike)."""
    op = synth._operand(tile, desc)
    return ([readmap.mn_part(op, mn) for mn in range(op.mn)], [readmap.k_part(op, k) for k in range(op.k)],
            desc.swizzle, desc.base_offset)


@fast.fast_version_of(synth.ignored_fields_by_element)
def ignored_fields(tile: synth.Tile, targets: list, desc) -> list:
    """ignored_fields_by_element, where another value that leaves the operand's read-map parts as they are
    (_read_parts) is not checked element by element: it reads every element as `desc` does, and `desc`
    reads them right."""
    parts = _read_parts(tile, desc)
    return [name for name, others in synth.other_values(desc)
            if all(_read_parts(tile, o) == parts or synth.reads_tile(tile, targets, o) for o in others)]
