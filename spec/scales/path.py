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

from spec.rule import SpecError, rule

from spec.scales import layouts, tmem, vectors
from spec.tmem import cp

CHUNK_ROWS = 32                       # rows of one 32x128b copy: 16 bytes each
ROW_BYTES = 16
TILE_COLUMNS = ROW_BYTES // 4         # columns one copy's 16-byte rows take (a 128-row tile's scales)


COPY_FORM = "32x128b.warpx4"           # the copy CUTLASS and Triton emit for scales


@dataclass(frozen=True)
class Copy:
    """One tcgen05.cp (by default .32x128b.warpx4): its rows of bytes from `source` on (in the writer's scale
    tensor, which the load brings to shared memory unchanged; row r at source + r x the row's bytes) to
    tensor-memory column `column` (from the scales' base)."""
    source: int
    column: int
    form: str = COPY_FORM               # shape, then .multicast where the shape takes one

    @property
    def shape(self) -> str:
        return self.form.split(".")[0]

    @property
    def multicast(self) -> Optional[str]:
        return self.form.split(".", 1)[1] if "." in self.form else None


@dataclass(frozen=True)
class Step:
    """The scale operand of the MMA of one k-step: its column (for the first 128-row tile; tile i reads 4 i
    columns further, rule scales.tmem.cells) and the instruction descriptor's scale-factor id."""
    column: int
    sf_id: int


@dataclass(frozen=True)
class Reader:
    """What a kernel does with the scales: its copies, in order, and the scale operand of each k-step."""
    copies: tuple
    steps: tuple


