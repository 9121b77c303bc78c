"""TMA tensor maps: the arguments of the driver's encoders and the rules they must obey.

Sources: the CUDA driver API documentation of cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col and
cuTensorMapEncodeIm2colWide (cuda.h 13.0; "DRV" below), PTX ISA 5.5 (seed 004: 5.5.5 im2col::w,
5.5.6 interleave, 5.5.7 swizzling modes) and the digest REFERENCE.md section 5.

A *parameter document* (the input of `layoutproof tma check`, ../shared/CLI.md) holds one encoder
call's arguments named as in cuda.h:

    {"encode": "tiled" | "im2col" | "im2col_wide", "dataType": "BFLOAT16", "rank": 2,
     "globalAddress": 0x7f0000000000 (or "0x7f0000000000"), "globalDim": [...],
     "globalStrides": [...] (rank - 1 byte strides), "boxDim": [...] (tiled), "elementStrides": [...],
     "interleave": "NONE", "swizzle": "128B", "l2Promotion": "NONE", "oobFill": "NONE",
     im2col:      "pixelBoxLowerCorner": [...], "pixelBoxUpperCorner": [...] (rank - 2 each),
                  "channelsPerPixel", "pixelsPerColumn",
     im2col_wide: "pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth", "channelsPerPixel",
                  "pixelsPerColumn", "mode": "W" | "W128",
     optional:    "smemAddress" (the copy's shared-memory destination, for rule tma.map.smem_alignment),
                  "direction": "global_to_shared" | "shared_to_global" (rule tma.map.copy_direction)}

Two kinds of bad input, kept apart:
  * MALFORMED (`parse_params` raises SpecError; the CLI exits 2): the document cannot even be written as
    the encoder's C arguments: a key missing or unknown to that encoder, a string where a number goes,
    a bool, a negative value in an unsigned argument, a value that does not fit its C type, a list whose
    length does not match the rank, an enum name cuda.h does not have.
  * VIOLATIONS (`check`): expressible arguments that break a rule (globalDim 0, boxDim 300, rank 7 with
    lists of 7). Each constraint rule is flagged in DRIVER_ENFORCED as enforced by the encoder (the call
    fails: a violation, legal = false) or not (the encoder accepts, the problem shows at run time or is
    a documented rule the driver does not check: a warning).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Optional

from spec.tma import swizzle as tma_swizzle
from spec.rule import SpecError, Violation, check_all, parse_number, rule

SUBJECT = "tensormap"
ENCODES = ("tiled", "im2col", "im2col_wide")
IM2COL_ENCODES = ("im2col", "im2col_wide")
ENCODER_NAMES = {"tiled": "cuTensorMapEncodeTiled", "im2col": "cuTensorMapEncodeIm2col",
                 "im2col_wide": "cuTensorMapEncodeIm2colWide"}
MAX_RANK = 5


# --- cuda.h enumerations (names without their CU_TENSOR_MAP_..._ prefix) ----------------------------
@dataclass(frozen=True)
class TmaDataType:
    name: str          # CU_TENSOR_MAP_DATA_TYPE_<name>
    driver_enum: int   # CUtensorMapDataType value
    bits: int          # element size as cuda.h's enum comment gives it ("// 2 bytes", "// 4 bits")
    is_float: bool     # a floating-point type (for the NaN out-of-bounds fill)


DATA_TYPES: dict[str, TmaDataType] = {t.name: t for t in (
    TmaDataType("UINT8", 0, 8, False),
    TmaDataType("UINT16", 1, 16, False),
    TmaDataType("UINT32", 2, 32, False),
    TmaDataType("INT32", 3, 32, False),
    TmaDataType("UINT64", 4, 64, False),
    TmaDataType("INT64", 5, 64, False),
    TmaDataType("FLOAT16", 6, 16, True),
    TmaDataType("FLOAT32", 7, 32, True),
    TmaDataType("FLOAT64", 8, 64, True),
    TmaDataType("BFLOAT16", 9, 16, True),
    TmaDataType("FLOAT32_FTZ", 10, 32, True),
    TmaDataType("TFLOAT32", 11, 32, True),
    TmaDataType("TFLOAT32_FTZ", 12, 32, True),
    # Packed sub-byte types (REFERENCE.md 4; DRV): globalDim counts the individual U4/U6 values.
    TmaDataType("16U4_ALIGN8B", 13, 4, False),    # 16 x U4 in 8 bytes, no gaps
    TmaDataType("16U4_ALIGN16B", 14, 4, False),   # 16 x U4, 8 bytes then an 8-byte gap in smem
    TmaDataType("16U6_ALIGN16B", 15, 6, False),   # 16 x U6, 12 bytes then a 4-byte gap in smem
)}
PACKED_TYPES = ("16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B")
PACKED_16B_TYPES = ("16U4_ALIGN16B", "16U6_ALIGN16B")   # the two padded to 16 bytes

INTERLEAVES = ("NONE", "16B", "32B")                     # CUtensorMapInterleave
L2_PROMOTIONS = ("NONE", "L2_64B", "L2_128B", "L2_256B")  # CUtensorMapL2promotion
OOB_FILLS = ("NONE", "NAN_REQUEST_ZERO_FMA")              # CUtensorMapFloatOOBfill
WIDE_MODES = ("W", "W128")                                # CUtensorMapIm2ColWideMode
# TMA swizzle names: tma_swizzle.MODES less 96B, which has no cuda.h enumerator (REFERENCE.md 1).
SWIZZLES = tuple(name for name, m in tma_swizzle.MODES.items() if m.driver_enum is not None)
DIRECTIONS = tma_swizzle.DIRECTIONS

COMPUTE_CAPABILITY = {"sm90": (9, 0), "sm100": (10, 0), "sm103": (10, 3)}


def data_type_info(name: str) -> TmaDataType:
    return DATA_TYPES[name]


def is_sm100_or_later(arch: str) -> bool:
    return COMPUTE_CAPABILITY[arch] >= (10, 0)


# --- Definitions --------------------------------------------------------------------------------------
PARAMS = rule(
    "tma.map.params", "DRV cuTensorMapEncodeTiled / Im2col / Im2colWide; CLI.md tma check",
    "A tensor-map parameter document holds exactly the arguments of one encoder call, named as in cuda.h; "
    "a document that cannot be written as those C arguments (missing or unknown key, wrong type, negative "
    "unsigned value, value that does not fit its C type, list length not matching the rank, unknown enum "
    "name) is malformed, not a violation.")
DATA_TYPE_TABLE = rule(
    "tma.map.data_types", "DRV CUtensorMapDataType; REFERENCE.md 4",
    "CUtensorMapDataType: UINT8 0 (1 byte), UINT16 1 (2), UINT32 2 (4), INT32 3 (4), UINT64 4 (8), INT64 5 "
    "(8), FLOAT16 6 (2), FLOAT32 7 (4), FLOAT64 8 (8), BFLOAT16 9 (2), FLOAT32_FTZ 10 (4), TFLOAT32 11 (4), "
    "TFLOAT32_FTZ 12 (4), 16U4_ALIGN8B 13 (4 bits), 16U4_ALIGN16B 14 (4 bits), 16U6_ALIGN16B 15 (6 bits); "
    "the floating-point types are FLOAT16/32/64, BFLOAT16, FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ.",
    note="Element sizes are cuda.h's enum comments; for the packed types that is the size of one value "
         "in global memory (no gaps there), which is what the box and channel byte rules multiply by.")
ARCH = rule(
    "tma.map.arch", "DRV (tensor maps need compute capability 9.0 or higher)",
    "Architectures: sm90 = compute capability 9.0, sm100 = 10.0, sm103 = 10.3.")


# --- Constraint rules, in the order of the DRV parameter list -----------------------------------------
def _map_rule(id: str, source: str, statement: str, **kw):
    return rule(id, source, statement, subject=SUBJECT, stack_depth=2, **kw)


RANK = _map_rule(
    "tma.map.rank", "DRV cuTensorMapEncodeTiled (tensorRank); PTX 5.5.1; REFERENCE.md 5",
    "tensorRank is non-zero and at most 5 (tensors are 1D to 5D).")
INTERLEAVE_RANK = _map_rule(
    "tma.map.interleave_rank", "DRV (tensorRank); PTX 5.5.6; REFERENCE.md 5",
    "With interleave 16B or 32B, tensorRank is at least 3 (interleaved layouts are 3D, 4D or 5D only).")
IM2COL_RANK = _map_rule(
    "tma.map.im2col.rank", "DRV cuTensorMapEncodeIm2col / Im2colWide (tensorRank); REFERENCE.md 5",
    "im2col and im2col_wide maps have tensorRank 3, 4 or 5.")
GLOBAL_ADDRESS_ALIGNMENT = _map_rule(
    "tma.map.global_address_alignment", "DRV (globalAddress); REFERENCE.md 5",
    "globalAddress is 16-byte aligned; 32-byte aligned with interleave 32B or dataType 16U4_ALIGN16B / "
    "16U6_ALIGN16B.")
GLOBAL_DIM_RANGE = _map_rule(
    "tma.map.global_dim_range", "DRV (globalDim); REFERENCE.md 5",
    "Every globalDim[i] is in [1, 2^32].")
PACKED_GLOBAL_DIM = _map_rule(
    "tma.map.packed_global_dim", "DRV (globalDim); REFERENCE.md 5",
    "globalDim[0] (counting individual U4/U6 values) is a multiple of 128 for 16U4_ALIGN16B and "
    "16U6_ALIGN16B, a multiple of 2 for 16U4_ALIGN8B.")
GLOBAL_STRIDE_ALIGNMENT = _map_rule(
    "tma.map.global_stride_alignment", "DRV (globalStrides); REFERENCE.md 5",
    "Every globalStrides[i] (bytes) is a multiple of 16; of 32 with interleave 32B or dataType "
    "16U4_ALIGN16B / 16U6_ALIGN16B.",
    note="A stride of 0 is a multiple of 16 and is not flagged: DRV states no lower bound.")
GLOBAL_STRIDE_RANGE = _map_rule(
    "tma.map.global_stride_range", "DRV (globalStrides); REFERENCE.md 5",
    "Every globalStrides[i] is less than 2^40.")
ELEMENT_STRIDES_RANGE = _map_rule(
    "tma.map.element_strides_range", "DRV (elementStrides); REFERENCE.md 5",
    "Every elementStrides[i] is in [1, 8].")
ELEMENT_STRIDES_INNER = _map_rule(
    "tma.map.element_strides_inner", "REFERENCE.md 5; DRV (elementStrides)",
    "Without interleave, elementStrides[0] is 1: TMA has no traversal stride along dimension 0.",
    evidence="interpretation",
    note="REFERENCE.md 5 says the dim-0 stride 'must be 1 without interleave'; DRV says the first element "
         "'is ignored since TMA doesn't support the stride for dimension zero', i.e. the encoder accepts "
         "another value and the copy then loads boxDim[0] elements, not ceil(boxDim[0] / stride): hence a "
         "warning, not a refusal. Hardware (the encoder's decision) settles it.")
INTERLEAVE_SWIZZLE = _map_rule(
    "tma.map.interleave_swizzle", "DRV (swizzle); REFERENCE.md 5; H100 driver",
    "With interleave 32B, swizzle is 32B.", evidence="driver",
    note="Documented, but the H100's driver (580.159.04) encodes interleave 32B with swizzle NONE and 128B "
         "too (tests/hardware/tensormap_encode_sm90.json.gz): a warning, not a refusal.")
INTERLEAVE_DTYPE = _map_rule(
    "tma.map.interleave_dtype", "DRV (interleave); REFERENCE.md 5",
    "dataType 16U6_ALIGN16B requires interleave NONE.")
OOB_NAN_DTYPE = _map_rule(
    "tma.map.oob_nan_dtype", "DRV (oobFill); REFERENCE.md 5",
    "oobFill NAN_REQUEST_ZERO_FMA needs a floating-point dataType, not a packed type.")
BOX_RANGE = _map_rule(
    "tma.map.box_range", "DRV cuTensorMapEncodeTiled (boxDim); REFERENCE.md 5",
    "Tiled: every boxDim[i] is in [1, 256].")
BOX_INNER_16B = _map_rule(
    "tma.map.box_inner_16B", "DRV cuTensorMapEncodeTiled (boxDim); REFERENCE.md 5; H100 driver",
    "Tiled: boxDim[0] * element size is a multiple of 16 bytes, with or without interleave.",
    evidence="driver",
    note="DRV states it for interleave NONE only; the H100's driver (580.159.04, "
         "tests/hardware/tensormap_encode_sm90.json.gz) also refuses interleaved boxes whose row is not a "
         "multiple of 16 bytes (FLOAT16 16B-interleaved boxDim[0] 1, 2, 4, 12; UINT8 8).")
BOX_SWIZZLE_SPAN = _map_rule(
    "tma.map.box_swizzle_span", "DRV cuTensorMapEncodeTiled (interleave); REFERENCE.md 5",
    "Tiled, interleave NONE, swizzle not NONE: boxDim[0] * element size is at most the swizzle span "
    "(32B: 32, 64B: 64, every 128B mode: 128 bytes).")
PACKED_BOX = _map_rule(
    "tma.map.packed_box", "DRV cuTensorMapEncodeTiled (boxDim); REFERENCE.md 5",
    "Tiled, dataType 16U4_ALIGN16B or 16U6_ALIGN16B: boxDim[0] is 128.")
PACKED_SWIZZLE = _map_rule(
    "tma.map.packed_swizzle", "DRV (swizzle); REFERENCE.md 5",
    "16U6_ALIGN16B takes swizzle NONE, 128B, 128B_ATOM_32B or 128B_ATOM_64B (the last for stores only); "
    "16U4_ALIGN16B takes NONE, 128B or 128B_ATOM_32B (loads only).")
DTYPE_ARCH = _map_rule(
    "tma.map.dtype_arch", "REFERENCE.md 4; DRV (CUtensorMapDataType)",
    "The packed sub-byte dataTypes (16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B) need sm100 or later.")
SWIZZLE_ARCH = _map_rule(
    "tma.map.swizzle_arch", "REFERENCE.md 1; PTX 5.5.7",
    "The 128B atomicity sub-modes (128B_ATOM_32B, 128B_ATOM_32B_FLIP_8B, 128B_ATOM_64B) need sm100 or later.")
IM2COL_CORNER_RANGE = _map_rule(
    "tma.map.im2col.corner_range", "DRV cuTensorMapEncodeIm2col (pixelBoxLowerCorner/UpperCorner); "
    "REFERENCE.md 5",
    "im2col: every pixelBoxLowerCorner / pixelBoxUpperCorner entry is in [-2^15, 2^15 - 1] for rank 3, "
    "[-2^7, 2^7 - 1] for rank 4, [-2^4, 2^4 - 1] for rank 5.")
IM2COL_BOX_AREA = _map_rule(
    "tma.map.im2col.box_area", "DRV cuTensorMapEncodeIm2col / Im2colWide; REFERENCE.md 5",
    "The im2col bounding box has non-zero area: along every spatial dimension its size "
    "globalDim[1 + i] + upperCorner[i] - lowerCorner[i] is at least 1 (im2col_wide: the W dimension, "
    "globalDim[1], with the width corners).",
    evidence="interpretation",
    note="DRV says only 'must have non-zero area'. The box size used here reads the lower corner as an "
         "offset from coordinate 0 and the upper corner as an offset from the last coordinate "
         "(globalDim - 1), as Triton's im2col tutorial and CUTLASS's corners (lower = -padding, upper = "
         "padding - (filter - 1) * dilation) do; corner i belongs to spatial dimension i + 1 in the order "
         "W, H, D (CUTLASS compute_lower_corner_whd), although DRV lists the offsets as {D, H, W}.")
IM2COL_CHANNELS_RANGE = _map_rule(
    "tma.map.im2col.channels_range", "DRV cuTensorMapEncodeIm2col / Im2colWide (channelsPerPixel); "
    "REFERENCE.md 5",
    "channelsPerPixel is in [1, 256]; for 16U4_ALIGN16B and 16U6_ALIGN16B it is 128.",
    note="REFERENCE.md 5 writes '<= 256 (128 for packed 16B types)'; DRV says 'must be 128' for those types. "
         "Zero channels is read as out of range (nothing to load).")
IM2COL_PIXELS_RANGE = _map_rule(
    "tma.map.im2col.pixels_range", "DRV cuTensorMapEncodeIm2col / Im2colWide (pixelsPerColumn); "
    "REFERENCE.md 5",
    "pixelsPerColumn is in [1, 1024], in im2col_wide mode W128 too (which loads 128 pixels whatever it says).",
    evidence="driver",
    note="DRV states only the upper bound; the H100's driver refuses 0 (and 1025), also for mode W128, "
         "which ignores the value otherwise (tests/hardware/tensormap_encode_sm90.json.gz).")
IM2COL_CHANNEL_SPAN = _map_rule(
    "tma.map.im2col.channel_span", "DRV cuTensorMapEncodeIm2col / Im2colWide (interleave); REFERENCE.md 5",
    "im2col, interleave NONE, swizzle not NONE: channelsPerPixel * element size is at most the swizzle span "
    "(32B: 32, 64B: 64, every 128B mode: 128 bytes).")
WIDE_ARCH = _map_rule(
    "tma.map.im2col_wide.arch", "DRV cuTensorMapEncodeIm2colWide; REFERENCE.md 5; H100 driver",
    "im2col_wide maps need compute capability 10.0 or higher (sm100, sm103).", evidence="driver",
    note="DRV says the API is only supported from compute capability 10.0, yet the H100's driver "
         "(580.159.04) encodes im2col_wide maps (tests/hardware/tensormap_encode_sm90.json.gz); only the "
         ".im2col::w copies that use them need sm100. On sm90 a warning, not a refusal.")
IM2COL_CHANNELS_16B = _map_rule(
    "tma.map.im2col.channels_16B", "H100 driver (cuTensorMapEncodeIm2col)",
    "im2col and im2col_wide: channelsPerPixel * element size is a multiple of 16 bytes (one pixel's row, "
    "like a tiled box's boxDim[0]).", evidence="driver",
    note="Not in DRV's parameter notes; the H100's driver (580.159.04) refuses 1 and 4 FLOAT16 channels "
         "and 1 FLOAT32 channel and accepts 8 FLOAT16 and 4 FLOAT32 (tests/hardware/tensormap_encode_sm90.json.gz).")
IM2COL_SPATIAL_DIM = _map_rule(
    "tma.map.im2col.spatial_dim_range", "H100 driver (cuTensorMapEncodeIm2col / Im2colWide)",
    "The spatial globalDim entries (W, H, D: dimensions 1 .. rank - 2) are at most 2^31 for im2col maps "
    "and at most 2^31 - 1 for im2col_wide maps.",
    evidence="driver",
    note="DRV allows globalDim up to 2^32 for every map; the H100's driver (580.159.04) accepts 2^31 and "
         "refuses 2^31 + 1 in an im2col map's spatial dimension, and accepts 2^31 - 1 and refuses 2^31 in an "
         "im2col_wide map's (tests/hardware/tensormap_encode_sm90.json.gz). One oddity: it accepted W = 2^32 "
         "for one W128 map (while refusing 2^31 .. 2^32 - 1), presumably a 32-bit truncation; layoutproof "
         "refuses it.")
BOX_BYTES = _map_rule(
    "tma.map.box_bytes", "H100 driver (cuTensorMapEncodeTiled / Im2col / Im2colWide)",
    "The driver's size check: at most 228 KiB (233472 bytes, the shared memory of one SM), counted tiled as "
    "boxDim[0] * floor(boxDim[1] / elementStrides[1]) * ... * element size; im2col and im2col_wide, "
    "channelsPerPixel * pixelsPerColumn * element size (pixelsPerColumn as given, even in mode W128). "
    "Packed types count their shared-memory footprint (16U4_ALIGN16B, 16U6_ALIGN16B: 16 bytes per 16 values).",
    evidence="driver",
    note="Not in DRV; the H100's driver (580.159.04) accepts FLOAT16 boxes of 228 KiB and refuses 232 KiB, "
         "with and without interleave (tests/hardware/tensormap_encode_sm90.json.gz). It divides by the "
         "traversal strides rounding *down*: BFLOAT16 boxes [64, 3, 200, 8] with elementStrides [1, 2, 1, 1] "
         "(200 KiB counted, 400 KiB loaded) and [64, 32, 1, 115] with [1, 2, 6, 1] (a box dimension below "
         "its stride counts 0) are accepted, [64, 3, 256, 8] with [1, 2, 1, 1] is refused "
         "(tests/hardware/fuzz_driver_sm90.json.gz, found by `layoutproof fuzz --against`). It refuses a W128 "
         "map of 128 FLOAT64 channels with pixelsPerColumn 256 (256 KiB).")
BOX_BYTES_LOADED = _map_rule(
    "tma.map.box_bytes_loaded", "PTX 5.5.3 (traversal strides: ceil(boxDim / elementStrides) elements); "
    "H100 driver",
    "A tiled box that passes the driver's count (tma.map.box_bytes) also brings at most 228 KiB: "
    "boxDim[0] * ceil(boxDim[1] / elementStrides[1]) * ... * element size.",
    note="The driver counts with floor (tma.map.box_bytes) and so accepts boxes that load more than 228 KiB "
         "when a box dimension is not a multiple of its stride: a warning, not a refusal. What such a load "
         "does has not been observed.")
WIDE_SWIZZLE = _map_rule(
    "tma.map.im2col_wide.swizzle", "DRV cuTensorMapEncodeIm2colWide (swizzle); PTX 5.5.5; REFERENCE.md 5",
    "im2col_wide: swizzle is 64B, 128B or 128B_ATOM_32B.")
WIDE_INTERLEAVE = _map_rule(
    "tma.map.im2col_wide.interleave", "PTX 5.5.6; REFERENCE.md 5",
    "im2col_wide: interleave is NONE.")
WIDE_CORNER_RANGE = _map_rule(
    "tma.map.im2col_wide.corner_range", "DRV cuTensorMapEncodeIm2colWide; REFERENCE.md 5",
    "im2col_wide: pixelBoxLowerCornerWidth and pixelBoxUpperCornerWidth are in [-2^15, 2^15 - 1]; the "
    "sm90 driver holds them to the im2col corner range of the rank.", evidence="driver",
    note="DRV gives [-2^15, 2^15 - 1]; the H100's driver (580.159.04) accepts a rank-4 map's width corners "
         "only in [-128, 127], the im2col rank-4 range (tests/hardware/tensormap_encode_sm90.json.gz).")
SMEM_ALIGNMENT = _map_rule(
    "tma.map.smem_alignment", "CUDA programming guide (TMA); PTX 5.5.3.1, 5.5.7; REFERENCE.md 5",
    "The shared-memory destination (smemAddress, when given) is 128-byte aligned and, with a swizzle, "
    "aligned to the swizzle's repeat (32B: 256, 64B: 512, every 128B mode: 1024 bytes).",
    note="PTX requires only 16 bytes; the programming guide asks 128. Off the repeat boundary the swizzle "
         "phase follows the absolute address (REFERENCE.md 5), so a reader assuming phase 0 reads wrong "
         "data. Not an encoder argument: a warning.")
COPY_DIRECTION = _map_rule(
    "tma.map.copy_direction", "PTX 5.5.7; DRV (swizzle); REFERENCE.md 1, 5",
    "When the copy direction is given: 128B_ATOM_32B_FLIP_8B and dataType 16U4_ALIGN16B are for "
    "global -> shared copies only; 16U6_ALIGN16B with 128B_ATOM_64B for shared -> global copies only.",
    note="A property of the copy instruction, not of the map: the encoder cannot see it (a warning).")

# Whether the driver's encoder refuses arguments that break the rule (True: a violation, the call
# fails) or accepts them (False: a warning). The default is the manual's: every rule on the encoder's
# arguments is enforced; what concerns the copy instruction (destination, direction) is not, nor is
# elementStrides[0], which DRV calls ignored. Hardware evidence (the encoder's accept / reject decisions)
# overrides an entry HERE, and only here.
DRIVER_ENFORCED: dict[str, bool] = {
    RANK.id: True,
    INTERLEAVE_RANK.id: True,
    IM2COL_RANK.id: True,
    GLOBAL_ADDRESS_ALIGNMENT.id: True,
    GLOBAL_DIM_RANGE.id: True,
    PACKED_GLOBAL_DIM.id: True,
    GLOBAL_STRIDE_ALIGNMENT.id: True,
    GLOBAL_STRIDE_RANGE.id: True,
    ELEMENT_STRIDES_RANGE.id: True,
    ELEMENT_STRIDES_INNER.id: False,
    INTERLEAVE_SWIZZLE.id: True,
    INTERLEAVE_DTYPE.id: True,
    OOB_NAN_DTYPE.id: True,
    BOX_RANGE.id: True,
    BOX_INNER_16B.id: True,
    BOX_SWIZZLE_SPAN.id: True,
    PACKED_BOX.id: True,
    PACKED_SWIZZLE.id: True,
    DTYPE_ARCH.id: True,
    SWIZZLE_ARCH.id: True,
    IM2COL_CORNER_RANGE.id: True,
    IM2COL_BOX_AREA.id: True,
    IM2COL_CHANNELS_RANGE.id: True,
    IM2COL_PIXELS_RANGE.id: True,
    IM2COL_CHANNEL_SPAN.id: True,
    WIDE_ARCH.id: True,
    IM2COL_CHANNELS_16B.id: True,
    IM2COL_SPATIAL_DIM.id: True,
    BOX_BYTES.id: True,
    BOX_BYTES_LOADED.id: False,
    WIDE_SWIZZLE.id: True,
    WIDE_INTERLEAVE.id: True,
    WIDE_CORNER_RANGE.id: True,
    SMEM_ALIGNMENT.id: False,
    COPY_DIRECTION.id: False,
}


# What a real driver showed, per architecture: rules its encoder does not enforce although the manual
# states them (the call succeeds; the rule becomes a warning). sm90: the H100's driver 580.159.04,
# tests/hardware/tensormap_encode_sm90.json.gz (replayed by tests/test_encoder_replay.py). It encodes
# im2col_wide maps (for which sm90 has no copy instruction) without checking their swizzle or
# interleave, and interleave 32B with any swizzle. No sm100 driver has been observed: there the
# manual's DRIVER_ENFORCED stands.
NOT_ENFORCED_BY_DRIVER: dict[str, frozenset] = {
    "sm90": frozenset({INTERLEAVE_SWIZZLE.id, WIDE_ARCH.id, WIDE_SWIZZLE.id, WIDE_INTERLEAVE.id}),
}


def enforced(rule_id: str, arch: str = "sm100") -> bool:
    """Does the driver's encoder on this architecture refuse arguments that break this rule?"""
    return DRIVER_ENFORCED[rule_id] and rule_id not in NOT_ENFORCED_BY_DRIVER.get(arch, frozenset())


