"""Where a block-scaled tcgen05.mma reads its scales in tensor memory (PTX ISA 9.0 9.7.16.10.7.2 Scale
Factor A ID, 9.7.16.10.7.3 Scale Factor B ID, and their figures; 9.7.16.1.1 tensor-memory addresses).

The [scale-A-tmem] operand is the address (lane << 16 | column) of the scale_A matrix, M x N scales for
.scale_vec::NX. Row m of A has its scales in the word at lane m mod 32, column base + m // 32; scale s
(0 <= s < N) of the row in byte sf_id + s of that word, sf_id the instruction descriptor's scale-factor
id (spec.scales.vectors: a byte for 1X, a half word for 2X, 0 for 4X). "Scale factors for A and B
matrices need to be duplicated to all 32 lane partitions of tensor memory" (9.7.16.10.7): the word for
row m must be the same at lanes m mod 32 + 32q, q = 0..3. B likewise, column n of B for row m: N up to
256 takes 8 columns.

This is the 4 x 1 data path of M = 128 with .cta_group::1 (and each CTA's 128 rows of M = 256 with
.cta_group::2). CUTLASS builds the same cells (include/cute/atom/mma_traits_sm100.hpp, UMMA::tmem_sf_frg:
32 lanes, column stride 1 per 32 rows, replicated in the four sub-partitions, scale index in the byte).
The 2 x 2 data path of M = 128 with .cta_group::2 (B's scales for n >= 128 in lanes 64-95) is CUTLASS's
alone and is not modelled here.
"""
from __future__ import annotations

from spec.rule import SpecError, rule
from spec.scales import vectors

QUARTERS = 4
LANES_PER_QUARTER = 32
MAX_ROWS = 256                       # N of one MMA (B's scales); M of A is 128 per CTA

CELLS = rule(
    "scales.tmem.cells", "PTX ISA 9.0 9.7.16.10.7.2, 9.7.16.10.7.3 (scale factor A / B ID and their layout "
    "figures); CUTLASS include/cute/atom/mma_traits_sm100.hpp (UMMA::tmem_sf_frg)",
    "A block-scaled MMA reads scale s of A's row m (B's column n) from byte sf_id + s of the tensor-memory "
    "word at lane m mod 32, column base + m // 32 (n likewise), where base is the scale operand's column; "
    "the word must hold the same bytes in the four 32-lane sub-partitions (lanes m mod 32 + 32q).",
    evidence="cutlass",
    note="The manual draws the cells in figures (9.7.16.10.7.2-3); CUTLASS 4.2's tmem_sf_frg atom, evaluated "
         "with pycute (tests/test_scales_spec.py), gives the same lanes, columns and bytes for M or N of 128 and "
         "256. Only a Blackwell GPU could show which sub-partition's copy an MMA reads.")


def scale_cell(row: int, s: int, vector: str, sf_id: int, rows: int = 128) -> tuple:
    """((lanes, each sub-partition's), column offset from the operand's column, byte) of scale s of row
    `row` (A's m or B's n) for a scale vector and scale-factor id. SpecError outside the layout."""
    if vector not in vectors.SCALES_PER_ROW:
        raise SpecError("scale_vec", vector, "one of " + ", ".join(vectors.SCALES_PER_ROW), CELLS.id)
    if not 0 < rows <= MAX_ROWS or rows % LANES_PER_QUARTER:
        raise SpecError("rows", rows, f"a multiple of 32 up to {MAX_ROWS}", CELLS.id)
    if not 0 <= row < rows:
        raise SpecError("row", row, f"0 <= row < {rows}", CELLS.id)
    if not 0 <= s < vectors.SCALES_PER_ROW[vector]:
        raise SpecError("s", s, f"{vector} has {vectors.SCALES_PER_ROW[vector]} scales per row", CELLS.id)
    if sf_id not in vectors.SF_IDS[vector]:
        raise SpecError("sf_id", sf_id, f"{vector} takes " + ", ".join(map(str, vectors.SF_IDS[vector])),
                        vectors.SF_ID.id)
    lane = row % LANES_PER_QUARTER
    return (tuple(lane + LANES_PER_QUARTER * q for q in range(QUARTERS)), row // LANES_PER_QUARTER, sf_id + s)


def columns(rows: int) -> int:
    """Columns the scales of `rows` rows take: one per 32 rows."""
    return -(-rows // LANES_PER_QUARTER)
