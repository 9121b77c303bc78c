"""Testing your own descriptor builder with hypothesis and layoutproof.

    python -m pytest -q examples/hypothesis_builder_test.py

`make_smem_desc` stands for your compiler's builder: it packs the wgmma (sm90) shared-memory matrix
descriptor of a K-major, swizzled bf16 tile, field by field from PTX ISA 9.7.15.5.1 "Matrix Descriptor".
`strategies.descriptors` draws tiles a kernel can lay out, each with a descriptor that the executable
specification says reads it. The test asks whether your descriptor makes the MMA read the same bytes for
every element. It does not compare bits: the hardware ignores some of them (here LBO, which K-major
swizzled layouts do not use), and the strategy's descriptor holds whatever its generator drew there.
"""
from hypothesis import given
from hypothesis import strategies as st

import layoutproof as lp
from layoutproof import strategies

BF16_BYTES = 2
# The swizzle field, bits [62,64) of a wgmma descriptor (PTX ISA 9.7.15.5.1.2.2)
SWIZZLE_CODES = {"128B": 1, "64B": 2, "32B": 3}
# LBO of a K-major swizzled layout: "not used", "assumed to be 1" (PTX ISA 9.7.15.5.1): 1 unit of 16 bytes
UNUSED_LBO_BYTES = 16


def make_smem_desc(tile: dict) -> int:
    """The 64-bit wgmma descriptor of a K-major swizzled bf16 tile.

    The tile is Sw<B,4,3> o ((8, groups), (W/2, 1)) : ((W/2, group_stride), (1, _)) in bf16 elements: 8 rows of
    W bytes (the swizzle's row), then the next 8-row group group_stride elements on. PTX ISA 9.7.15.5.1:
      start address: the tile's first byte;
      stride byte offset (SBO): from one 8-row group to the next, in bytes;
      leading byte offset (LBO): not used by K-major swizzled layouts;
      base offset: 0, the tile's swizzle being that of its absolute addresses.
    Bit positions (9.7.15.5.1.2.2): start [0,14), LBO [16,30), SBO [32,46), base offset [49,52), swizzle
    [62,64); addresses and offsets are stored in units of 16 bytes."""
    (_, group_stride), _ = tile["stride"]
    sbo = group_stride * BF16_BYTES
    return ((tile["start_address"] >> 4) | (UNUSED_LBO_BYTES >> 4) << 16 | (sbo >> 4) << 32
            | SWIZZLE_CODES[tile["swizzle"]] << 62)


# K-major bf16 tiles under each wgmma swizzle, valid: legal tiles and descriptors that read them
K_MAJOR_SWIZZLED_BF16 = st.one_of([strategies.descriptors("sm90", dtype="bf16", major="K", swizzle=swizzle)
                                   for swizzle in SWIZZLE_CODES])


@given(K_MAJOR_SWIZZLED_BF16)
def test_the_builder_reads_what_the_tile_holds(record):
    tile = strategies.tile_of(record)         # layout, shape, stride, swizzle, start_address, dtype, mn, k, arch
    strategies.assert_same_reads(make_smem_desc(tile), record["case"]["descriptor"], record,
                                 names=("built", "expected"))


@given(K_MAJOR_SWIZZLED_BF16)
def test_the_builder_breaks_no_descriptor_rule(record):
    built = lp.decode("sm90", make_smem_desc(strategies.tile_of(record)))
    assert lp.violations(built) == []