# --- The parameters ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TensorMapParams:
    encode: str
    data_type: str
    rank: int
    global_address: int
    global_dim: tuple
    global_strides: tuple
    element_strides: tuple
    interleave: str
    swizzle: str
    l2_promotion: str
    oob_fill: str
    box_dim: Optional[tuple] = None                     # tiled
    pixel_box_lower_corner: Optional[tuple] = None      # im2col
    pixel_box_upper_corner: Optional[tuple] = None      # im2col
    pixel_box_lower_corner_width: Optional[int] = None  # im2col_wide
    pixel_box_upper_corner_width: Optional[int] = None  # im2col_wide
    channels_per_pixel: Optional[int] = None            # im2col, im2col_wide
    pixels_per_column: Optional[int] = None             # im2col, im2col_wide
    mode: Optional[str] = None                          # im2col_wide
    smem_address: Optional[int] = None                  # optional: the copy's destination
    direction: Optional[str] = None                     # optional: the copy's direction

    @property
    def dtype(self) -> TmaDataType:
        return DATA_TYPES[self.data_type]

    @property
    def is_im2col(self) -> bool:
        return self.encode in IM2COL_ENCODES


# Document key -> TensorMapParams field, for each encoder (in the C argument order).
COMMON_KEYS = {"encode": "encode", "dataType": "data_type", "rank": "rank", "globalAddress": "global_address",
               "globalDim": "global_dim", "globalStrides": "global_strides"}
