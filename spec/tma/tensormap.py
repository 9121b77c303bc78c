"""TMA tensor maps: the rules an encoder call's arguments must obey, each in one block.

A block is the rule (`rule(...)`: its statement, the primary document it comes from, what decided it,
who enforces it and on which architectures the observed driver does not) followed at once by its
check of each subject it names:
  * "tensormap": one encoder call on one architecture (EncodeCall: the TensorMapParams of
    spec/tma/tensormap_params.py and the arch);
  * "tma_box": a tiled box that `tma place` loads (spec.tma.place.Box: swizzle, element_bytes, dims,
    element_strides; no interleave);
  * "im2col_load": one im2col-family copy (spec.tma.im2col.Im2colLoad: the tensor map's fields and the
    instruction's operands).
A limit stated once for the map and for the box or load that uses it is one rule with a check per
subject, not one rule per subject.

Sources: the CUDA Driver API pages of cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col and
cuTensorMapEncodeIm2colWide (cuda.h 13.0); PTX ISA 5.5 (Tensors: 5.5.1 dimensions, 5.5.3 tiled mode,
5.5.4 im2col mode, 5.5.5 im2col::w modes, 5.5.6 interleave layout, 5.5.7 swizzling modes); and what
the H100's driver 580.159.04 accepted and refused (tests/hardware/tensormap_encode_sm90.json.gz,
tests/hardware/fuzz_driver_sm90.json.gz; replayed by tests/hardware_replay/test_encoder_replay.py).

`check` splits the broken rules the way the encoder does (spec/tma/driver.py): a rule the driver
enforces on that architecture makes the call fail (a violation, legal = false); any other is a warning.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from spec.rule import Consequence, Violation, check_all, rule
from spec.tma import swizzle as tma_swizzle
from spec.tma.driver import enforced  # noqa: F401  (tensormap.enforced: the callers' name)
from spec.tma.tensormap_params import (  # noqa: F401  (re-exported: callers use tensormap.<name>)
    ARCH, COMPUTE_CAPABILITY, DATA_TYPE_TABLE, DATA_TYPES, DIRECTIONS, ENCODER_NAMES, ENCODES,
    IM2COL_ENCODES, INTERLEAVE_LAYOUT, INTERLEAVES, L2_PROMOTIONS, MAX_RANK, OOB_FILLS, PACKED_16B_TYPES,
    PACKED_TYPES, PARAMS, SWIZZLES, WIDE_MODES, TensorMapParams, TmaDataType, check_arch, data_type_info,
    document_keys, interleaved_layout, is_sm100_or_later, parse_params, rank_is_encodable, to_document)

SUBJECT = "tensormap"
BOX = "tma_box"
LOAD = "im2col_load"
SM90_ENCODER = "tests/hardware/tensormap_encode_sm90.json.gz"   # the H100 driver's accept / refuse record
SM90_PROBE = "tests/hardware/driver_probe_sm90.json.gz"        # issue 14's probe sets and held-out calls


# --- The subject: one encoder call on one architecture --------------------------------------------------
@dataclass(frozen=True)
class EncodeCall:
    params: TensorMapParams
    arch: str


# --- Quantities the rules use -------------------------------------------------------------------------
def required_global_alignment(p: TensorMapParams) -> int:
    """globalAddress and globalStrides alignment: 32 with interleave 32B or a 16B-padded packed type."""
    return 32 if p.interleave == "32B" or p.data_type in PACKED_16B_TYPES else 16


def swizzle_span(swizzle: str) -> Optional[int]:
    """Bytes one swizzled row may hold (32B 32, 64B 64, 96B 96, 128B* 128); None without a swizzle."""
    return tma_swizzle.mode_info(swizzle).span


# Shared-memory footprint of the packed types (CUtensorMapDataType; PTX ISA 9.7.16.10: .b4x16_p64,
# .b6x16_p32): 16 x U4 or U6 values fill a 16-byte slot in the ALIGN16B types (8 bits per value
# there), 8 bytes in 16U4_ALIGN8B.
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
    """The im2col corner range for a rank: rank 3 [-2^15, 2^15-1], 4 [-2^7, 2^7-1], 5 [-2^4, 2^4-1]."""
    bits = {3: 15, 4: 7, 5: 4}.get(rank)
    return None if bits is None else (-(1 << bits), (1 << bits) - 1)


WIDE_CORNER_LIMITS = (-(1 << 15), (1 << 15) - 1)


def _corners(p: TensorMapParams) -> tuple:
    if p.encode == "im2col":
        return p.pixel_box_lower_corner, p.pixel_box_upper_corner
    return (p.pixel_box_lower_corner_width,), (p.pixel_box_upper_corner_width,)


def bounding_box_sizes(p: TensorMapParams) -> tuple:
    """Size of the im2col bounding box along each spatial dimension (W, H, D = globalDim[1], [2], [3]):
    from lowerCorner (an offset from coordinate 0) to globalDim - 1 + upperCorner (an offset from the
    last coordinate). im2col_wide: the W dimension only (D and H boxes are 1 by definition)."""
    lowers, uppers = _corners(p)
    spatial = p.global_dim[1:1 + len(lowers)]
    return tuple(size + upper - lower for size, lower, upper in zip(spatial, lowers, uppers))


def driver_spatial_positions(p: TensorMapParams) -> range:
    """The globalDim entries the driver treats as the spatial dimensions W, H, D: 1 .. rank - 2, and with
    interleave 16B / 32B one lower, 0 .. rank - 3 (SM90_PROBE, set interleaved_im2col)."""
    first = 1 if p.interleave == "NONE" else 0
    return range(first, first + max(p.rank - 2, 0))


def _signed_32(value: int) -> int:
    value %= 1 << 32
    return value - (1 << 32) if value >= 1 << 31 else value


def driver_box_extents(p: TensorMapParams) -> tuple:
    """The driver's bounding-box sizes: per corner, (globalDim[d] + upperCorner) wrapped to a signed 32-bit
    integer, minus lowerCorner, d the corner's spatial position (driver_spatial_positions)."""
    lowers, uppers = _corners(p)
    positions = driver_spatial_positions(p)
    return tuple(_signed_32(p.global_dim[d] + upper) - lower
                 for d, lower, upper in zip(positions, lowers, uppers) if d < len(p.global_dim))


def smem_alignment_required(swizzle: str) -> int:
    """The destination alignment a swizzle asks of its readers: the pattern's repeat (PTX ISA 5.5.7) or the
    atomicity alignment of the 32/64-byte atomicity sub-modes, whichever is larger (the 128 bytes every
    destination needs are rule tma.box.destination_alignment's)."""
    return max(tma_swizzle.repeat_boundary(swizzle), tma_swizzle.alignment_required(swizzle))


def _first_outside(name: str, values, low: int, high: int, shown: str, first_index: int = 0) -> Optional[str]:
    for i, v in enumerate(values, start=first_index):
        if not low <= v <= high:
            return f"{name}[{i}] = {v} is not in {shown}"
    return None


