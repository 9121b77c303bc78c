"""Where a writer puts the scale factor of (row, K block) in memory: the position, in scale elements (one
byte each: UE8M0 or UE4M3), of scale S[r][c] of a rows x blocks scale matrix (r: a row of A, or a column
of B; c: the block of K it scales, c = k // block).

* interleaved: cuBLAS's 1D block-scaling-factor layout (cuBLAS documentation, "1D Block Scaling Factors
  Layout"): the matrix is cut into 128 x 4 tiles of 512 bytes, tiles in row-major order (the K tiles of
  a row of tiles one after the other); inside a tile, row r sits in the 16 bytes at (r mod 32) * 16, in
  the 4-byte group (r mod 128) // 32, scale c mod 4 at its byte:
      offset(r, c) = ((r // 128) * ceil(blocks / 4) + c // 4) * 512 + (r mod 32) * 16
                     + ((r mod 128) // 32) * 4 + c mod 4
  The matrix is padded to rows a multiple of 128 and blocks a multiple of 4. The same layout is
  CUTLASS's Sm1xxBlockScaledConfig atom, ((32,4),(SFVecSize,4)):((16,4),(0,1)) tiled K first
  (include/cutlass/detail/sm100_blockscaled_layout.hpp), torchao's `to_blocked`, nvmath-python's
  `to_block_scale` and the 5-D scale tensor of Triton's block-scaled matmul tutorial. Its 32 x 16-byte
  rows are what one tcgen05.cp.32x128b.warpx4 copies (spec.scales.tmem).
* linear-k: row-major, each row's blocks contiguous: offset = r * blocks + c.
* linear-mn: column-major, each block's rows contiguous: offset = c * rows + r.
"""
from __future__ import annotations

from dataclasses import dataclass

from spec.rule import SpecError, rule

TILE_ROWS, TILE_BLOCKS, TILE_BYTES = 128, 4, 512
LAYOUTS = ("interleaved", "linear-k", "linear-mn")
MAX_ELEMENTS = 1 << 20          # rows x blocks a map is computed for (sizes are checked before work: the
                                # offsets of 2^20 scales are some 40 MB in memory, 8 MB of JSON)

INTERLEAVED = rule(
    "scales.layout.interleaved", "cuBLAS documentation, 1D Block Scaling Factors Layout; CUTLASS "
    "include/cutlass/detail/sm100_blockscaled_layout.hpp (Sm1xxBlockScaledBasicChunk::SfKMajorAtom)",
    "The interleaved (128 x 4) layout puts scale S[r][c] at ((r // 128) * ceil(C / 4) + c // 4) * 512 + "
    "(r mod 32) * 16 + ((r mod 128) // 32) * 4 + c mod 4, for a scale matrix of C blocks per row padded to "
    "rows a multiple of 128 and C a multiple of 4.",
    evidence="cutlass",
    note="CUTLASS's atom ((32,4),(SFVecSize,4)):((16,4),(0,1)), tiled K first, evaluated with pycute "
         "(tests/spec_tests/test_scales_spec.py); nvmath-python's documented get_block_scale_offset examples (82, 593).")
LINEAR = rule(
    "scales.layout.linear", "Triton python/tutorials/10-block-scaled-matmul.py (unpack_scale: the M x "
    "K // VEC_SIZE scale matrix the reference product reads, row-major)",
    "A linear layout puts S[r][c] at r * C + c (linear-k: each row's K blocks contiguous) or at c * R + r "
    "(linear-mn: each K block's rows contiguous), with no padding.",
    evidence="interpretation",
    note="No manual defines a 'linear' scale layout: these are the plain row- and column-major matrices a "
         "quantizer writes before any swizzle (Triton's reference unpack_scale, torchao's scales before "
         "to_blocked). The hardware reads none of them directly (spec.scales.path).")


def blocks_of(k: int, block: int) -> int:
    """Scale factors per row: K over the block, rounded up (a partial last block has a scale too)."""
    return -(-k // block)


def footprint(layout: str, rows: int, blocks: int) -> int:
    """Scale elements the layout spans (the interleaved one padded to whole 128 x 4 tiles)."""
    if layout == "interleaved":
        return -(-rows // TILE_ROWS) * -(-blocks // TILE_BLOCKS) * TILE_BYTES
    return rows * blocks


def offset(layout: str, r: int, c: int, rows: int, blocks: int) -> int:
    """The position of S[r][c] in the writer's scale tensor, in elements."""
    if layout == "interleaved":
        tiles_per_row = -(-blocks // TILE_BLOCKS)
        return ((r // TILE_ROWS) * tiles_per_row + c // TILE_BLOCKS) * TILE_BYTES + (r % 32) * 16 + \
            ((r % TILE_ROWS) // 32) * 4 + c % TILE_BLOCKS
    if layout == "linear-k":
        return r * blocks + c
    if layout == "linear-mn":
        return c * rows + r
    raise SpecError("sf_layout", layout, "one of " + ", ".join(LAYOUTS), INTERLEAVED.id)


def check_size(rows: int, k: int, block: int) -> None:
    """SpecError for sizes no map is computed for (before any work)."""
    for name, value in (("rows", rows), ("k", k), ("block", block)):
        if not isinstance(value, int) or value < 1:
            raise SpecError(name, value, "a positive whole number", INTERLEAVED.id)
    if rows * blocks_of(k, block) > MAX_ELEMENTS:
        raise SpecError("rows", rows, f"rows x K blocks at most {MAX_ELEMENTS}", INTERLEAVED.id)


def offsets(layout: str, rows: int, k: int, block: int) -> list:
    """offsets[row][k_block]: where the writer puts each scale of a rows x K matrix of this block size."""
    check_size(rows, k, block)
    if layout not in LAYOUTS:
        raise SpecError("sf_layout", layout, "one of " + ", ".join(LAYOUTS), INTERLEAVED.id)
    blocks = blocks_of(k, block)
    return [[offset(layout, r, c, rows, blocks) for c in range(blocks)] for r in range(rows)]


@dataclass(frozen=True)
class ScaleMap:
    """Where a writer layout puts every scale of a rows x K matrix (`layoutproof scales map`)."""
    sf_layout: str
    rows: int
    k: int
    block: int
    k_blocks: int
    footprint: int
    offsets: list                   # offsets[row][k_block], in scale elements

    def as_json(self) -> dict:
        return {"sf_layout": self.sf_layout, "rows": self.rows, "k": self.k, "block": self.block,
                "k_blocks": self.k_blocks, "footprint": self.footprint, "offsets": self.offsets}


def scale_map(sf_layout: str, rows: int, k: int, block: int) -> ScaleMap:
    """The ScaleMap of a writer layout; SpecError for a layout or size no map is made for."""
    found = offsets(sf_layout, rows, k, block)
    blocks = blocks_of(k, block)
    return ScaleMap(sf_layout, rows, k, block, blocks, footprint(sf_layout, rows, blocks), found)