TAIL_KEYS = {"elementStrides": "element_strides", "interleave": "interleave", "swizzle": "swizzle",
             "l2Promotion": "l2_promotion", "oobFill": "oob_fill"}
ENCODE_KEYS = {
    "tiled": {"boxDim": "box_dim"},
    "im2col": {"pixelBoxLowerCorner": "pixel_box_lower_corner", "pixelBoxUpperCorner": "pixel_box_upper_corner",
               "channelsPerPixel": "channels_per_pixel", "pixelsPerColumn": "pixels_per_column"},
    "im2col_wide": {"pixelBoxLowerCornerWidth": "pixel_box_lower_corner_width",
                    "pixelBoxUpperCornerWidth": "pixel_box_upper_corner_width",
                    "channelsPerPixel": "channels_per_pixel", "pixelsPerColumn": "pixels_per_column",
                    "mode": "mode"},
}
OPTIONAL_KEYS = {"smemAddress": "smem_address", "direction": "direction"}

# The rule a malformed value of each key is reported under (default: tma.map.params).
_FIELD_RULES = {
    "dataType": DATA_TYPE_TABLE, "rank": RANK, "globalAddress": GLOBAL_ADDRESS_ALIGNMENT,
    "globalDim": GLOBAL_DIM_RANGE, "globalStrides": GLOBAL_STRIDE_RANGE, "boxDim": BOX_RANGE,
    "elementStrides": ELEMENT_STRIDES_RANGE, "swizzle": tma_swizzle.TMA_SWIZZLE_MODES,
    "pixelBoxLowerCorner": IM2COL_CORNER_RANGE, "pixelBoxUpperCorner": IM2COL_CORNER_RANGE,
    "pixelBoxLowerCornerWidth": WIDE_CORNER_RANGE, "pixelBoxUpperCornerWidth": WIDE_CORNER_RANGE,
    "channelsPerPixel": IM2COL_CHANNELS_RANGE, "pixelsPerColumn": IM2COL_PIXELS_RANGE,
    "smemAddress": SMEM_ALIGNMENT, "direction": COPY_DIRECTION,
}


