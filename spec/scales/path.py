"""The path of a scale factor, executed: which of the writer's scales a block-scaled MMA applies to each
element of A (or B), when the kernel reads the scales the way CUTLASS and Triton do.

The reader (what CUTLASS's sm100 block-scaled GEMM and Triton's block-scaled matmul emit):
1. the scale tensor's bytes reach shared memory unchanged (TMA or a copy: PTX ISA 9.0 5.5), one 512-byte
   chunk per 128 rows x 4 K blocks, the chunk of row tile i and K tile j taken from the writer's tensor
   at ((i * K tiles) + j) * 512 (where the interleaved layout keeps it);
2. one `tcgen05.cp.cta_group::1.32x128b.warpx4` per chunk, from a K-major unswizzled descriptor whose 16-byte
   rows lie 16 bytes apart: source row r (bytes 16r .. 16r + 15) to lanes r + 32q (spec.tmem.cp.row_lanes),
   its bytes in order across 4 columns from the chunk's column 4 * (j * row tiles + i) (row tiles first,
   as Triton lays its copies out);
3. the MMA of k-step t (MMA_K elements of K) reads its N = SCALES_PER_ROW scales of row m at the cell
   spec.scales.tmem.scale_cell gives, with the scale operand at the column of the chunk holding K block
   t * N and the scale-factor id (t * N) mod 4 (spec.scales.vectors: a byte for 1X, a half word for 2X).

`applied` follows each scale through those steps, cell by cell; `first_misread` compares it with where
the writer put that scale (spec.scales.layouts). The interleaved writer is read right; a linear one is
not, and the witness says which scale an element gets instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spec.rule import SpecError

from spec.scales import layouts, tmem, vectors
from spec.tmem import cp

CHUNK_ROWS = 32                       # rows of one 32x128b copy: 16 bytes each
ROW_BYTES = 16


def applied(writer: str, rows: int, k: int, kind: str, vector: str) -> list:
    """applied[r][c]: the writer's offset (in scale elements) of the scale the MMA applies to row r's K
    block c, under the reader above, for a writer layout (spec.scales.layouts.LAYOUTS)."""
    block = vectors.block_size(kind, vector)
    layouts.check_size(rows, k, block)
    per_row = vectors.SCALES_PER_ROW[vector]
    blocks = layouts.blocks_of(k, block)
    row_tiles = -(-rows // layouts.TILE_ROWS)
    k_tiles = -(-blocks // layouts.TILE_BLOCKS)
    lanes_of = cp.row_lanes("32x128b", "warpx4")
    words_per_row = ROW_BYTES // 4
    cells: dict = {}                  # (lane, column, byte) -> the writer's offset of the byte copied there
    for i in range(row_tiles):
        for j in range(k_tiles):
            source = (i * k_tiles + j) * layouts.TILE_BYTES
            column = words_per_row * (j * row_tiles + i)
            for r in range(CHUNK_ROWS):
                for b in range(ROW_BYTES):
                    for lane in lanes_of[r]:
                        cells[(lane, column + b // 4, b % 4)] = source + ROW_BYTES * r + b
    out = []
    for r in range(rows):
        i, within = divmod(r, layouts.TILE_ROWS)
        row = []
        for c in range(blocks):
            t, s = divmod(c, per_row)
            j = (t * per_row) // layouts.TILE_BLOCKS
            sf_id = (t * per_row) % layouts.TILE_BLOCKS
            lanes, column, byte = tmem.scale_cell(within, s, vector, sf_id)
            base = words_per_row * (j * row_tiles + i)
            seen = {cells[(lane, base + column, byte)] for lane in lanes}
            row.append(seen.pop() if len(seen) == 1 else None)    # (None: the sub-partitions disagree)
        out.append(row)
    return out


def first_misread(writer: str, rows: int, k: int, kind: str, vector: str) -> Optional[dict]:
    """The first (row, K block) whose applied scale is not the one the writer put there, or None."""
    blocks = layouts.blocks_of(k, vectors.block_size(kind, vector))
    got = applied(writer, rows, k, kind, vector)
    for r in range(rows):
        for c in range(blocks):
            wanted = layouts.offset(writer, r, c, rows, blocks)
            if got[r][c] != wanted:
                held = next(((rr, cc) for rr in range(rows) for cc in range(blocks)
                             if layouts.offset(writer, rr, cc, rows, blocks) == got[r][c]), None)
                return {"row": r, "k_block": c, "k": [c * vectors.block_size(kind, vector),
                                                      (c + 1) * vectors.block_size(kind, vector) - 1],
                        "expected_offset": wanted, "applied_offset": got[r][c],
                        "applied_scale_of": list(held) if held else None}
    return None


@dataclass(frozen=True)
class ScaleCheck:
    """A writer layout against the reader above (`layoutproof scales check`): misread is the first scale
    the MMA applies to the wrong elements, or None."""
    sf_layout: str
    kind: str
    vector: str
    block: int
    rows: int
    k: int
    misread: Optional[dict]

    @property
    def ok(self) -> bool:
        return self.misread is None

    def as_json(self) -> dict:
        return {"sf_layout": self.sf_layout, "kind": self.kind, "scale_vec": self.vector, "block": self.block,
                "rows": self.rows, "k": self.k, "ok": self.ok, "misread": self.misread}


# rows x K blocks a check follows cell by cell (its cells take 4 per scale: a bound on the memory); the
# layouts repeat every 128 rows and 4 blocks, so 256 rows x 256 blocks already spans many tiles each way
MAX_CHECK_ELEMENTS = 1 << 16


def check(sf_layout: str, kind: str, qualifier: Optional[str], rows: int, k: int) -> ScaleCheck:
    """Whether the reader above applies the writer's own scale to every element; SpecError for a kind,
    qualifier, layout or size that has no reading."""
    vector = vectors.vector_of(kind, qualifier)
    block = vectors.block_size(kind, vector)
    layouts.check_size(rows, k, block)
    if sf_layout not in layouts.LAYOUTS:
        raise SpecError("sf_layout", sf_layout, "one of " + ", ".join(layouts.LAYOUTS), layouts.INTERLEAVED.id)
    if rows * layouts.blocks_of(k, block) > MAX_CHECK_ELEMENTS:
        raise SpecError("rows", rows, f"rows x K blocks at most {MAX_CHECK_ELEMENTS} for a check",
                        layouts.INTERLEAVED.id)
    return ScaleCheck(sf_layout, kind, vector, block, rows, k, first_misread(sf_layout, rows, k, kind, vector))