def _outside(values, bounds) -> Optional[int]:
    """The first value outside [low, high], or None."""
    low, high = bounds
    return next((v for v in values if not low <= v <= high), None)


def _tiled_row(p: TensorMapParams) -> Optional[int]:
    """Bits of one box row (boxDim[0] elements) of a tiled map; None for im2col maps."""
    if p.encode != "tiled" or not p.box_dim:
        return None
    return inner_bits(p, p.box_dim[0])


def _span_message(what: str, row_bits: Optional[int], swizzle: str) -> Optional[str]:
    span = swizzle_span(swizzle)
    if row_bits is None or span is None or row_bits <= span * 8:
        return None
    return f"{what} = {_bytes(row_bits)} bytes > the {swizzle} swizzle span of {span} bytes"


# === The rules, in the order of the encoders' parameter lists ============================================
def _map_rule(id: str, source: str, statement: str, subjects=(SUBJECT,), enforced_by: str = "driver", **kw):
    """A rule on the encoder's arguments: enforced by the driver unless it says otherwise."""
    return rule(id, source, statement, subjects=subjects, enforced_by=enforced_by, stack_depth=2, **kw)


# --- tensorRank ---------------------------------------------------------------------------------------------
RANK = _map_rule(
    "tma.map.rank", "CUDA Driver API: cuTensorMapEncodeTiled (tensorRank); PTX ISA 5.5.1",
    "tensorRank is non-zero and at most 5 (tensors are 1D to 5D).")


@RANK.checker
def _rank(call: EncodeCall) -> Optional[str]:
    rank = call.params.rank
    return None if 1 <= rank <= MAX_RANK else f"tensorRank {rank} is not in [1, {MAX_RANK}]"


INTERLEAVE_RANK = _map_rule(
    "tma.map.interleave_rank", "CUDA Driver API: cuTensorMapEncodeTiled (tensorRank); PTX ISA 5.5.6",
    "With interleave 16B or 32B, tensorRank is at least 3 (interleaved layouts are 3D, 4D or 5D only).")