def document_keys(encode: str) -> dict:
    """Document key -> field, for every key an `encode` document must hold (optional keys excluded)."""
    return {**COMMON_KEYS, **ENCODE_KEYS[encode], **TAIL_KEYS}


def _malformed(key: str, value, problem: str) -> SpecError:
    return SpecError(key, value, problem, _FIELD_RULES.get(key.split("[")[0], PARAMS).id)


def _is_integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _c_integer(key: str, value, bits: int, signed: bool) -> int:
    """A JSON integer that fits a C integer of `bits` bits (cuuint32_t, cuuint64_t, int)."""
    if not _is_integer(value):
        raise _malformed(key, value, "must be an integer")
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if value < 0 and not signed:
        raise _malformed(key, value, f"must be non-negative (cuuint{bits}_t)")
    if not low <= value <= high:
        raise _malformed(key, value, f"does not fit the C type ({'int' if signed else f'cuuint{bits}_t'})")
    return value


def _c_integer_list(key: str, value, bits: int, signed: bool, length: int, rank: int) -> tuple:
    if not isinstance(value, list):
        raise _malformed(key, value, "must be a list of integers")
    if len(value) != length:
        raise _malformed(key, value, f"has {len(value)} entries; rank {rank} needs {length}")
    return tuple(_c_integer(f"{key}[{i}]", v, bits, signed) for i, v in enumerate(value))


