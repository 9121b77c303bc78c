"""hypothesis strategies for testing your compiler against the manual, and the comparison that means what the
hardware means. Import it as its own name, next to `import layoutproof as lp`:

    from hypothesis import given
    from layoutproof import strategies

    @given(strategies.tile_layouts("sm90", dtype="bf16", major="K", swizzle="128B"))
    def test_my_descriptor_builder(tile):
        strategies.assert_same_reads(my_compiler.make_smem_desc(tile), expected_for(tile), tile)

Strategies (each documented, with an example, in solver/fuzz/strategies.py; all take `violate`, the rule ids
the drawn cases break, none by default, and `pool_size` / `seed`):
  descriptors       a shared-memory descriptor with the operand tile it reads (narrow by dtype, major,
                    swizzle, max_mn)
  tile_layouts      the tiles alone: layout, shape / stride, swizzle, start address, dtype, extents
  tensor_maps       cuTensorMapEncode* arguments (encode: tiled, im2col, im2col_wide)
  recipes           a TMA box, the smem tile it writes, the descriptors that read it
  tmem_forms        one tcgen05.ld / st / ld.red / cp / shift instruction (op)
  tmem_allocations  one CTA's tcgen05.alloc / dealloc sequence
  records           any `layoutproof fuzz` target's records

Arguments are checked when a strategy is made: a wrong one raises StrategyArgumentError at once (both
hypothesis.errors.InvalidArgument and ValueError), naming it.

Comparing descriptors (solver/fuzz/compare.py): two descriptors are the same to the hardware when the MMA
reads every element of the tile from the same byte, whatever the bits it does not read hold:
  same_reads(d1, d2, tile)          True / False
  assert_same_reads(d1, d2, tile)   AssertionError naming the tile, both descriptors (hex and fields) and the
                                    first element read differently (mn, k, both addresses)
  first_different_read(d1, d2, tile)   that element, or None
Descriptors are 64-bit words (int or "0x..." text) or layoutproof.decode / encode results; the tile is a
drawn tile, a descriptors() record, or any dict with dtype, major, mn (k, kind, arch).

A "valid" tile is one a kernel can lay out: no two elements share a byte and it fits in one CTA's shared
memory (tile_problem); every case is labelled by spec/, the executable specification.
"""
from __future__ import annotations

from solver.fuzz.compare import assert_same_reads, first_different_read, reads_message, same_reads
from solver.fuzz.strategies import (MAX_MN, MAX_SHARED_MEMORY_BYTES, StrategyArgumentError, descriptors, recipes,
                                    records, tensor_maps, tile_layouts, tile_of, tile_problem, tmem_allocations,
                                    tmem_forms)

__all__ = ["descriptors", "tile_layouts", "tensor_maps", "recipes", "tmem_forms", "tmem_allocations", "records",
           "same_reads", "assert_same_reads", "first_different_read", "reads_message", "tile_of", "tile_problem",
           "StrategyArgumentError", "MAX_MN", "MAX_SHARED_MEMORY_BYTES"]

del annotations     # (the __future__ import's name: not part of the API)