def standard_reader(rows: int, blocks: int, vector: str, form: str = COPY_FORM) -> Reader:
    """The reader CUTLASS and Triton emit (the module docstring): chunk (i, j) from ((i * K tiles) + j) * 512
    to column 4 (j * row tiles + i); k-step t at the column of chunk (0, t N // 4), id (t N) mod 4. `form`:
    another tcgen05.cp shape (and multicast) in the same places, a bug `scales check --copy` shows."""
    per_row = vectors.SCALES_PER_ROW[vector]
    row_tiles = -(-rows // layouts.TILE_ROWS)
    k_tiles = -(-blocks // layouts.TILE_BLOCKS)
    copies = tuple(Copy((i * k_tiles + j) * layouts.TILE_BYTES, TILE_COLUMNS * (j * row_tiles + i), form)
                   for i in range(row_tiles) for j in range(k_tiles))
    steps = tuple(Step(TILE_COLUMNS * row_tiles * ((t * per_row) // layouts.TILE_BLOCKS),
                       (t * per_row) % layouts.TILE_BLOCKS) for t in range(-(-blocks // per_row)))
    return Reader(copies, steps)


def copied_cells(reader: Reader):
    """(lane, column, byte) -> the writer's offset of the byte the copies leave in that cell, or None where
    none wrote (rule tmem.cp.layout: spec.tmem.cp.cell_rows gives the source row each (lane, column) of a
    copy holds; byte b of a row of R bytes to column b // 4, byte b mod 4). A later copy overwrites an
    earlier one."""
    last = {}
    for copy in reader.copies:
        row_bytes = 4 * cp.columns(copy.shape)
        for (lane, column), row in cp.cell_rows(copy.shape, copy.multicast).items():
            last[(lane, copy.column + column)] = (copy, copy.source + row_bytes * row + 4 * column)

    def cell(lane: int, column: int, byte: int) -> Optional[int]:
        found = last.get((lane, column))
        return None if found is None else found[1] + byte
    return cell


def _held(cells, reader: Reader, r: int, c: int, vector: str, cell_of: dict) -> Optional[list]:
    """What each sub-partition's copy of the cell holds for row r's K block c (the writer's offsets, one per
    lane spec.scales.tmem.scale_cell names), or None when no k-step reads block c."""
    per_row = vectors.SCALES_PER_ROW[vector]
    i, within = divmod(r, layouts.TILE_ROWS)
    t, s = divmod(c, per_row)
    if t >= len(reader.steps):
        return None
    step = reader.steps[t]
    key = (within, s, step.sf_id)
    if key not in cell_of:
        cell_of[key] = tmem.scale_cell(within, s, vector, step.sf_id)
    lanes, column, byte = cell_of[key]
    return [cells(lane, step.column + TILE_COLUMNS * i + column, byte) for lane in lanes]


def held_by_sub_partition(reader: Reader, r: int, c: int, vector: str) -> Optional[list]:
    """What the four sub-partitions' copies of row r's K block c hold (the writer's offsets), or None when
    no k-step reads block c."""
    return _held(copied_cells(reader), reader, r, c, vector, {})


def applied(writer: str, rows: int, k: int, kind: str, vector: str, reader: Optional[Reader] = None) -> list:
    """applied[r][c]: the writer's offset (in scale elements) of the scale the MMA applies to row r's K
    block c, for a writer layout (spec.scales.layouts.LAYOUTS) and a reader (default: standard_reader);
    None where the four sub-partitions disagree or a cell was never written."""
    block = vectors.block_size(kind, vector)
    layouts.check_size(rows, k, block)
    blocks = layouts.blocks_of(k, block)
    reader = reader or standard_reader(rows, blocks, vector)
    cells = copied_cells(reader)
    cell_of: dict = {}              # (row in its tile, s, sf_id) -> scale_cell's answer: 2048 forms at most
    out = []
    for r in range(rows):
        row = []
        for c in range(blocks):
            seen = set(_held(cells, reader, r, c, vector, cell_of) or (None,))
            row.append(seen.pop() if len(seen) == 1 else None)
        out.append(row)
    return out


def first_misread(writer: str, rows: int, k: int, kind: str, vector: str,
                  reader: Optional[Reader] = None) -> Optional[dict]:
    """The first (row, K block) whose applied scale is not the one the writer put there, or None."""
    blocks = layouts.blocks_of(k, vectors.block_size(kind, vector))
    got = applied(writer, rows, k, kind, vector, reader)
    for r in range(rows):
        for c in range(blocks):
            wanted = layouts.offset(writer, r, c, rows, blocks)
            if got[r][c] != wanted:
                held = next(((rr, cc) for rr in range(rows) for cc in range(blocks)
                             if layouts.offset(writer, rr, cc, rows, blocks) == got[r][c]), None)
                found = {"row": r, "k_block": c, "k": [c * vectors.block_size(kind, vector),
                                                       (c + 1) * vectors.block_size(kind, vector) - 1],
                         "expected_offset": wanted, "applied_offset": got[r][c],
                         "applied_scale_of": list(held) if held else None}
                if got[r][c] is None:       # the sub-partitions disagree, or no copy wrote the cell
                    found["sub_partitions"] = held_by_sub_partition(reader or standard_reader(rows, blocks, vector),
                                                                    r, c, vector)
                return found
    return None


@dataclass(frozen=True)
class ScalePath:
    """The subject "scale_path": a tile's scales as a kernel reads them with the reader above."""
    kind: str
    vector: str
    sf_layout: str
    k: int                      # the tile's K, in elements


INTERLEAVED_WRITER = rule(
    "scales.path.interleaved_writer", "cuBLAS documentation, 1D Block Scaling Factors Layout; CUTLASS "
    "include/cutlass/gemm/collective/sm100_blockscaled_mma_warpspecialized.hpp (SM100_UTCCP_4x32dp128bit); "
    "Triton python/tutorials/10-block-scaled-matmul.py",
    "The reader CUTLASS and Triton emit (one tcgen05.cp.32x128b.warpx4 per 512-byte chunk of 128 rows x 4 K "
    "blocks, the k-step's scale-factor id (t N) mod 4) applies to each element the scale the writer meant "
    "only when the writer's layout is the interleaved 128 x 4 one; a linear writer's scales land on other "
    "elements.",
    subject="scale_path", evidence="cutlass",
    note="Follows from scales.layout.interleaved, tmem.cp.layout and scales.tmem.cells: spec.scales.path "
         "follows every scale, the Z3 model of tests/solver_tests/model/test_scales_model.py proves it, and `scales check` "
         "names the misread element of a linear writer. Nothing refuses a linear writer: the MMA silently "
         "applies the wrong scales.")
K_STEPS = rule(
    "scales.path.k_steps", "PTX ISA 9.0 9.7.16.2.1 (Table 39: K = 32 for .kind::mxf8f6f4, 64 for mxf4 and "
    "mxf4nvf4), 9.7.16.10.7.1 (Table 54)",
    "A block-scaled tile's K is a whole number of MMA k-steps (32 for .kind::mxf8f6f4, 64 for mxf4 and "
    "mxf4nvf4): each MMA applies its N scales per row to the same K of elements.",
    subject="scale_path",
    note="A K that is not a whole number of k-steps leaves a last MMA reading elements (and scales) past the "
         "tile: nothing refuses it.")


@INTERLEAVED_WRITER.checker
def _interleaved_writer(p: ScalePath) -> Optional[str]:
    if p.sf_layout != "interleaved":
        return f"a {p.sf_layout} writer is read by a reader made for the interleaved 128 x 4 layout"
    return None


@K_STEPS.checker
def _k_steps(p: ScalePath) -> Optional[str]:
    step = vectors.MMA_K.get(p.kind)
    if step and p.k % step:
        return f"K = {p.k} is not a whole number of .kind::{p.kind} k-steps of {step}"
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
    copy: str = COPY_FORM

    @property
    def ok(self) -> bool:
        return self.misread is None

    def as_json(self) -> dict:
        return {"sf_layout": self.sf_layout, "kind": self.kind, "scale_vec": self.vector, "block": self.block,
                "rows": self.rows, "k": self.k, "copy": self.copy, "ok": self.ok, "misread": self.misread}


# rows x K blocks a check follows cell by cell (its cells take 4 per scale: a bound on the memory); the
# layouts repeat every 128 rows and 4 blocks, so 256 rows x 256 blocks already spans many tiles each way
MAX_CHECK_ELEMENTS = 1 << 16


def check(sf_layout: str, kind: str, qualifier: Optional[str], rows: int, k: int, copy: str = COPY_FORM) -> ScaleCheck:
    """Whether the reader above (its copies of form `copy`: shape, then .multicast where it takes one)
    applies the writer's own scale to every element; SpecError for a kind, qualifier, layout, copy form or
    size that has no reading."""
    shape, _, multicast = copy.lstrip(".").partition(".")
    cp.row_lanes(shape, multicast or None)          # (SpecError: no such tcgen05.cp form, rule tmem.cp.shape)
    vector = vectors.vector_of(kind, qualifier)
    block = vectors.block_size(kind, vector)
    layouts.check_size(rows, k, block)
    if sf_layout not in layouts.LAYOUTS:
        raise SpecError("sf_layout", sf_layout, "one of " + ", ".join(layouts.LAYOUTS), layouts.INTERLEAVED.id)
    if rows * layouts.blocks_of(k, block) > MAX_CHECK_ELEMENTS:
        raise SpecError("rows", rows, f"rows x K blocks at most {MAX_CHECK_ELEMENTS} for a check",
                        layouts.INTERLEAVED.id)
    form = copy.lstrip(".")
    reader = standard_reader(rows, layouts.blocks_of(k, block), vector, form)
    return ScaleCheck(sf_layout, kind, vector, block, rows, k, first_misread(sf_layout, rows, k, kind, vector, reader),
                      form)