def _address(key: str, value) -> int:
    """A 64-bit byte address: a JSON integer, or a string in decimal or 0x-hex."""
    if isinstance(value, str):
        try:
            value = parse_number(value)
        except ValueError:
            raise _malformed(key, value, "not a decimal or 0x-hex number") from None
    return _c_integer(key, value, 64, signed=False)


def _enum(key: str, value, names) -> str:
    if not isinstance(value, str) or value not in names:
        raise _malformed(key, value, f"expected one of {', '.join(names)}")
    return value


def _swizzle(value) -> str:
    if value == "96B":
        raise _malformed("swizzle", value, "96B has no cuda.h CUtensorMapSwizzle enumerator (PTX "
                                           "tensormap.replace only); expected one of " + ", ".join(SWIZZLES))
    return _enum("swizzle", value, SWIZZLES)


class _Document:
    """A parameter document being read for one encoder: each getter returns the key's value as the C
    argument it stands for, or raises SpecError naming the key."""

    def __init__(self, document: dict, encode: str):
        self.document = document
        self.encode = encode
        self.rank = self.unsigned("rank")   # the list lengths below depend on it

    def value(self, key: str):
        if key not in self.document:
            raise _malformed(key, None, f"missing (an argument of {ENCODER_NAMES[self.encode]})")
        return self.document[key]

    def unsigned(self, key: str, bits: int = 32) -> int:
        return _c_integer(key, self.value(key), bits, signed=False)

    def signed(self, key: str) -> int:
        return _c_integer(key, self.value(key), 32, signed=True)

    def unsigned_list(self, key: str, bits: int, length: int) -> tuple:
        return _c_integer_list(key, self.value(key), bits, False, length, self.rank)

    def signed_list(self, key: str, length: int) -> tuple:
        return _c_integer_list(key, self.value(key), 32, True, length, self.rank)

    def enum(self, key: str, names) -> str:
        return _enum(key, self.value(key), names)


def _check_keys(document: dict, encode: str) -> None:
    allowed = set(document_keys(encode)) | set(OPTIONAL_KEYS)
    for key in document:
        if key not in allowed:
            raise SpecError(str(key), document[key], f"not an argument of {ENCODER_NAMES[encode]}", PARAMS.id)


def _common_fields(d: _Document) -> dict:
    """The arguments every encoder takes (DRV parameter lists)."""
    return dict(
        encode=d.encode,
        data_type=d.enum("dataType", DATA_TYPES),
        rank=d.rank,
        global_address=_address("globalAddress", d.value("globalAddress")),
        global_dim=d.unsigned_list("globalDim", 64, d.rank),
        global_strides=d.unsigned_list("globalStrides", 64, max(d.rank - 1, 0)),
        element_strides=d.unsigned_list("elementStrides", 32, d.rank),
        interleave=d.enum("interleave", INTERLEAVES),
        swizzle=_swizzle(d.value("swizzle")),
        l2_promotion=d.enum("l2Promotion", L2_PROMOTIONS),
        oob_fill=d.enum("oobFill", OOB_FILLS),
    )


def _tiled_fields(d: _Document) -> dict:
    return dict(box_dim=d.unsigned_list("boxDim", 32, d.rank))


def _im2col_fields(d: _Document) -> dict:
    spatial = max(d.rank - 2, 0)   # one corner offset per spatial dimension (D, H, W)
    return dict(pixel_box_lower_corner=d.signed_list("pixelBoxLowerCorner", spatial),
                pixel_box_upper_corner=d.signed_list("pixelBoxUpperCorner", spatial),
                channels_per_pixel=d.unsigned("channelsPerPixel"),
                pixels_per_column=d.unsigned("pixelsPerColumn"))


def _im2col_wide_fields(d: _Document) -> dict:
    return dict(pixel_box_lower_corner_width=d.signed("pixelBoxLowerCornerWidth"),
                pixel_box_upper_corner_width=d.signed("pixelBoxUpperCornerWidth"),
                channels_per_pixel=d.unsigned("channelsPerPixel"),
                pixels_per_column=d.unsigned("pixelsPerColumn"),
                mode=d.enum("mode", WIDE_MODES))


_ENCODE_FIELDS = {"tiled": _tiled_fields, "im2col": _im2col_fields, "im2col_wide": _im2col_wide_fields}


def _optional_fields(document: dict) -> dict:
    fields = {}
    if "smemAddress" in document:
        fields["smem_address"] = _address("smemAddress", document["smemAddress"])
    if "direction" in document:
        fields["direction"] = _enum("direction", document["direction"], DIRECTIONS)
    return fields


