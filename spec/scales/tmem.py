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
On the 2 x 2 data path (M = 128 with .cta_group::2) CUTLASS keeps B's scales in two halves: column n of
the first N/2 in lanes n mod 32 and that + 32, of the second half in lanes 64 + n mod 32 and that + 32,
each half's columns from the operand's column (rule scales.tmem.cells_2x2, CUTLASS's reading alone:
the manual draws no such figure).
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
         "with pycute (tests/spec_tests/test_scales_spec.py), gives the same lanes, columns and bytes for M or N of 128 and "
         "256. Only a Blackwell GPU could show which sub-partition's copy an MMA reads.")


CELLS_2X2 = rule(
    "scales.tmem.cells_2x2", "CUTLASS include/cute/atom/mma_traits_sm100.hpp (UMMA::tmem_sf_frg, "
    "TmemAllocMode::ScaleFactorDuplicated2by2); PTX ISA 9.0 9.7.16.10.5 (the 2 x 2 data path of M = 128, "
    ".cta_group::2)",
    "On the 2 x 2 data path (M = 128, .cta_group::2) B's scales for its first N/2 columns lie at lanes "
    "n mod 32 and n mod 32 + 32, for the rest at lanes 64 + n mod 32 and that + 32, column base + (n mod "
    "N/2) // 32, byte sf_id + s.",
    evidence="cutlass",
    note="The manual states the 2 x 2 data path for D but draws no scale-factor layout for it; this is "
         "CUTLASS 4.2's allocator (evaluated with pycute, tests/spec_tests/test_scales_spec.py). Only a Blackwell GPU "
         "could confirm it.")
DATA_PATHS = ("4x1", "2x2")


def scale_cell(row: int, s: int, vector: str, sf_id: int, rows: int = 128, data_path: str = "4x1") -> tuple:
    """((lanes, each sub-partition's copy), column offset from the operand's column, byte) of scale s of
    row `row` (A's m or B's n) for a scale vector and scale-factor id; data_path "2x2": B's scales of an
    M = 128 .cta_group::2 MMA (rows = N). SpecError outside the layout."""
    if data_path not in DATA_PATHS:
        raise SpecError("data_path", data_path, "4x1 or 2x2", CELLS.id)
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
    if data_path == "2x2":
        if rows % (2 * LANES_PER_QUARTER):
            raise SpecError("rows", rows, "a multiple of 64 on the 2x2 data path", CELLS_2X2.id)
        half, within = divmod(row, rows // 2)
        lane = within % LANES_PER_QUARTER + 2 * LANES_PER_QUARTER * half
        return (lane, lane + LANES_PER_QUARTER), within // LANES_PER_QUARTER, sf_id + s
    lane = row % LANES_PER_QUARTER
    return (tuple(lane + LANES_PER_QUARTER * q for q in range(QUARTERS)), row // LANES_PER_QUARTER, sf_id + s)


def columns(rows: int) -> int:
    """Columns the scales of `rows` rows take: one per 32 rows."""
    return -(-rows // LANES_PER_QUARTER)