@INTERLEAVE_RANK.checker
def _interleave_rank(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.interleave != "NONE" and p.rank < 3:
        return f"interleave {p.interleave} needs tensorRank >= 3, not {p.rank}"
    return None


IM2COL_RANK = _map_rule(
    "tma.map.im2col.rank", "CUDA Driver API: cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide (tensorRank)",
    "im2col and im2col_wide maps have tensorRank 3, 4 or 5.")


@IM2COL_RANK.checker
def _im2col_rank(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.is_im2col and not 3 <= p.rank <= 5:
        return f"{p.encode} needs tensorRank 3, 4 or 5, not {p.rank}"
    return None


# --- globalAddress, globalDim, globalStrides ------------------------------------------------------------
GLOBAL_ADDRESS_ALIGNMENT = _map_rule(
    "tma.map.global_address_alignment", "CUDA Driver API: cuTensorMapEncodeTiled (globalAddress)",
    "globalAddress is 16-byte aligned; 32-byte aligned with interleave 32B or dataType 16U4_ALIGN16B / "
    "16U6_ALIGN16B.")


@GLOBAL_ADDRESS_ALIGNMENT.checker
def _global_address(call: EncodeCall) -> Optional[str]:
    p, need = call.params, required_global_alignment(call.params)
    if p.global_address % need:
        return f"globalAddress {p.global_address:#x} is not {need}-byte aligned"
    return None


GLOBAL_DIM_RANGE = _map_rule(
    "tma.map.global_dim_range", "CUDA Driver API: cuTensorMapEncodeTiled (globalDim)",
    "Every globalDim[i] is in [1, 2^32].")


@GLOBAL_DIM_RANGE.checker
def _global_dim(call: EncodeCall) -> Optional[str]:
    return _first_outside("globalDim", call.params.global_dim, 1, 1 << 32, "[1, 2^32]")


PACKED_GLOBAL_DIM = _map_rule(
    "tma.map.packed_global_dim", "CUDA Driver API: cuTensorMapEncodeTiled (globalDim)",
    "globalDim[0] (counting individual U4/U6 values) is a multiple of 128 for 16U4_ALIGN16B and "
    "16U6_ALIGN16B, a multiple of 2 for 16U4_ALIGN8B.")
PACKED_GLOBAL_DIM_MULTIPLE = {"16U4_ALIGN16B": 128, "16U6_ALIGN16B": 128, "16U4_ALIGN8B": 2}


@PACKED_GLOBAL_DIM.checker
def _packed_global_dim(call: EncodeCall) -> Optional[str]:
    p = call.params
    multiple = PACKED_GLOBAL_DIM_MULTIPLE.get(p.data_type)
    if multiple and p.global_dim and p.global_dim[0] % multiple:
        return f"{p.data_type} needs globalDim[0] a multiple of {multiple}, not {p.global_dim[0]}"
    return None


GLOBAL_STRIDE_ALIGNMENT = _map_rule(
    "tma.map.global_stride_alignment", "CUDA Driver API: cuTensorMapEncodeTiled (globalStrides)",
    "Every globalStrides[i] (bytes) is a multiple of 16; of 32 with interleave 32B or dataType "
    "16U4_ALIGN16B / 16U6_ALIGN16B.",
    note="A stride of 0 is a multiple of 16 and is not flagged: the driver documentation states no lower "
         "bound.")


@GLOBAL_STRIDE_ALIGNMENT.checker
def _global_stride_alignment(call: EncodeCall) -> Optional[str]:
    need = required_global_alignment(call.params)
    for i, stride in enumerate(call.params.global_strides):
        if stride % need:
            return f"globalStrides[{i}] = {stride} is not a multiple of {need} bytes"
    return None


GLOBAL_STRIDE_RANGE = _map_rule(
    "tma.map.global_stride_range", "CUDA Driver API: cuTensorMapEncodeTiled (globalStrides)",
    "Every globalStrides[i] is less than 2^40.")


@GLOBAL_STRIDE_RANGE.checker
def _global_stride_range(call: EncodeCall) -> Optional[str]:
    return _first_outside("globalStrides", call.params.global_strides, 0, (1 << 40) - 1, "[0, 2^40)")


# --- elementStrides ---------------------------------------------------------------------------------------
ELEMENT_STRIDES_RANGE = _map_rule(
    "tma.map.element_strides_range", "CUDA Driver API: cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col "
    "(elementStrides); PTX ISA 5.5.3.2, 5.5.4.2 (traversal stride)",
    "Every elementStrides[i] (traversal stride) is in [1, 8]: of a tensor map, of a `tma place` box, of "
    "an im2col load.", subjects=(SUBJECT, BOX, LOAD))
MAX_ELEMENT_STRIDE = 8


@ELEMENT_STRIDES_RANGE.checker(subject=SUBJECT)
def _element_strides(call: EncodeCall) -> Optional[str]:
    return _first_outside("elementStrides", call.params.element_strides, 1, MAX_ELEMENT_STRIDE, "[1, 8]")


@ELEMENT_STRIDES_RANGE.checker(subject=BOX)
def _box_element_strides(box) -> Optional[str]:
    bad = [s for s in box.element_strides if s > MAX_ELEMENT_STRIDE]   # < 1 is malformed (make_box)
    return f"element stride {bad[0]} > {MAX_ELEMENT_STRIDE}" if bad else None


@ELEMENT_STRIDES_RANGE.checker(subject=LOAD)
def _load_element_strides(load) -> Optional[str]:
    bad = [s for s in load.element_strides if s > MAX_ELEMENT_STRIDE]  # < 1 is malformed (Im2colLoad)
    return f"traversal stride {bad[0]} > {MAX_ELEMENT_STRIDE}" if bad else None


ELEMENT_STRIDES_INNER = _map_rule(
    "tma.map.element_strides_inner", "PTX ISA 5.5.3.2 (traversal stride); CUDA Driver API: "
    "cuTensorMapEncodeTiled (elementStrides)",
    "Without interleave, elementStrides[0] (the traversal stride of dimension 0; C of an im2col load) is "
    "1: TMA has no traversal stride along dimension 0.", subjects=(SUBJECT, LOAD), enforced_by="nobody",
    note="The driver documentation says instead that the first element 'is ignored since TMA doesn't "
         "support the stride for dimension zero': the encoder accepts another value and the copy then "
         "loads boxDim[0] elements, not ceil(boxDim[0] / stride), as the H100 did "
         "(tests/hardware/tma_loads_sm90.json.gz, rule tma.place.tiled): a warning, not a refusal.",
    consequences=[Consequence("ok", "elementStrides[0] is ignored: the H100 loaded the same bytes for every "
                              "value (tests/hardware/tma_loads_sm90.json.gz; the CUDA Driver API's "
                              "cuTensorMapEncodeTiled calls it ignored)")])


@ELEMENT_STRIDES_INNER.checker(subject=SUBJECT)
def _element_strides_inner(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.interleave == "NONE" and p.element_strides and p.element_strides[0] != 1:
        return (f"elementStrides[0] = {p.element_strides[0]}: without interleave TMA ignores the dimension-0 "
                f"stride and loads every element along dimension 0")
    return None


@ELEMENT_STRIDES_INNER.checker(subject=LOAD)
def _load_inner_stride(load) -> Optional[str]:
    if load.interleave != "NONE" or load.element_strides[0] == 1:
        return None
    return f"traversal stride of C is {load.element_strides[0]}, not 1, without interleave"


# --- interleave, oobFill ---------------------------------------------------------------------------------
INTERLEAVE_SWIZZLE = _map_rule(
    "tma.map.interleave_swizzle", f"CUDA Driver API: cuTensorMapEncodeTiled (swizzle); {SM90_ENCODER}",
    "With interleave 32B, swizzle is 32B.", evidence="driver", not_enforced_on=("sm90",),
    note="Documented, but the H100's driver (580.159.04) encodes interleave 32B with swizzle NONE and 128B "
         f"too ({SM90_ENCODER}): on sm90 a warning, not a refusal.")


@INTERLEAVE_SWIZZLE.checker
def _interleave_swizzle(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.interleave == "32B" and p.swizzle != "32B":
        return f"interleave 32B needs swizzle 32B, not {p.swizzle}"
    return None


INTERLEAVE_DTYPE = _map_rule(
    "tma.map.interleave_dtype", "CUDA Driver API: cuTensorMapEncodeTiled (interleave)",
    "dataType 16U6_ALIGN16B requires interleave NONE.")


@INTERLEAVE_DTYPE.checker
def _interleave_dtype(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.data_type == "16U6_ALIGN16B" and p.interleave != "NONE":
        return f"16U6_ALIGN16B needs interleave NONE, not {p.interleave}"
    return None


OOB_NAN_DTYPE = _map_rule(
    "tma.map.oob_nan_dtype", "CUDA Driver API: cuTensorMapEncodeTiled (oobFill)",
    "oobFill NAN_REQUEST_ZERO_FMA needs a floating-point dataType, not a packed type.")


@OOB_NAN_DTYPE.checker
def _oob_nan(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.oob_fill == "NAN_REQUEST_ZERO_FMA" and not p.dtype.is_float:
        return f"NaN out-of-bounds fill needs a floating-point dataType, not {p.data_type}"
    return None


# --- boxDim (tiled maps, and the boxes `tma place` loads) ---------------------------------------------------
BOX_RANGE = _map_rule(
    "tma.map.box_range", "CUDA Driver API: cuTensorMapEncodeTiled (boxDim)",
    "Tiled: every boxDim[i] is in [1, 256] (of a tensor map, and of a box `tma place` loads).",
    subjects=(SUBJECT, BOX))
MAX_BOX_DIM = 256


@BOX_RANGE.checker(subject=SUBJECT)
def _box_range(call: EncodeCall) -> Optional[str]:
    p = call.params
    return _first_outside("boxDim", p.box_dim, 1, MAX_BOX_DIM, "[1, 256]") if p.encode == "tiled" else None


@BOX_RANGE.checker(subject=BOX)
def _box_dims(box) -> Optional[str]:
    bad = [d for d in box.dims if d > MAX_BOX_DIM]        # < 1 is malformed (make_box)
    return f"boxDim {bad[0]} > {MAX_BOX_DIM}" if bad else None


BOX_INNER_16B = _map_rule(
    "tma.map.box_inner_16B", f"CUDA Driver API: cuTensorMapEncodeTiled (boxDim); {SM90_ENCODER}",
    "Tiled: boxDim[0] * element size is a multiple of 16 bytes, with or without interleave.",
    subjects=(SUBJECT, BOX), evidence="driver",
    note="The driver documentation states it for interleave NONE only; the H100's driver (580.159.04, "
         f"{SM90_ENCODER}) also refuses interleaved boxes whose row is not a multiple of 16 bytes (FLOAT16 "
         "16B-interleaved boxDim[0] 1, 2, 4, 12; UINT8 8).")


@BOX_INNER_16B.checker(subject=SUBJECT)
def _box_inner(call: EncodeCall) -> Optional[str]:
    row = _tiled_row(call.params)
    if row is not None and row % 128:
        return f"boxDim[0] * element size = {_bytes(row)} bytes, not a multiple of 16"
    return None


@BOX_INNER_16B.checker(subject=BOX)
def _box_row_16B(box) -> Optional[str]:
    inner = box.dims[0] * box.element_bytes
    return None if inner % 16 == 0 else f"boxDim[0] * element size = {inner} bytes, not a multiple of 16"


BOX_SWIZZLE_SPAN = _map_rule(
    "tma.map.box_swizzle_span", "CUDA Driver API: cuTensorMapEncodeTiled (interleave, swizzle); PTX ISA 5.5.7",
    "Tiled, interleave NONE, swizzle not NONE: boxDim[0] * element size is at most the swizzle span "
    "(32B: 32, 64B: 64, 96B: 96, every 128B mode: 128 bytes). A `tma place` box has no interleave.",
    subjects=(SUBJECT, BOX),
    note="96B has no cuda.h enumerator (an encoder call cannot name it); a `tma place` box may use it.")


@BOX_SWIZZLE_SPAN.checker(subject=SUBJECT)
def _box_span(call: EncodeCall) -> Optional[str]:
    p = call.params
    row = _tiled_row(p) if p.interleave == "NONE" else None
    return _span_message("boxDim[0] * element size", row, p.swizzle)


@BOX_SWIZZLE_SPAN.checker(subject=BOX)
def _box_row_span(box) -> Optional[str]:
    span = swizzle_span(box.swizzle)
    inner = box.dims[0] * box.element_bytes
    if span is None or inner <= span:
        return None
    return f"boxDim[0] * element size = {inner} bytes > the {box.swizzle} span {span}"


PACKED_BOX = _map_rule(
    "tma.map.packed_box", "CUDA Driver API: cuTensorMapEncodeTiled (boxDim)",
    "Tiled, dataType 16U4_ALIGN16B or 16U6_ALIGN16B: boxDim[0] is 128.")


@PACKED_BOX.checker
def _packed_box(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.encode == "tiled" and p.data_type in PACKED_16B_TYPES and p.box_dim and p.box_dim[0] != 128:
        return f"{p.data_type} needs boxDim[0] = 128, not {p.box_dim[0]}"
    return None


# --- swizzle, dataType and the architecture ----------------------------------------------------------------
PACKED_SWIZZLE = _map_rule(
    "tma.map.packed_swizzle", "CUDA Driver API: cuTensorMapEncodeTiled (swizzle)",
    "16U6_ALIGN16B takes swizzle NONE, 128B, 128B_ATOM_32B or 128B_ATOM_64B (the last for stores only); "
    "16U4_ALIGN16B takes NONE, 128B or 128B_ATOM_32B (loads only).")
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


DTYPE_ARCH = _map_rule(
    "tma.map.dtype_arch", "CUDA Driver API: CUtensorMapDataType (cuda.h 13.0)",
    "The packed sub-byte dataTypes (16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B) need sm100 or later.")


@DTYPE_ARCH.checker
def _dtype_arch(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.data_type in PACKED_TYPES and not is_sm100_or_later(call.arch):
        return f"{p.data_type} needs sm100 or later, not {call.arch}"
    return None


SWIZZLE_ARCH = _map_rule(
    "tma.map.swizzle_arch", "PTX ISA 5.5.7 (Swizzling Modes), Table 14; CUDA Driver API: CUtensorMapSwizzle",
    "The 128B atomicity sub-modes (128B_ATOM_32B, 128B_ATOM_32B_FLIP_8B, 128B_ATOM_64B) need sm100 or later.")
SM100_SWIZZLES = ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")


def swizzle_arch_problem(swizzle: str, arch: str) -> Optional[str]:
    """What rule tma.map.swizzle_arch says of `swizzle` on `arch`, or None (also for a tiled load whose
    map is not given: `tma place --arch`)."""
    if swizzle in SM100_SWIZZLES and not is_sm100_or_later(arch):
        return f"swizzle {swizzle} needs sm100 or later, not {arch}"
    return None


def swizzle_arch_violations(swizzle: str, arch: Optional[str]) -> list:
    """A load's swizzle on `arch` (None: not said, nothing checked), for the commands given a swizzle and
    no map (`tma place --arch`, `im2col --arch`)."""
    problem = swizzle_arch_problem(swizzle, check_arch(arch)) if arch else None
    return [SWIZZLE_ARCH.violation(problem)] if problem else []


@SWIZZLE_ARCH.checker
def _swizzle_arch(call: EncodeCall) -> Optional[str]:
    return swizzle_arch_problem(call.params.swizzle, call.arch)


# --- im2col maps and loads ------------------------------------------------------------------------------
IM2COL_CORNER_RANGE = _map_rule(
    "tma.map.im2col.corner_range", "CUDA Driver API: cuTensorMapEncodeIm2col (pixelBoxLowerCorner, "
    "pixelBoxUpperCorner); PTX ISA 5.5.4.1",
    "im2col: every pixelBoxLowerCorner / pixelBoxUpperCorner entry is in [-2^15, 2^15 - 1] for rank 3, "
    "[-2^7, 2^7 - 1] for rank 4, [-2^4, 2^4 - 1] for rank 5 (of a tensor map, and of an im2col load).",
    subjects=(SUBJECT, LOAD))


@IM2COL_CORNER_RANGE.checker(subject=SUBJECT)
def _im2col_corners(call: EncodeCall) -> Optional[str]:
    p = call.params
    limits = corner_range(p.rank)
    if p.encode != "im2col" or limits is None:
        return None
    low, high = limits
    shown = f"[{low}, {high}] (rank {p.rank})"
    return (_first_outside("pixelBoxLowerCorner", p.pixel_box_lower_corner, low, high, shown)
            or _first_outside("pixelBoxUpperCorner", p.pixel_box_upper_corner, low, high, shown))


@IM2COL_CORNER_RANGE.checker(subject=LOAD)
def _load_corners(load) -> Optional[str]:
    if load.mode != "im2col":
        return None
    low, high = corner_range(load.rank)
    bad = _outside(load.lower + load.upper, (low, high))
    return None if bad is None else f"corner {bad} outside [{low}, {high}] for a rank-{load.rank} tensor"


IM2COL_BOX_AREA = _map_rule(
    "tma.map.im2col.box_area", "CUDA Driver API: cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide "
    f"(pixelBoxLowerCorner, pixelBoxUpperCorner); {SM90_PROBE}",
    "The im2col bounding box has non-zero area, as the driver computes it: along every spatial dimension d "
    "with a corner i, (globalDim[d] + upperCorner[i]) wrapped to a signed 32-bit integer, minus "
    "lowerCorner[i], is at least 1. d = 1 + i, or i with interleave 16B / 32B (im2col_wide and the w modes: "
    "the W corners only).", subjects=(SUBJECT, LOAD), evidence="driver",
    note="The driver documentation says 'must have non-zero area'. The box size reads the lower corner as "
         "an offset from coordinate 0 and the upper corner as an offset from the last coordinate "
         "(globalDim - 1), as rule im2col.bounding_box does; corner i belongs to spatial dimension i + 1 "
         "in the order W, H, D (rule im2col.layout), although the driver documentation lists the offsets "
         "as {D, H, W}. The H100's driver (580.159.04) decided the rest (SM90_PROBE): with interleave it "
         "pairs corner i with globalDim[i] (set interleaved_im2col: 4000 maps, no exception), and it adds "
         "the upper corner in 32 bits, so a spatial globalDim of 2^31 + 1 is accepted with a negative "
         "upper corner and W = 2^32 with corners that leave a positive size (set spatial_2_31: 3000 maps, "
         "no exception). For the load's own box (subject im2col_load) the sizes are the unwrapped ones.")


@IM2COL_BOX_AREA.checker(subject=SUBJECT)
def _im2col_box_area(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col:
        return None
    positions = driver_spatial_positions(p)
    for i, (d, size) in enumerate(zip(positions, driver_box_extents(p))):
        if size < 1:
            return (f"the bounding box is empty along globalDim[{d}] (corner {i}), as the driver counts it: "
                    f"(globalDim[{d}] + upper corner) as a signed 32-bit value - lower corner = {size}")
    return None


@IM2COL_BOX_AREA.checker(subject=LOAD)
def _load_box_area(load) -> Optional[str]:
    # tensor (C, W[, H[, D]], N); one corner per spatial dimension (the w modes: W only, zip stops there)
    for name, size, low, upper in zip("whd", load.tensor[1:-1], load.lower, load.upper):
        high = size - 1 + upper
        if high < low:
            return f"bounding box {name} in [{low}, {high}] is empty"
    return None


IM2COL_CHANNELS_RANGE = _map_rule(
    "tma.map.im2col.channels_range", "CUDA Driver API: cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide "
    "(channelsPerPixel)",
    "channelsPerPixel is in [1, 256]; for 16U4_ALIGN16B and 16U6_ALIGN16B it is 128.", subjects=(SUBJECT, LOAD),
    note="The driver documentation says 'must be 128' for the packed 16-byte types (which an im2col load of "
         "spec/tma/im2col.py does not model). Zero channels is read as out of range (nothing to load).")
MAX_CHANNELS_PER_PIXEL = 256


@IM2COL_CHANNELS_RANGE.checker(subject=SUBJECT)
def _im2col_channels(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col:
        return None
    channels = p.channels_per_pixel
    if not 1 <= channels <= MAX_CHANNELS_PER_PIXEL:
        return f"channelsPerPixel {channels} is not in [1, 256]"
    if p.data_type in PACKED_16B_TYPES and channels != 128:
        return f"{p.data_type} needs channelsPerPixel = 128, not {channels}"
    return None


@IM2COL_CHANNELS_RANGE.checker(subject=LOAD)
def _load_channels(load) -> Optional[str]:
    if load.channels_per_pixel <= MAX_CHANNELS_PER_PIXEL:     # < 1 is malformed (Im2colLoad)
        return None
    return f"channelsPerPixel {load.channels_per_pixel} > {MAX_CHANNELS_PER_PIXEL}"


IM2COL_PIXELS_RANGE = _map_rule(
    "tma.map.im2col.pixels_range", "CUDA Driver API: cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide "
    f"(pixelsPerColumn); {SM90_ENCODER}",
    "pixelsPerColumn is in [1, 1024], in im2col_wide mode W128 too (which loads 128 pixels whatever it says).",
    subjects=(SUBJECT, LOAD), evidence="driver",
    note="The driver documentation states only the upper bound; the H100's driver refuses 0 (and 1025), "
         f"also for mode W128, which ignores the value otherwise ({SM90_ENCODER}). An im2col::w::128 load "
         "may leave pixelsPerColumn out (None): then there is nothing to check.")
MAX_PIXELS_PER_COLUMN = 1024


@IM2COL_PIXELS_RANGE.checker(subject=SUBJECT)
def _im2col_pixels(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col:
        return None
    pixels = p.pixels_per_column
    return None if 1 <= pixels <= MAX_PIXELS_PER_COLUMN else f"pixelsPerColumn {pixels} is not in [1, 1024]"


@IM2COL_PIXELS_RANGE.checker(subject=LOAD)
def _load_pixels(load) -> Optional[str]:
    pixels = load.pixels_per_column                           # < 1 is malformed (Im2colLoad)
    if pixels is None or pixels <= MAX_PIXELS_PER_COLUMN:
        return None
    return f"pixelsPerColumn {pixels} > {MAX_PIXELS_PER_COLUMN}"


IM2COL_CHANNEL_SPAN = _map_rule(
    "tma.map.im2col.channel_span", "CUDA Driver API: cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide "
    "(interleave, swizzle); PTX ISA 5.5.7",
    "im2col, interleave NONE, swizzle not NONE: channelsPerPixel * element size is at most the swizzle span "
    "(32B: 32, 64B: 64, 96B: 96, every 128B mode: 128 bytes).", subjects=(SUBJECT, LOAD))


@IM2COL_CHANNEL_SPAN.checker(subject=SUBJECT)
def _im2col_channel_span(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col or p.interleave != "NONE":
        return None
    return _span_message("channelsPerPixel * element size", inner_bits(p, p.channels_per_pixel), p.swizzle)


@IM2COL_CHANNEL_SPAN.checker(subject=LOAD)
def _load_channel_span(load) -> Optional[str]:
    span = swizzle_span(load.swizzle)
    if load.interleave != "NONE" or span is None or load.row_bytes <= span:
        return None
    return f"channelsPerPixel * element size = {load.row_bytes} bytes > the {load.swizzle} span {span}"


WIDE_ARCH = _map_rule(
    "tma.map.im2col_wide.arch", f"CUDA Driver API: cuTensorMapEncodeIm2colWide; {SM90_ENCODER}",
    "im2col_wide maps need compute capability 10.0 or higher (sm100, sm103).", evidence="driver",
    not_enforced_on=("sm90",),
    note="The driver documentation says the API is only supported from compute capability 10.0, yet the "
         f"H100's driver (580.159.04) encodes im2col_wide maps ({SM90_ENCODER}); only the .im2col::w copies "
         "that use them need sm100. On sm90 a warning, not a refusal.")


@WIDE_ARCH.checker
def _wide_arch(call: EncodeCall) -> Optional[str]:
    if call.params.encode == "im2col_wide" and not is_sm100_or_later(call.arch):
        return f"im2col_wide needs compute capability 10.0 or higher, not {call.arch}"
    return None


IM2COL_CHANNELS_16B = _map_rule(
    "tma.map.im2col.channels_16B", f"{SM90_ENCODER} (cuTensorMapEncodeIm2col); PTX ISA 5.5.3.1",
    "im2col and im2col_wide: channelsPerPixel * element size is a multiple of 16 bytes (one pixel's row, "
    "like a tiled box's boxDim[0]).", subjects=(SUBJECT, LOAD), evidence="driver",
    note="Not in the driver documentation's parameter notes (PTX ISA 5.5.3.1 states it for tiled boxes); "
         "the H100's driver (580.159.04) refuses 1 and 4 FLOAT16 channels and 1 FLOAT32 channel and accepts "
         f"8 FLOAT16 and 4 FLOAT32 ({SM90_ENCODER}).")


@IM2COL_CHANNELS_16B.checker(subject=SUBJECT)
def _im2col_channels_16B(call: EncodeCall) -> Optional[str]:
    p = call.params
    if not p.is_im2col or p.data_type in PACKED_TYPES:
        # packed types take exactly 128 channels (tma.map.im2col.channels_range): whole 16-byte chunks
        return None
    row = inner_bits(p, p.channels_per_pixel)
    return f"channelsPerPixel * element size = {_bytes(row)} bytes, not a multiple of 16" if row % 128 else None


@IM2COL_CHANNELS_16B.checker(subject=LOAD)
def _load_row_16B(load) -> Optional[str]:
    if load.row_bytes % 16 == 0:
        return None
    return f"channelsPerPixel * element size = {load.row_bytes} bytes, not a multiple of 16"


IM2COL_SPATIAL_DIM = _map_rule(
    "tma.map.im2col.spatial_dim_range", f"{SM90_ENCODER}; {SM90_PROBE} (cuTensorMapEncodeIm2colWide)",
    "In an im2col_wide map the spatial globalDim entries other than W (H and D: driver_spatial_positions "
    "after the first) are at most 2^31 - 1. (im2col maps and the W dimension: rule tma.map.im2col.box_area's "
    "32-bit arithmetic.)",
    evidence="driver",
    note="The driver documentation allows globalDim up to 2^32 for every map. The H100's driver (580.159.04) "
         "refuses an H or D of 2^31 .. 2^32 in an im2col_wide map whatever the corners (SM90_PROBE, sets "
         "spatial_2_31 and heldout:1). Before issue 14 this rule also bounded im2col maps at 2^31 and W at "
         "2^31 - 1: what looked like that bound, and the W = 2^32 map the driver accepted, is the 32-bit "
         "sum of rule tma.map.im2col.box_area.")


@IM2COL_SPATIAL_DIM.checker
def _im2col_spatial_dim(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.encode != "im2col_wide":
        return None
    others = list(driver_spatial_positions(p))[1:]
    for d in others:
        if d < len(p.global_dim) and p.global_dim[d] > (1 << 31) - 1:
            return f"globalDim[{d}] = {p.global_dim[d]} > 2^31 - 1 (an im2col_wide H or D dimension)"
    return None


# --- The size of one load ----------------------------------------------------------------------------------
BOX_BYTES = _map_rule(
    "tma.map.box_bytes", f"{SM90_ENCODER}; tests/hardware/fuzz_driver_sm90.json.gz (cuTensorMapEncodeTiled, "
    "cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide)",
    "The driver's size check: at most 228 KiB (233472 bytes, the shared memory of one SM), counted tiled as "
    "floor(boxDim[0] / elementStrides[0]) * floor(boxDim[1] / elementStrides[1]) * ... * element size (dimension "
    "0 divided too, with any interleave, although the load ignores elementStrides[0]); im2col and im2col_wide, "
    "channelsPerPixel * pixelsPerColumn * element size (pixelsPerColumn as given, even in mode W128). "
    "Packed types count their shared-memory footprint (16U4_ALIGN16B, 16U6_ALIGN16B: 16 bytes per 16 values). "
    "A tiled map is counted only when every elementStrides[i] is in [1, 8].",
    evidence="driver",
    note="Not in the driver documentation; the H100's driver (580.159.04) accepts FLOAT16 boxes of 228 KiB "
         f"and refuses 232 KiB, with and without interleave ({SM90_ENCODER}). It divides by the "
         "traversal strides rounding *down*: BFLOAT16 boxes [64, 3, 200, 8] with elementStrides [1, 2, 1, 1] "
         "(200 KiB counted, 400 KiB loaded) and [64, 32, 1, 115] with [1, 2, 6, 1] (a box dimension below "
         "its stride counts 0) are accepted, [64, 3, 256, 8] with [1, 2, 1, 1] is refused "
         "(tests/hardware/fuzz_driver_sm90.json.gz, found by `layoutproof fuzz --against`). It refuses a W128 "
         "map of 128 FLOAT64 channels with pixelsPerColumn 256 (256 KiB). Dimension 0 is divided as well: "
         f"UINT8 [32, 256, 46] with elementStrides [4, 1, 1] is accepted ({SM90_PROBE}: set box_bytes, 4000 "
         "maps with elementStrides[0] 1..8 and interleave NONE / 16B / 32B, and heldout:1, no exception). "
         "A stride of 0 or above 8 is no traversal stride (PTX ISA 5.5.3.2 defines the count for 1..8; rule "
         "tma.map.element_strides_range refuses the others, and so does the driver, so its count of such a "
         "map is never seen): such a map is not counted, here and in tma.map.box_bytes_loaded (before issue "
         "17 a stride of 0 skipped the count and one above 8 divided by it).")
MAX_BOX_BYTES = 228 * 1024


def _tiled_rows(p: TensorMapParams, rounding) -> Optional[int]:
    """Rows of a tiled load: the product of rounding(boxDim[i], elementStrides[i]) over i >= 1; None (not
    counted) unless every elementStrides[i] is a traversal stride, in [1, MAX_ELEMENT_STRIDE]."""
    if not p.box_dim or len(p.box_dim) != len(p.element_strides) \
            or any(not 1 <= stride <= MAX_ELEMENT_STRIDE for stride in p.element_strides):
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
    if rows is None:
        return None
    first = p.box_dim[0] // p.element_strides[0]
    return _load_bytes_message(inner_bits(p, first) * rows // 8, "counts (boxDim / elementStrides rounded down "
                               "in every dimension, as the driver does)")


BOX_BYTES_LOADED = _map_rule(
    "tma.map.box_bytes_loaded", "PTX ISA 5.5.3.2 (traversal stride: ceil(boxDim / elementStrides) elements); "
    "tests/hardware/fuzz_driver_sm90.json.gz",
    "A tiled box that passes the driver's count (tma.map.box_bytes) also brings at most 228 KiB: "
    "boxDim[0] * ceil(boxDim[1] / elementStrides[1]) * ... * element size (counted only when every "
    "elementStrides[i] is in [1, 8], as tma.map.box_bytes).", enforced_by="nobody",
    note="The driver counts with floor (tma.map.box_bytes) and so accepts boxes that load more than 228 KiB "
         "when a box dimension is not a multiple of its stride: a warning, not a refusal. What such a load "
         "does has not been observed.")


@BOX_BYTES_LOADED.checker
def _box_bytes_loaded(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.is_im2col:
        return None
    if _box_bytes(call) is not None:
        return None                     # the driver refuses it already (tma.map.box_bytes)
    rows = _tiled_rows(p, lambda size, stride: -(-size // stride))
    return None if rows is None else _load_bytes_message(inner_bits(p, p.box_dim[0]) * rows // 8, "brings")


# --- im2col_wide maps and the im2col::w loads ---------------------------------------------------------------
WIDE_SWIZZLE = _map_rule(
    "tma.map.im2col_wide.swizzle", "CUDA Driver API: cuTensorMapEncodeIm2colWide (swizzle); PTX ISA 5.5.5",
    "im2col_wide: swizzle is 64B, 128B or 128B_ATOM_32B; an im2col::w copy may also use 96B (which no "
    "cuda.h enumerator names), an im2col::w::128 copy may not.", subjects=(SUBJECT, LOAD), evidence="driver",
    not_enforced_on=("sm90",),
    note="Stricter than PTX ISA 5.5.5, which excludes only no swizzle and 128B with 32B atomicity and 8-byte "
         "flip (rule im2col.w.swizzle): 32B and 128B_ATOM_64B pass PTX's rule but not the driver's. The "
         f"H100's driver does not check it ({SM90_ENCODER}): on sm90 a warning.")
WIDE_SWIZZLES = ("64B", "128B", "128B_ATOM_32B")
LOAD_WIDE_SWIZZLES = {"w": ("64B", "96B", "128B", "128B_ATOM_32B"), "w128": WIDE_SWIZZLES}


@WIDE_SWIZZLE.checker(subject=SUBJECT)
def _wide_swizzle(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.encode == "im2col_wide" and p.swizzle not in WIDE_SWIZZLES:
        return f"im2col_wide takes swizzle {', '.join(WIDE_SWIZZLES)}, not {p.swizzle}"
    return None


@WIDE_SWIZZLE.checker(subject=LOAD)
def _load_wide_swizzle(load) -> Optional[str]:
    allowed = LOAD_WIDE_SWIZZLES.get(load.mode)
    if allowed is None or load.swizzle in allowed:
        return None
    return f"cuTensorMapEncodeIm2colWide takes only {', '.join(allowed)} in {load.qualifier}, not {load.swizzle}"


WIDE_INTERLEAVE = _map_rule(
    "tma.map.im2col_wide.interleave", "PTX ISA 5.5.6 (Interleave layout); CUDA Driver API: "
    "cuTensorMapEncodeIm2colWide (interleave)",
    "im2col_wide maps, and the im2col::w and im2col::w::128 copies, take no interleave (NONE).",
    subjects=(SUBJECT, LOAD), not_enforced_on=("sm90",),
    note=f"The H100's driver does not check it ({SM90_ENCODER}): on sm90 a warning.")


@WIDE_INTERLEAVE.checker(subject=SUBJECT)
def _wide_interleave(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.encode == "im2col_wide" and p.interleave != "NONE":
        return f"im2col_wide takes no interleave, not {p.interleave}"
    return None


@WIDE_INTERLEAVE.checker(subject=LOAD)
def _load_wide_interleave(load) -> Optional[str]:
    if not load.is_wide or load.interleave == "NONE":
        return None
    return f"interleave {load.interleave} is not supported in {load.qualifier}"


WIDE_CORNER_RANGE = _map_rule(
    "tma.map.im2col_wide.corner_range", f"CUDA Driver API: cuTensorMapEncodeIm2colWide; {SM90_ENCODER}",
    "im2col_wide (and the w modes' loads): pixelBoxLowerCornerWidth and pixelBoxUpperCornerWidth are in "
    "[-2^15, 2^15 - 1]; the sm90 driver holds a map's to the im2col corner range of the rank.",
    subjects=(SUBJECT, LOAD), evidence="driver",
    note="The driver documentation gives [-2^15, 2^15 - 1]; the H100's driver (580.159.04) accepts a rank-4 "
         f"map's width corners only in [-128, 127], the im2col rank-4 range ({SM90_ENCODER}). A load has no "
         "architecture: it is held to the documented range.")


@WIDE_CORNER_RANGE.checker(subject=SUBJECT)
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


@WIDE_CORNER_RANGE.checker(subject=LOAD)
def _load_wide_corners(load) -> Optional[str]:
    if not load.is_wide:
        return None
    bad = _outside(load.lower + load.upper, WIDE_CORNER_LIMITS)
    return None if bad is None else f"W corner {bad} outside [{WIDE_CORNER_LIMITS[0]}, {WIDE_CORNER_LIMITS[1]}]"


# --- The copy, not the map: destination and direction (the encoder cannot see them) ---------------------
COORD0_ALIGNMENT = rule(
    "tma.load.coord0_16B", "tests/hardware/tma_loads_sm90.json.gz (H100)",
    "A tiled load's tensor coordinate along dimension 0, times the element size, is a multiple of 16 "
    "bytes; otherwise the copy traps (illegal instruction) at run time. The encoder cannot see it.",
    subjects=("tma_box", "tensormap"), evidence="hardware", enforced_by="nobody",
    note="Not in the manual. On the H100 every tiled load whose first column was off a 16-byte boundary "
         "stopped with 'an illegal instruction was encountered' (649 loads of a first run: 1, 2 and 4-byte "
         "elements, inside the tensor and partly outside, coordinates -2, 4, ...; 12 kept in the record), "
         "and every aligned one ran.",
    # seen on an H100 only; taken for every arch, as the TMA unit's copy path is the same family's
    consequences=[Consequence("trap", "the H100 stopped every tiled load whose first column was off 16 bytes "
                              "with 'an illegal instruction was encountered' (tests/hardware/tma_loads_sm90.json.gz)")])


@COORD0_ALIGNMENT.checker(subject="tma_box")
def _coord0(box):
    """box: spec.tma.place.Box."""
    offset = box.coord0 * box.element_bytes
    return None if offset % 16 == 0 else (f"the load starts {offset} bytes into dimension 0, not on a 16-byte "
                                          f"column: the copy traps")


@COORD0_ALIGNMENT.checker(subject="tensormap")
def _copy_coord0(call: EncodeCall) -> Optional[str]:
    """A tiled copy whose tensor coordinates the document gives (whole-byte types: the packed ones are
    rule tma.load.packed_coord0's)."""
    p = call.params
    if p.coordinates is None or p.encode != "tiled" or p.data_type in PACKED_TYPES or not p.coordinates:
        return None
    offset = p.coordinates[0] * p.dtype.bits // 8
    return None if offset % 16 == 0 else (f"coordinates[0] = {p.coordinates[0]} starts the load {offset} bytes "
                                          f"into dimension 0, not on a 16-byte column: the copy traps")


PACKED_COORD0 = rule(
    "tma.load.packed_coord0", "PTX ISA 5.5.1.1 (Sub-byte Types: padding and alignment)",
    "A copy of a packed sub-byte type (16U4_ALIGN16B, 16U6_ALIGN16B: 16 values per 16 bytes in shared "
    "memory) starts at a tensor coordinate along dimension 0 that is a multiple of 128, the values one "
    "box row holds (tma.map.packed_box).", subject="tensormap", enforced_by="nobody",
    note="The encoder cannot see a copy's coordinates. The H100's driver refuses the packed types, so no "
         "machine here can load them: what a copy at another coordinate does only a Blackwell GPU could show.",
    consequences=[Consequence("unknown", "PTX 5.5.1.1 asks it; no machine here loads packed types (the H100's "
                              "driver refuses them)")])


@PACKED_COORD0.checker
def _packed_coord0(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.coordinates is None or p.data_type not in PACKED_16B_TYPES or not p.coordinates:
        return None
    first = p.coordinates[0]
    return None if first % 128 == 0 else f"coordinates[0] = {first} is not a multiple of 128 ({p.data_type})"


# The destination of any tensor copy: of a tiled box (spec/tma/place.py), of an im2col load (spec/tma/im2col.py),
# of a recipe's boxes (spec/cases/recipe_case.py), of a copy through a tensor map (smemAddress).
DESTINATION = rule(
    "tma.box.destination_alignment", "CUDA C++ Programming Guide (Tensor Memory Access: 128-byte shared "
    "memory alignment); PTX ISA 5.5.3.1; tests/hardware/tma_loads_sm90.json.gz (H100)",
    "The shared-memory destination of a tensor copy is 128-byte aligned: of a tiled box, of an im2col "
    "load, of the boxes of a tile recipe, of a copy through a tensor map (smemAddress). Otherwise the copy "
    "traps (misaligned address).", subjects=("tma_box", "im2col_load", "recipe", "tensormap"),
    evidence="hardware", enforced_by="nobody",
    note="PTX ISA 5.5.3.1 asks only 16 bytes; the CUDA programming guide asks 128, and the H100 decides for "
         "the guide: tiled loads to destinations 8, 16, 32, 48, 64 and 96 bytes past a 128-byte boundary all "
         "stopped with 'misaligned address' (12 loads, swizzle NONE and 128B), while boxes placed at every "
         "128-byte offset of the swizzle repeat landed right. The repeat alignment that rule "
         "tma.map.smem_alignment asks is about readers that assume phase 0, not about the copy. The "
         "encoder cannot see the destination: nobody refuses it before run time.",
    consequences=[Consequence("trap", "the H100 stopped copies to destinations off 128 bytes with 'misaligned "
                              "address' (tests/hardware/tma_loads_sm90.json.gz)")])
DESTINATION_ALIGNMENT = 128


@DESTINATION.checker(subject="tma_box")
def _box_destination(box):
    """box: spec.tma.place.Box."""
    return None if box.smem_address % DESTINATION_ALIGNMENT == 0 else \
        f"destination {box.smem_address:#x} is not {DESTINATION_ALIGNMENT}-byte aligned"


@DESTINATION.checker(subject="im2col_load")
def _load_destination(load):
    return None if load.smem_address % DESTINATION_ALIGNMENT == 0 else \
        f"destination {load.smem_address:#x} is not {DESTINATION_ALIGNMENT}-byte aligned"


@DESTINATION.checker(subject="tensormap")
def _tensormap_destination(call):
    """call: spec.tma.tensormap.EncodeCall; the destination is the document's optional smemAddress."""
    address = call.params.smem_address
    return None if address is None or address % DESTINATION_ALIGNMENT == 0 else \
        f"destination {address:#x} is not {DESTINATION_ALIGNMENT}-byte aligned: the copy traps"


@DESTINATION.checker(subject="recipe")
def _recipe_destination(recipe):
    """recipe: solver.synth.recipe.Recipe (its smem_address is where the first box lands)."""
    return None if recipe.smem_address % DESTINATION_ALIGNMENT == 0 else \
        f"smem address {recipe.smem_address:#x} is not {DESTINATION_ALIGNMENT}-byte aligned"


SMEM_ALIGNMENT = _map_rule(
    "tma.map.smem_alignment", "PTX ISA 5.5.7 (Swizzling Modes, the repeat boundary)", enforced_by="nobody",
    statement="With a swizzle, the shared-memory destination (smemAddress, when given) is aligned to the "
    "swizzle's repeat (32B: 256, 64B: 512, every 128B mode: 1024 bytes) for a reader that starts the pattern "
    "at the destination.",
    note="Off the repeat boundary the swizzle phase follows the absolute address (PTX ISA 5.5.7; observed on "
         "the H100, rule tma.place.tiled), so a reader assuming phase 0 reads wrong data; a descriptor with "
         "base offset 0 reads it right (rule readmap.swizzle_phase). Not an encoder argument: a warning. The "
         "128 bytes every destination needs, swizzled or not, are rule tma.box.destination_alignment.",
    consequences=[Consequence("wrong-data", "the swizzle phase follows the absolute address (PTX ISA 5.5.7; "
                              "H100, rule tma.place.tiled): a reader that starts the pattern at the destination "
                              "finds an element elsewhere")])


@SMEM_ALIGNMENT.checker
def _smem_alignment(call: EncodeCall) -> Optional[str]:
    p = call.params
    if p.smem_address is None or p.swizzle == "NONE":
        return None
    need = smem_alignment_required(p.swizzle)
    if p.smem_address % need:
        return (f"destination {p.smem_address:#x} is {p.smem_address % need} bytes past a {need}-byte "
                f"boundary (swizzle {p.swizzle} repeats every {need})")
    return None


COPY_DIRECTION = _map_rule(
    "tma.map.copy_direction", "PTX ISA 5.5.7 (Swizzling Modes), Table 14; CUDA Driver API: "
    "CUtensorMapSwizzle, CUtensorMapDataType", enforced_by="nobody",
    statement="When the copy direction is given: 128B_ATOM_32B_FLIP_8B and dataType 16U4_ALIGN16B are for "
    "global -> shared copies only; 16U6_ALIGN16B with 128B_ATOM_64B for shared -> global copies only.",
    note="A property of the copy instruction, not of the map: the encoder cannot see it (a warning).",
    consequences=[Consequence("unknown", "PTX 5.5.7 names the direction a mode is for; what a copy the other "
                              "way does is not stated")])


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
def violations(params: TensorMapParams, arch: str = "sm100") -> list[Violation]:
    """Every tensormap rule the call breaks, enforced or not, in catalogue order. With a tensorRank the
    encoder refuses, only the rank rules: the arrays have no length to hold (their entries are read as
    given by tensormap_params), so the rules about them have nothing sound to say."""
    call = EncodeCall(params, check_arch(arch))
    if not rank_is_encodable(params.encode, params.rank):
        return check_all(SUBJECT, call, only=(RANK.id, IM2COL_RANK.id))
    return check_all(SUBJECT, call)


def check(params: TensorMapParams, arch: str = "sm100") -> dict:
    """{"legal", "violations", "warnings"}: legal is whether the encoder accepts the call (no rule it
    enforces on `arch` broken); violations are the enforced rules broken, warnings the others."""
    broken = violations(params, arch)
    refused = [v.as_json() for v in broken if enforced(v.rule.id, arch)]
    return {"legal": not refused, "violations": refused,
            "warnings": [v.as_json() for v in broken if not enforced(v.rule.id, arch)]}


def check_document(document: dict, arch: str = "sm100") -> dict:
    return check(parse_params(document), arch)