def parse_params(document: dict) -> TensorMapParams:
    """The encoder call a parameter document describes; SpecError when it is malformed."""
    if not isinstance(document, dict):
        raise _malformed("params", document, "a parameter document is a JSON object")
    if "encode" not in document:
        raise _malformed("encode", None, "missing (expected one of " + ", ".join(ENCODES) + ")")
    encode = _enum("encode", document["encode"], ENCODES)
    _check_keys(document, encode)
    d = _Document(document, encode)
    fields = _common_fields(d)
    fields.update(_ENCODE_FIELDS[encode](d))
    fields.update(_optional_fields(document))
    return TensorMapParams(**fields)


def to_document(params: TensorMapParams) -> dict:
    """The parameter document of `params` (parse_params(to_document(p)) == p)."""
    values = asdict(params)
    keys = {**document_keys(params.encode), **OPTIONAL_KEYS}
    document = {}
    for key, field_name in keys.items():
        value = values[field_name]
        if value is None and key in OPTIONAL_KEYS:
            continue
        document[key] = list(value) if isinstance(value, tuple) else value
    return document


# --- Quantities the rules use -------------------------------------------------------------------------
def required_global_alignment(p: TensorMapParams) -> int:
    """globalAddress and globalStrides alignment (DRV): 32 with interleave 32B or a 16B-padded packed type."""
    return 32 if p.interleave == "32B" or p.data_type in PACKED_16B_TYPES else 16


INTERLEAVE_LAYOUT = rule(
    "tma.map.interleave_layout", "PTX 5.5.6 (seed 004); DRV (interleave)",
    "Interleave NONE is NDHWC (C innermost). Interleave 16B is NC/8DHWC8 and 32B is NC/16DHWC16: the "
    "channels are cut into slices of 16 or 32 bytes (8 two-byte or 16 four-byte channels), a slice is "
    "innermost, and the last slice is padded with zeros. The map's dimensions, innermost first, are then "
    "(slice, W, H, D, C / slice, N).",
    note="Seed 004 calls the two '8 byte' and '16 byte' interleave and says C16 takes 32 bytes 'assuming 4B "
         "per channel' (16 x 4 = 64); DRV's reading is taken: a slice is 16 bytes (16B) or 32 bytes (32B), "
         "so NC/16HWC16 holds 16 two-byte channels. The layouts are not observed on hardware here.")
INTERLEAVE_SLICE_BYTES = {"16B": 16, "32B": 32}


