"""Descriptors built the way CUTLASS's make_gmma_desc / make_umma_desc build them read exactly the
elements CuTe places in shared memory.

The oracle is NVIDIA's pycute: the smem tile is one of CUTLASS's GMMA/UMMA layout atoms (in bits:
K-major (8, W*8):(W*8, 1), MN-major (W*8, 8):(1, W*8), MN 128B_atom32B (1024, 4):(1, 1024); W = swizzle
bytes) repeated over the tile with pycute.logical_product, in elements, and an element (mn, k) lives at
Swizzle<B,M,S>(tile_base + offset * bytes) - the swizzle applied to the absolute byte address as CuTe's
smem pointers do. The descriptor fields are read off that layout as make_*_desc does (strides in
16-byte units): K-major SBO = step to the next 8 rows, LBO = 1 (swizzled) or step to the next K core
matrix (no swizzle); MN-major LBO = step to the next W-wide MN atom, SBO = step to the next K group
(8 rows, 4 for 128B_atom32B), swapped for no swizzle. Successive K blocks add the unswizzled offset of
their first element to the start address (CUTLASS's DescriptorIterator), base offset always 0.
"""
import pytest

from cute_tiles import CASES, cute_tile, cutlass_descriptor
from spec.mma import dtypes
from spec.mma import readmap


@pytest.mark.parametrize("k_first", [False, True], ids=["mn-first", "k-first"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_cutlass_built_descriptor_reads_cute_offsets(case, k_first):
    arch, major, swizzle, dtype_name, mn, k_tile = case
    d = dtypes.dtype(dtype_name)
    kind = dtypes.default_kind(d)
    k_inst = dtypes.default_instruction_k(d, kind)
    offset, sw, atom_mn, atom_k = cute_tile(major, swizzle, dtype_name, mn, k_tile, k_first)
    tile_base = 0x2000   # CUTLASS aligns smem tiles to the swizzle repeat (1024 B)
    nbytes = lambda elems: elems * d.bits // 8
    checked = 0
    for k_block in range(k_tile // k_inst):
        k0 = k_block * k_inst
        start = tile_base + nbytes(offset(0, k0))          # DescriptorIterator: unswizzled offset
        desc = cutlass_descriptor(arch, major, swizzle, dtype_name, offset, start, atom_k)
        op = readmap.make_operand(desc, dtype_name, major, mn)
        assert op.k == k_inst
        assert readmap.violations(op) == []
        got = readmap.read_addresses(op)
        for i in range(mn):
            for j in range(k_inst):
                assert got[i][j] == sw(tile_base + nbytes(offset(i, k0 + j))), (k_block, i, j)
                checked += 1
    assert checked == mn * k_tile
