"""CuTe smem tiles built as CUTLASS builds them, with NVIDIA's pycute as the oracle (shared by the
CUTLASS-compatibility and synthesis tests).

A tile is one of CUTLASS's GMMA/UMMA layout atoms (in bits: K-major (8, W*8):(W*8, 1), MN-major
(W*8, 8):(1, W*8), MN 128B_atom32B (1024, 4):(1, 1024); W = swizzle bytes) repeated over the tile with
pycute.logical_product, in elements; element (mn, k) lives at Swizzle<B,M,S>(tile_base + offset *
bytes). cutlass_descriptor reads the fields off the layout as make_gmma_desc / make_umma_desc do.
"""
import pycute

from spec.mma import descriptor
from spec.mma import dtypes
from spec.cute.layout import ComposedLayout, Layout
from spec.cute.swizzle import Swizzle

SWIZZLE_BITS = {"none": (0, 4, 3, 16), "32B": (1, 4, 3, 32), "64B": (2, 4, 3, 64), "128B": (3, 4, 3, 128),
                "128B_atom32B": (2, 5, 2, 128)}


def cute_tile(major, swizzle, dtype_name, mn, k, k_first):
    """(offset(mn, k) in elements, the pycute byte swizzle, the atom's MN and K extents)."""
    d = dtypes.dtype(dtype_name)
    b, m, s, width = SWIZZLE_BITS[swizzle]
    per_row = width * 8 // d.bits            # elements in one W-byte atom row
    if major == "K":
        atom = pycute.Layout((8, per_row), (per_row, 1))
        atom_mn, atom_k = 8, per_row
    else:
        k_rows = 4 if swizzle == "128B_atom32B" else 8
        atom = pycute.Layout((per_row, k_rows), (1, per_row))
        atom_mn, atom_k = per_row, k_rows
    tiles = (mn // atom_mn, k // atom_k)
    order = pycute.Layout(tiles, (tiles[1], 1)) if k_first else pycute.Layout(tiles)
    tile = pycute.logical_product(atom, order)

    def offset(i, j):
        return tile(((i % atom_mn, j % atom_k), (i // atom_mn, j // atom_k)))
    return offset, pycute.Swizzle(b, m, s), atom_mn, atom_k


def cutlass_descriptor(arch, major, swizzle, dtype_name, offset, start, atom_k):
    """The fields make_gmma_desc / make_umma_desc read off the tile layout (bytes)."""
    nbytes = lambda elems: elems * dtypes.dtype(dtype_name).bits // 8
    T = 128 // dtypes.dtype(dtype_name).bits
    step = lambda i, j: nbytes(offset(i, j) - offset(0, 0))
    if major == "K":
        sbo = step(8, 0)
        lbo = step(0, T) if swizzle == "none" else 16
    else:
        atom_mn = SWIZZLE_BITS[swizzle][3] * 8 // dtypes.dtype(dtype_name).bits
        if swizzle == "none":
            sbo, lbo = step(T, 0), step(0, 8)
        else:
            lbo, sbo = step(atom_mn, 0), step(0, atom_k)
    return descriptor.encode(arch, start, lbo, sbo, swizzle, base_offset=0)


CASES = [
    # arch, major, swizzle, dtype, MN, K of the smem tile
    ("sm90", "K", "128B", "bf16", 64, 64), ("sm90", "K", "128B", "e4m3", 128, 128),
    ("sm90", "K", "64B", "f16", 64, 64), ("sm90", "K", "32B", "tf32", 64, 32),
    ("sm90", "K", "none", "bf16", 64, 32), ("sm90", "K", "none", "s8", 64, 64),
    ("sm90", "MN", "128B", "bf16", 128, 32), ("sm90", "MN", "64B", "f16", 64, 32),
    ("sm90", "MN", "32B", "bf16", 32, 32), ("sm90", "MN", "none", "f16", 64, 32),
    ("sm100", "K", "128B", "bf16", 128, 64), ("sm100", "K", "128B", "e2m1", 128, 256),
    ("sm100", "K", "32B", "e4m3", 128, 64), ("sm100", "MN", "128B", "e4m3", 256, 64),
    ("sm100", "MN", "128B_atom32B", "tf32", 64, 16), ("sm100", "MN", "64B", "s8", 128, 64),
    ("sm100", "MN", "none", "bf16", 64, 32),
]


def spec_layout(major, swizzle, dtype_name, mn, k, k_first):
    """The same tile as a spec ComposedLayout from (mn, k), for layoutproof synth: the product's modes
    ((atom_mn, atom_k), (tiles_mn, tiles_k)) regrouped as ((atom_mn, tiles_mn), (atom_k, tiles_k))."""
    _, _, atom_mn, atom_k = cute_tile(major, swizzle, dtype_name, mn, k, k_first)
    d = dtypes.dtype(dtype_name)
    b, m, s, width = SWIZZLE_BITS[swizzle]
    per_row = width * 8 // d.bits
    if major == "K":
        atom = pycute.Layout((8, per_row), (per_row, 1))
    else:
        atom = pycute.Layout((per_row, atom_k), (1, per_row))
    tiles = (mn // atom_mn, k // atom_k)
    order = pycute.Layout(tiles, (tiles[1], 1)) if k_first else pycute.Layout(tiles)
    product = pycute.logical_product(atom, order)
    (a_mn, a_k), (t_mn, t_k) = product.stride
    shape = ((atom_mn, tiles[0]), (atom_k, tiles[1]))
    return ComposedLayout(Swizzle(b, m, s), 0, Layout(shape, ((a_mn, t_mn), (a_k, t_k))))