def interleaved_layout(n: int, c: int, spatial, element_bytes: int, interleave: str) -> dict:
    """Rule tma.map.interleave_layout: the globalDim and globalStrides (bytes) of an N x C x spatial tensor
    (spatial = W[, H[, D]]) stored in the layout `interleave` names, packed; "channels_padded" is C
    rounded up to whole slices. Raises SpecError for a layout the encoder cannot describe."""
    spatial = list(spatial)
    if interleave == "NONE":
        dims, padded = [c] + spatial + [n], c
    elif interleave in INTERLEAVE_SLICE_BYTES:
        slice_bytes = INTERLEAVE_SLICE_BYTES[interleave]
        if slice_bytes % element_bytes:
            raise SpecError("element_bytes", element_bytes, f"does not divide the {slice_bytes}-byte slice",
                            INTERLEAVE_LAYOUT.id)
        per_slice = slice_bytes // element_bytes
        slices = -(-c // per_slice)
        dims, padded = [per_slice] + spatial + [slices, n], slices * per_slice
    else:
        raise SpecError("interleave", interleave, "expected NONE, 16B or 32B", INTERLEAVE_LAYOUT.id)
    if len(dims) > MAX_RANK:
        raise SpecError("spatial", ",".join(map(str, spatial)), f"{len(dims)} dimensions; a map has at most "
                        f"{MAX_RANK}", INTERLEAVE_LAYOUT.id)
    strides, size = [], dims[0] * element_bytes
    for d in dims[1:]:
        strides.append(size)
        size *= d
    return {"globalDim": dims, "globalStrides": strides, "channels_padded": padded}


def swizzle_span(swizzle: str) -> Optional[int]:
    """Bytes one swizzled row may hold (32B 32, 64B 64, 128B* 128); None without a swizzle."""
    return tma_swizzle.mode_info(swizzle).span


# Shared-memory footprint of the packed types (REFERENCE.md 4; DRV): 16 x U4 or U6 values fill a 16-byte
# slot in the ALIGN16B types (8 bits per value there), 8 bytes in 16U4_ALIGN8B.
FOOTPRINT_BITS = {"16U4_ALIGN8B": 4, "16U4_ALIGN16B": 8, "16U6_ALIGN16B": 8}


def footprint_bits(p: TensorMapParams, count: int) -> int:
    """Bits `count` elements take in shared memory (the packed 16-byte types keep their gaps)."""
    return count * FOOTPRINT_BITS.get(p.data_type, p.dtype.bits)


def inner_bits(p: TensorMapParams, count: int) -> int:
    """Bits `count` elements of the map's dataType take in shared memory: the element size from cuda.h,
    but the packed 16-byte types keep their gaps (16 values per 16 bytes: footprint_bits). The two differ
    only where boxDim[0] or channelsPerPixel is not 128, which tma.map.packed_box and
    tma.map.im2col.channels_range refuse anyway; with them broken, the row checks count the real row."""
    return footprint_bits(p, count)


def _bytes(bits: int) -> str:
    return str(bits // 8) if bits % 8 == 0 else f"{bits / 8:g}"


def corner_range(rank: int) -> Optional[tuple]:
    """The im2col corner range for a rank (DRV): rank 3 [-2^15, 2^15-1], 4 [-2^7, 2^7-1], 5 [-2^4, 2^4-1]."""
    bits = {3: 15, 4: 7, 5: 4}.get(rank)
    return None if bits is None else (-(1 << bits), (1 << bits) - 1)


WIDE_CORNER_LIMITS = (-(1 << 15), (1 << 15) - 1)


def bounding_box_sizes(p: TensorMapParams) -> tuple:
    """Size of the im2col bounding box along each spatial dimension (W, H, D = globalDim[1], [2], [3]):
    from lowerCorner (an offset from coordinate 0) to globalDim - 1 + upperCorner (an offset from the
    last coordinate). im2col_wide: the W dimension only (D and H boxes are 1 by definition)."""
    if p.encode == "im2col":
        lowers, uppers = p.pixel_box_lower_corner, p.pixel_box_upper_corner
    else:
        lowers, uppers = (p.pixel_box_lower_corner_width,), (p.pixel_box_upper_corner_width,)
    spatial = p.global_dim[1:1 + len(lowers)]
    return tuple(size + upper - lower for size, lower, upper in zip(spatial, lowers, uppers))


SMEM_DESTINATION_ALIGNMENT = 128  # the CUDA programming guide's TMA destination alignment


def smem_alignment_required(swizzle: str) -> int:
    """The destination alignment for a swizzle: 128, the pattern's repeat (PTX 5.5.7) and the atomicity
    alignment of the 32/64-byte atomicity sub-modes, whichever is largest."""
    return max(SMEM_DESTINATION_ALIGNMENT, tma_swizzle.repeat_boundary(swizzle),
               tma_swizzle.alignment_required(swizzle))


def _first_outside(name: str, values, low: int, high: int, shown: str, first_index: int = 0) -> Optional[str]:
    for i, v in enumerate(values, start=first_index):
        if not low <= v <= high:
            return f"{name}[{i}] = {v} is not in {shown}"
    return None


# --- The subject the rules look at: one encoder call on one architecture --------------------------------
@dataclass(frozen=True)
class EncodeCall:
    params: TensorMapParams
    arch: str


@RANK.checker
def _rank(call: EncodeCall) -> Optional[str]:
    rank = call.params.rank
    return None if 1 <= rank <= MAX_RANK else f"tensorRank {rank} is not in [1, {MAX_RANK}]"


@INTERLEAVE_RANK.checker
def _interleave_rank(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.interleave != "NONE" and p.rank < 3:
        return f"interleave {p.interleave} needs tensorRank >= 3, not {p.rank}"
    return None


@IM2COL_RANK.checker
def _im2col_rank(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.is_im2col and not 3 <= p.rank <= 5:
        return f"{p.encode} needs tensorRank 3, 4 or 5, not {p.rank}"
    return None


@GLOBAL_ADDRESS_ALIGNMENT.checker
def _global_address(call: EncodeCall) -> Optional[str]:
    p, need = call.params, required_global_alignment(call.params)
    if p.global_address % need:
        return f"globalAddress {p.global_address:#x} is not {need}-byte aligned"
    return None


@GLOBAL_DIM_RANGE.checker
def _global_dim(call: EncodeCall) -> Optional[str]:
    return _first_outside("globalDim", call.params.global_dim, 1, 1 << 32, "[1, 2^32]")


PACKED_GLOBAL_DIM_MULTIPLE = {"16U4_ALIGN16B": 128, "16U6_ALIGN16B": 128, "16U4_ALIGN8B": 2}


@PACKED_GLOBAL_DIM.checker
def _packed_global_dim(call: EncodeCall) -> Optional[str]:
    p = call.params
    multiple = PACKED_GLOBAL_DIM_MULTIPLE.get(p.data_type)
    if multiple and p.global_dim and p.global_dim[0] % multiple:
        return f"{p.data_type} needs globalDim[0] a multiple of {multiple}, not {p.global_dim[0]}"
    return None


@GLOBAL_STRIDE_ALIGNMENT.checker
def _global_stride_alignment(call: EncodeCall) -> Optional[str]:
    need = required_global_alignment(call.params)
    for i, stride in enumerate(call.params.global_strides):
        if stride % need:
            return f"globalStrides[{i}] = {stride} is not a multiple of {need} bytes"
    return None


@GLOBAL_STRIDE_RANGE.checker
def _global_stride_range(call: EncodeCall) -> Optional[str]:
    return _first_outside("globalStrides", call.params.global_strides, 0, (1 << 40) - 1, "[0, 2^40)")


@ELEMENT_STRIDES_RANGE.checker
def _element_strides(call: EncodeCall) -> Optional[str]:
    return _first_outside("elementStrides", call.params.element_strides, 1, 8, "[1, 8]")


@ELEMENT_STRIDES_INNER.checker
def _element_strides_inner(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.interleave == "NONE" and p.element_strides and p.element_strides[0] != 1:
        return (f"elementStrides[0] = {p.element_strides[0]}: without interleave TMA ignores the dimension-0 "
                f"stride and loads every element along dimension 0")
    return None


@INTERLEAVE_SWIZZLE.checker
def _interleave_swizzle(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.interleave == "32B" and p.swizzle != "32B":
        return f"interleave 32B needs swizzle 32B, not {p.swizzle}"
    return None


@INTERLEAVE_DTYPE.checker
def _interleave_dtype(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.data_type == "16U6_ALIGN16B" and p.interleave != "NONE":
        return f"16U6_ALIGN16B needs interleave NONE, not {p.interleave}"
    return None


@OOB_NAN_DTYPE.checker
def _oob_nan(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.oob_fill == "NAN_REQUEST_ZERO_FMA" and not p.dtype.is_float:
        return f"NaN out-of-bounds fill needs a floating-point dataType, not {p.data_type}"
    return None


@BOX_RANGE.checker
def _box_range(call: EncodeCall) -> Optional[str]:
    p = call.params
    return _first_outside("boxDim", p.box_dim, 1, 256, "[1, 256]") if p.encode == "tiled" else None


def _tiled_row(p: TensorMapParams) -> Optional[int]:
    """Bits of one box row (boxDim[0] elements) of a tiled map; None for im2col maps."""
    if p.encode != "tiled" or not p.box_dim:
        return None
    return inner_bits(p, p.box_dim[0])


def _tiled_inner_row(p: TensorMapParams) -> Optional[int]:
    """Bits of one box row of a tiled map without interleave; None otherwise."""
    return _tiled_row(p) if p.interleave == "NONE" else None


@BOX_INNER_16B.checker
def _box_inner(call: EncodeCall) -> Optional[str]:
    row = _tiled_row(call.params)
    if row is not None and row % 128:
        return f"boxDim[0] * element size = {_bytes(row)} bytes, not a multiple of 16"
    return None


def _span_message(what: str, row_bits: Optional[int], swizzle: str) -> Optional[str]:
    span = swizzle_span(swizzle)
    if row_bits is None or span is None or row_bits <= span * 8:
        return None
    return f"{what} = {_bytes(row_bits)} bytes > the {swizzle} swizzle span of {span} bytes"


@BOX_SWIZZLE_SPAN.checker
def _box_span(call: EncodeCall) -> Optional[str]:
    return _span_message("boxDim[0] * element size", _tiled_inner_row(call.params), call.params.swizzle)


@PACKED_BOX.checker
def _packed_box(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.encode == "tiled" and p.data_type in PACKED_16B_TYPES and p.box_dim and p.box_dim[0] != 128:
        return f"{p.data_type} needs boxDim[0] = 128, not {p.box_dim[0]}"
    return None


PACKED_SWIZZLES = {
    "16U6_ALIGN16B": ("NONE", "128B", "128B_ATOM_32B", "128B_ATOM_64B"),
    "16U4_ALIGN16B": ("NONE", "128B", "128B_ATOM_32B"),
}


@PACKED_SWIZZLE.checker
def _packed_swizzle(call: EncodeCall) -> Optional[str]:
    p = call.params
    allowed = PACKED_SWIZZLES.get(p.data_type)
    if allowed is not None and p.swizzle not in allowed:
        return f"{p.data_type} takes swizzle {', '.join(allowed)}, not {p.swizzle}"
    return None


@DTYPE_ARCH.checker
def _dtype_arch(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.data_type in PACKED_TYPES and not is_sm100_or_later(call.arch):
        return f"{p.data_type} needs sm100 or later, not {call.arch}"
    return None


SM100_SWIZZLES = ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")


@SWIZZLE_ARCH.checker
def _swizzle_arch(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.swizzle in SM100_SWIZZLES and not is_sm100_or_later(call.arch):
        return f"swizzle {p.swizzle} needs sm100 or later, not {call.arch}"
    return None


@IM2COL_CORNER_RANGE.checker
def _im2col_corners(call: EncodeCall) -> Optional[str]:
    p = call.params
    limits = corner_range(p.rank)
    if p.encode != "im2col" or limits is None:
        return None
    low, high = limits
    shown = f"[{low}, {high}] (rank {p.rank})"
    return (_first_outside("pixelBoxLowerCorner", p.pixel_box_lower_corner, low, high, shown)
            or _first_outside("pixelBoxUpperCorner", p.pixel_box_upper_corner, low, high, shown))


@IM2COL_BOX_AREA.checker
def _im2col_box_area(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col:
        return None
    for i, size in enumerate(bounding_box_sizes(p)):
        if size < 1:
            return (f"the bounding box is empty along spatial dimension {i + 1}: globalDim[{i + 1}] + upper "
                    f"corner - lower corner = {size}")
    return None


@IM2COL_CHANNELS_RANGE.checker
def _im2col_channels(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col:
        return None
    channels = p.channels_per_pixel
    if not 1 <= channels <= 256:
        return f"channelsPerPixel {channels} is not in [1, 256]"
    if p.data_type in PACKED_16B_TYPES and channels != 128:
        return f"{p.data_type} needs channelsPerPixel = 128, not {channels}"
    return None


@IM2COL_PIXELS_RANGE.checker
def _im2col_pixels(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col:
        return None
    pixels = p.pixels_per_column
    return None if 1 <= pixels <= 1024 else f"pixelsPerColumn {pixels} is not in [1, 1024]"


@IM2COL_CHANNEL_SPAN.checker
def _im2col_channel_span(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col or p.interleave != "NONE":
        return None
    return _span_message("channelsPerPixel * element size", inner_bits(p, p.channels_per_pixel), p.swizzle)


@IM2COL_CHANNELS_16B.checker
def _im2col_channels_16B(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col or p.data_type in PACKED_TYPES:
        # packed types take exactly 128 channels (tma.map.im2col.channels_range): whole 16-byte chunks
        return None
    row = inner_bits(p, p.channels_per_pixel)
    return f"channelsPerPixel * element size = {_bytes(row)} bytes, not a multiple of 16" if row % 128 else None


@IM2COL_SPATIAL_DIM.checker
def _im2col_spatial_dim(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col:
        return None
    high, shown = ((1 << 31), "[1, 2^31]") if p.encode == "im2col" else ((1 << 31) - 1, "[1, 2^31 - 1]")
    # zero is tma.map.global_dim_range's
    return _first_outside("globalDim", p.global_dim[1:-1], 0, high, shown + " (spatial)", first_index=1)


MAX_BOX_BYTES = 228 * 1024


def _tiled_rows(p: TensorMapParams, rounding) -> Optional[int]:
    """Rows of a tiled load: the product of rounding(boxDim[i], elementStrides[i]) over i >= 1."""
    if not p.box_dim or len(p.box_dim) != len(p.element_strides) or 0 in p.element_strides:
        return None
    rows = 1
    for size, stride in zip(p.box_dim[1:], p.element_strides[1:]):
        rows *= rounding(size, stride)
    return rows


def _load_bytes_message(loaded: int, how: str) -> Optional[str]:
    return None if loaded <= MAX_BOX_BYTES else f"one load {how} {loaded} bytes > {MAX_BOX_BYTES} (228 KiB)"


@BOX_BYTES.checker
def _box_bytes(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.is_im2col:
        return _load_bytes_message(inner_bits(p, p.channels_per_pixel) * p.pixels_per_column // 8, "brings")
    rows = _tiled_rows(p, lambda size, stride: size // stride)
    return None if rows is None else _load_bytes_message(inner_bits(p, p.box_dim[0]) * rows // 8,
                                                         "counts (strides rounded down, as the driver does)")


@BOX_BYTES_LOADED.checker
def _box_bytes_loaded(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.is_im2col:
        return None
    if _box_bytes(call) is not None:
        return None                     # the driver refuses it already (tma.map.box_bytes)
    rows = _tiled_rows(p, lambda size, stride: -(-size // stride))
    return None if rows is None else _load_bytes_message(inner_bits(p, p.box_dim[0]) * rows // 8, "brings")


@WIDE_ARCH.checker
def _wide_arch(call: EncodeCall) -> Optional[str]:
    if call.params.encode == "im2col_wide" and not is_sm100_or_later(call.arch):
        return f"im2col_wide needs compute capability 10.0 or higher, not {call.arch}"
    return None


WIDE_SWIZZLES = ("64B", "128B", "128B_ATOM_32B")


@WIDE_SWIZZLE.checker
def _wide_swizzle(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.encode == "im2col_wide" and p.swizzle not in WIDE_SWIZZLES:
        return f"im2col_wide takes swizzle {', '.join(WIDE_SWIZZLES)}, not {p.swizzle}"
    return None


@WIDE_INTERLEAVE.checker
def _wide_interleave(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.encode == "im2col_wide" and p.interleave != "NONE":
        return f"im2col_wide takes no interleave, not {p.interleave}"
    return None


@WIDE_CORNER_RANGE.checker
def _wide_corners(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.encode != "im2col_wide":
        return None
    # The H100's driver holds width corners to the im2col range of the rank (rank 4: [-128, 127]).
    low, high = (corner_range(p.rank) if call.arch == "sm90" else None) or WIDE_CORNER_LIMITS
    corners = (p.pixel_box_lower_corner_width, p.pixel_box_upper_corner_width)
    for name, corner in zip(("pixelBoxLowerCornerWidth", "pixelBoxUpperCornerWidth"), corners):
        if not low <= corner <= high:
            return f"{name} = {corner} is not in [{low}, {high}]"
    return None


@SMEM_ALIGNMENT.checker
def _smem_alignment(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.smem_address is None:
        return None
    need = smem_alignment_required(p.swizzle)
    if p.smem_address % need:
        return (f"destination {p.smem_address:#x} is {p.smem_address % need} bytes past a {need}-byte "
                f"boundary (swizzle {p.swizzle} needs {need})")
    return None


def _direction_only(p: TensorMapParams) -> Optional[tuple]:
    """(direction, why) when the map may be used in one copy direction only."""
    if p.swizzle == "128B_ATOM_32B_FLIP_8B":
        return "global_to_shared", "swizzle 128B_ATOM_32B_FLIP_8B"
    if p.data_type == "16U4_ALIGN16B":
        return "global_to_shared", "dataType 16U4_ALIGN16B"
    if p.data_type == "16U6_ALIGN16B" and p.swizzle == "128B_ATOM_64B":
        return "shared_to_global", "16U6_ALIGN16B with swizzle 128B_ATOM_64B"
    return None


@COPY_DIRECTION.checker
def _copy_direction(call: EncodeCall) -> Optional[str]:
    p = call.params
    only = _direction_only(p)
    if p.direction is None or only is None or p.direction == only[0]:
        return None
    return f"{only[1]} is for {only[0]} copies only, not {p.direction}"


# --- Checking -------------------------------------------------------------------------------------------
def check_arch(arch: str) -> str:
    if arch not in COMPUTE_CAPABILITY:
        raise SpecError("arch", arch, "unknown arch; expected " + ", ".join(COMPUTE_CAPABILITY), ARCH.id)
    return arch


def violations(params: TensorMapParams, arch: str = "sm100") -> list[Violation]:
    """Every tensormap rule the call breaks, enforced or not, in catalogue order."""
    return check_all(SUBJECT, EncodeCall(params, check_arch(arch)))


def check(params: TensorMapParams, arch: str = "sm100") -> dict:
    """{"legal", "violations", "warnings"}: legal is whether the encoder accepts the call (no enforced
    rule broken); violations are the enforced rules broken, warnings the others."""
    broken = violations(params, arch)
    refused = [v.as_json() for v in broken if enforced(v.rule.id, arch)]
    return {"legal": not refused, "violations": refused,
            "warnings": [v.as_json() for v in broken if not enforced(v.rule.id, arch)]}


def check_document(document: dict, arch: str = "sm100") -> dict:
    return check(parse_params(document), arch)
