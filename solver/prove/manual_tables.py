"""The manual's tables as plain data, transcribed for the property catalogue apart from the Z3 models.

The models (solver/model/descriptor.py, solver/model/tma_swizzle.py) carry their own transcriptions,
and properties that compare a model only with itself (encode against decode, table against formula)
cannot notice a transcription that is wrong consistently. The properties that read this module
(desc.table.*, swizzle.tma.manual_table.*) compare each model with the manual's table instead. Nothing
here imports a model or spec/: the data is copied from the manual, in the manual's own form (bit
ranges as "first bit, last bit" rows; swizzle rows as printed), and turned into terms by the property
modules.
"""
from __future__ import annotations

# --- Shared memory matrix descriptors ---------------------------------------------------------------------
# PTX ISA 9.7.15.5.1.2.2 (wgmma "Matrix Descriptor Format", sm_90) and 9.7.16.4.1 Table 40 (tcgen05
# "Shared memory descriptor", sm_100/sm_103): (field, first bit, last bit, fixed value or None).
# Start address, LBO and SBO hold encode(x) = (x & 0x3FFFF) >> 4. Bits no row lists are 0.
DESCRIPTOR_BIT_TABLES = {
    "sm90": (
        ("start", 0, 13, None),           # "Matrix start address, encoded"
        ("lbo", 16, 29, None),            # "Leading dimension byte offset, encoded"
        ("sbo", 32, 45, None),            # "Stride dimension byte offset, encoded"
        ("base_offset", 49, 51, None),    # "Matrix base offset"
        ("swizzle", 62, 63, None),        # "Swizzle mode": 0 none, 1 128B, 2 64B, 3 32B
    ),
    "sm100": (
        ("start", 0, 13, None),           # "Matrix start address"
        ("lbo", 16, 29, None),            # "Leading dimension byte offset or absolute address"
        ("sbo", 32, 45, None),            # "Stride dimension byte offset"
        ("fixed", 46, 48, 0b001),         # "Fixed constant value of 0b001"
        ("base_offset", 49, 51, None),    # "Matrix base offset"
        ("lbo_mode", 52, 52, None),       # "Leading dimension stride mode": 0 relative, 1 absolute
        ("fixed_zero", 53, 60, 0),        # "Fixed constant value of 0"
        ("swizzle", 61, 63, None),        # "Swizzling mode": 0 none, 1 128B/32B atom, 2 128B, 4 64B, 6 32B
    ),
}
DESCRIPTOR_BIT_TABLES["sm103"] = DESCRIPTOR_BIT_TABLES["sm100"]
# The fields holding encode(x) = (x & 0x3FFFF) >> 4 (byte values, 16-byte aligned)
DESCRIPTOR_ENCODED_SHIFT = 4
DESCRIPTOR_ENCODED_FIELDS = ("start", "lbo", "sbo")

# --- TMA swizzle modes: PTX ISA 5.5.7 (Swizzling Modes) -----------------------------------------------------
# Each row: the 8 numbered 16-byte cells of one 128-byte shared-memory line in the destination layout
# (cell j shows the number of the chunk that lands there); "... Pattern repeats ..." over the lines.
_ROW = (0, 1, 2, 3, 4, 5, 6, 7)
_PAIRS = (1, 0, 3, 2, 5, 4, 7, 6)
_ATOM32 = ((0, 1, 2, 3, 4, 5, 6, 7), (2, 3, 0, 1, 6, 7, 4, 5), (4, 5, 6, 7, 0, 1, 2, 3), (6, 7, 4, 5, 2, 3, 0, 1))
TMA_SWIZZLE_TABLES = {
    "NONE": (_ROW,),                                                   # no swizzle: every line as is
    "32B": (_ROW, _PAIRS),                                             # "32 byte swizzle mode"
    "64B": (_ROW, _PAIRS, (2, 3, 0, 1, 6, 7, 4, 5), (3, 2, 1, 0, 7, 6, 5, 4)),   # "64 byte swizzle mode"
    "96B": (_ROW, _PAIRS),                                             # "96 byte swizzle mode"
    "128B": (_ROW, _PAIRS, (2, 3, 0, 1, 6, 7, 4, 5), (3, 2, 1, 0, 7, 6, 5, 4),   # "128 byte swizzle mode",
             (4, 5, 6, 7, 0, 1, 2, 3), (5, 4, 7, 6, 1, 0, 3, 2),                 # 16-byte atomicity
             (6, 7, 4, 5, 2, 3, 0, 1), (7, 6, 5, 4, 3, 2, 1, 0)),
    "128B_ATOM_32B": _ATOM32,                                          # "32-byte atomicity sub-mode"
    "128B_ATOM_32B_FLIP_8B": _ATOM32,                                  # the same, plus the 8-byte flip
    "128B_ATOM_64B": (_ROW, (4, 5, 6, 7, 0, 1, 2, 3)),                 # "64-byte atomicity sub-mode"
}
# "a flip of adjacent 8-bytes within the 16-byte data at every alternate shared memory line"
TMA_FLIP_8B_MODES = ("128B_ATOM_32B_FLIP_8B",)
