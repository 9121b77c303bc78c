"""The im2col family of TMA tensor copies: which pixels a load reads and where they land in shared memory.

Sources: PTX 5.5.4 (im2col mode: bounding box, traversal stride, im2col offsets, out-of-bound access),
PTX 5.5.5 (im2col::w and im2col::w::128: wHalo, wOffset), PTX 5.5.6 (interleave), the CUDA Driver API
pages of cuTensorMapEncodeIm2col / cuTensorMapEncodeIm2colWide, and the swizzle tables
of PTX 5.5.7 (spec.tma.swizzle).

Vocabulary, as in the manual:
  * the tensor has rank 3, 4 or 5: NWC, NHWC, NDHWC. Tensor-map dimension 0 is C (innermost), then W,
    H, D, and N last. Tensor sizes, tensor coordinates and traversal strides are given in that order:
    tensor (C, W[, H[, D]], N), coordinates (c, w[, h[, d]], n). The spatial dimensions are W, H, D
    (dimensions 1 .. rank-2); corners and im2col offsets are given per spatial dimension, W first.
  * a *pixel* is one (n, d, h, w) position; a load reads `channelsPerPixel` consecutive channels
    c .. c + channelsPerPixel - 1 of each pixel it visits (PTX 5.5.4.1).
  * rank-3 loads have no H and D; this model gives them size 1 and coordinate 0 (a pixel of an NWC load
    is reported as (n, 0, 0, w)).

How a load is modelled (every step is a rule below; those marked "interpretation" are what the text
leaves open and hardware has to settle):
  1. the bounding box, in the spatial dimensions, from the tensor map's corners (im2col.bounding_box);
     for the w modes it is 1 pixel in D and H at the instruction's d, h (im2col.w.bounding_box);
  2. the start and the box are moved by the im2col offsets (im2col.offsets_shift) or by wOffset
     (im2col.w.woffset);
  3. the walk: the start, then W stepped by its traversal stride, wrapping at the box's upper corner to
     its lower corner and stepping H, then D, then N (im2col.traversal, im2col.w.traversal);
  4. which steps of the walk are loaded and in which shared-memory row each goes: pixelsPerColumn rows
     (im2col), plus wHalo halo rows (im2col.w.halo, im2col.w128.halo);
  5. a pixel outside the tensor, or a channel outside [0, C), is filled (im2col.out_of_bounds);
  6. row r holds its pixel's channels, channelsPerPixel * element-size bytes, densely from the
     destination; then every byte moves as the swizzle table says (im2col.placement).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import Iterator, Optional

from spec import fast
from spec.tma import tensormap
from spec.tma import place as tma_place
from spec.tma import swizzle as tma_swizzle
from spec.rule import SpecError, check_all, rule

MODES = {"im2col": ".im2col", "w": ".im2col::w", "w128": ".im2col::w::128"}  # model name -> PTX qualifier
WIDE_MODES = ("w", "w128")
LAYOUTS = {3: "NWC", 4: "NHWC", 5: "NDHWC"}
INTERLEAVES = ("NONE", "16B", "32B")             # cuda.h CUtensorMapInterleave, without the prefix
OOB_FILLS = {"zero": "0", "nan": "OOB-NaN"}      # PTX 5.5.3.3: zero fill mode, OOB-NaN fill mode
ELEMENT_BYTES = (1, 2, 4, 8)                     # TMA element sizes (packed sub-byte types not modelled)
W128_PIXELS = 128                                # PTX 5.5.5: "always 128" pixels in im2col::w::128
W128_BLOCK = 32                                  # PTX 5.5.5.3: halo "after every 32 elements"
SPATIAL_NAMES = ("w", "h", "d")                  # spatial dimensions in tensor-map order
COORDINATE_ORDER = {3: "c,w,n", 4: "c,w,h,n", 5: "c,w,h,d,n"}
CORNER_ORDER = {3: "W", 4: "W,H", 5: "W,H,D"}

# --- Limits of the instruction's operands (PTX ISA 5.5.4.1, 5.5.5; cp.async.bulk.tensor) ----------------
# The tensor map's limits (corners, channels, pixels, strides, swizzle) are rules of spec/tma/tensormap.py,
# which check an Im2colLoad too (subject "im2col_load").
OFFSET_RANGE = {3: (0, 2 ** 16 - 1), 4: (0, 2 ** 8 - 1), 5: (0, 2 ** 5 - 1)}
W_HALO_LIMIT = {"w": 512, "w128": 32}            # wHalo in [0, limit)
W_OFFSET_LIMIT = 32                              # wOffset in [0, 32)
PTX_WIDE_FORBIDDEN_SWIZZLES = ("NONE", "128B_ATOM_32B_FLIP_8B")


# === Definitions ======================================================================================
LAYOUT = rule(
    "im2col.layout", "PTX ISA 5.5.4; CUDA Driver API: cuTensorMapEncodeIm2col; CUTLASS "
    "cute/atom/copy_traits_sm90_im2col.hpp",
    "im2col tensors have rank 3, 4 or 5 (NWC, NHWC, NDHWC). Tensor-map dimension 0 is C, then W, H, D, "
    "and N last; tensor coordinates are (c, w, h, d, n) in that order, and corners, im2col offsets and "
    "traversal strides of the spatial dimensions are ordered W, H, D.",
    evidence="cutlass",
    note="PTX names the layouts outermost first (NHWC: C innermost). The driver text says the corner "
         "arrays hold '{D, H, W}'; CUTLASS fills them, and the im2col offsets of the instruction, W first "
         "(lower_corner_whd, offsets (s, r, t)), and CUTLASS runs on hardware.")
BOUNDING_BOX = rule(
    "im2col.bounding_box", "PTX ISA 5.5.4.1; CUDA Driver API: cuTensorMapEncodeIm2col",
    "In each spatial dimension (size S) the bounding box holds the filter-base positions "
    "[pixelBoxLowerCorner, S - 1 + pixelBoxUpperCorner], both ends included: the lower corner is an "
    "offset from the first position (0), the upper corner an offset from the last (S - 1).",
    evidence="driver",
    note="PTX says only that the corners are 'the corner with the smallest / largest coordinate'; the "
         "driver says the lower corner is an offset from the top/left/front corner and the upper one from "
         "the bottom/right/back corner. CUTLASS's output extent (S + upper - lower - 1) / stride + 1 and "
         "Triton's im2col tutorial (its tests assert what Hopper loads: a 4x4 image with corners -1/-1 "
         "gives rows W = -1..2) agree. PTX 5.5.4 examples 2 and 3 then put the filter base outside the "
         "box (W = 7 with a box W <= 6): either those examples or this reading is off.")
COORDINATES = rule(
    "im2col.coordinates", "PTX 5.5.4.1",
    "In im2col mode the tensor coordinates c and n are starting offsets (as in tiled mode); w, h, d give "
    "the position of the convolution filter base in the tensor. The load reads channels c .. c + "
    "channelsPerPixel - 1 of every pixel it visits.")
OFFSETS_SHIFT = rule(
    "im2col.offsets_shift", "PTX 5.5.4.1",
    "The im2col offsets (one per spatial dimension) are added to the filter base to give the first pixel "
    "read, and the whole bounding box moves by the same offsets: every pixel read is a position of the "
    "walk over the box plus the offsets.",
    evidence="interpretation",
    note="PTX says the offsets 'are added to the filter base coordinates to determine the starting "
         "location'; whether the rows after the first also move (the box moves) or start again at the "
         "unmoved lower corner is not said. Moving the box is what CUTLASS's coordinate tensor and "
         "Triton's tutorial (offsets (1, 1) on a box with corners -1 give exactly the 4x4 image, checked "
         "on Hopper by its tests) assume.")
TRAVERSAL = rule(
    "im2col.traversal", "PTX 5.5.4.1, 5.5.4.2",
    "The pixels of an im2col load: the first is the start (filter base + offsets); each next one steps W "
    "by its traversal stride (elementStrides of W); past the box's upper W it goes back to the box's "
    "lower W and steps H by its stride; past the upper H, back to the lower H and step D; past the upper "
    "D, back to the lower corner of the next image (n + 1). pixelsPerColumn pixels are read; the traversal "
    "strides do not change that number.",
    evidence="interpretation",
    note="PTX gives the box, the stride ('the number of elements traversed along D, H, W is strided') and "
         "the count, but the order and the wrap are in its missing figures 13-15. Open points: that a "
         "wrapped row starts at the lower corner (not at the lower corner plus a multiple of the stride "
         "from the start), that n steps by 1 whatever elementStrides[N] is, and that the first pixel is "
         "the start even when the start lies outside the box (the walk then wraps after it). Triton's "
         "hardware-checked tutorial confirms W fastest, then H, then N, with wraps to the lower corner.")
OUT_OF_BOUNDS = rule(
    "im2col.out_of_bounds", "PTX 5.5.3.3, 5.5.4.3",
    "An element is out of bounds when its pixel lies outside the tensor in N, D, H or W (coordinate < 0 "
    "or >= size), or its channel outside [0, C). It is still written to shared memory, filled with 0 "
    "(zero fill mode) or OOB-NaN (NaN fill mode); pixels past the last image are out of bounds.")
PLACEMENT = rule(
    "im2col.placement", "PTX ISA 5.5.4, 5.5.7; tests/hardware/tma_loads_sm90.json.gz",
    "Shared-memory row r (r = 0, 1, ...) holds the channels of the r-th loaded pixel: channelsPerPixel * "
    "element-size bytes at destination + r * the row pitch (tma.place.row_pitch: the swizzle span when "
    "a row is narrower), channel fastest; every byte then moves where the swizzle mode's table sends its "
    "absolute address (tma.swizzle.table_reading).",
    evidence="hardware",
    note="H100 (tests/hardware/tma_loads_sm90.json.gz): 26 im2col loads of rank 3, 4, 5 with swizzle NONE "
         "and 128B; 64-byte pixels under 128B land 128 bytes apart. Interleaved layouts (NC/8DHWC8) are "
         "not modelled.")

WIDE_BOUNDING_BOX = rule(
    "im2col.w.bounding_box", "PTX ISA 5.5.5.1; CUDA Driver API: cuTensorMapEncodeIm2colWide",
    "im2col::w and im2col::w::128: the bounding box is 1 pixel in D and H, at the instruction's d and h; "
    "in W it spans [pixelBoxLowerCornerWidth, W - 1 + pixelBoxUpperCornerWidth] (as im2col.bounding_box). "
    "The instruction's w is the first pixel read.",
    note="The W corners are read as im2col's (the driver: 'width offset of left / right box corner').")
WIDE_W_OFFSET = rule(
    "im2col.w.woffset", "PTX ISA 5.5.5.4 (wOffset)",
    "wOffset moves the source along W: Bounding Box Lower Corner W += wOffset, Upper Corner W += wOffset, "
    "W += wOffset. Several copies with the same coordinates and different wOffset fill one buffer each.")
WIDE_TRAVERSAL = rule(
    "im2col.w.traversal", "PTX ISA 5.5.5, 5.5.5.2 (Traversal Stride)",
    "The w modes walk W only, by the W traversal stride, keeping D and H; past the box's upper W the walk "
    "goes back to the lower W of the next image (n + 1), as im2col does with a box of one pixel in D and H.",
    evidence="interpretation",
    note="The text says the elements are accessed 'across the W dimension only while keeping the H and D "
         "dimension constant'. Whether a walk that leaves the box wraps to the next image (this model) or "
         "runs on along W past the box is not said; it matters only when pixelsPerColumn (+ halo) exceeds "
         "the pixels left in the row, as in every worked example of PTX ISA 5.5.5 (128 pixels, W of 7 or 9).")
WIDE_PIXEL_COUNT = rule(
    "im2col.w.pixel_count", "PTX ISA 5.5.5.1",
    "im2col::w loads pixelsPerColumn main pixels; im2col::w::128 always 128 (pixelsPerColumn ignored).")
WIDE_HALO = rule(
    "im2col.w.halo", "PTX ISA 5.5.5.3 (wHalo)",
    "im2col::w: after the pixelsPerColumn main pixels the walk goes on for wHalo more (halo) pixels, "
    "loaded into the shared-memory rows right after the main row (rows pixelsPerColumn .. + wHalo - 1).",
    evidence="interpretation",
    note="'wHalo ... halo elements must be loaded at the end of the image' and 'the halo pixels are always "
         "loaded in the shared memory next to the main row pixels'; that the halo pixels continue the walk "
         "(same traversal stride, same wrap) is this model's reading of the 3x3 example (two halo pixels "
         "give the two extra filter taps of the last output pixel).")
W128_HALO = rule(
    "im2col.w128.halo", "PTX ISA 5.5.5.3 (wHalo)",
    "im2col::w::128: the 128 main pixels come in 4 blocks of 32; after each block the walk's next wHalo "
    "pixels (the first pixels of the next block, or for the last block the 128th.. pixels) are loaded as "
    "halo, so shared memory holds 4 groups of 32 + wHalo rows: block b's main pixels in rows "
    "b*(32 + wHalo) .. + 31, its halo in the wHalo rows after them.",
    evidence="interpretation",
    note="'the halo elements are loaded after every 32 elements in the bounding box along the W "
         "dimension'. Read here as: each 32-pixel block gets its own halo in the rows right after it "
         "(figure 19 gives no row numbers); whether the 128 elements include the halo is also open "
         "(here they do not: 128 + 4 * wHalo rows).")


# === Constraints of the instruction (subject "im2col_load") ==========================================
# Each rule is followed by its check. The tensor map's rules (corners, box area, channels, pixels,
# traversal strides, swizzle span, the 16-byte row, the w modes' swizzle, interleave and width corners)
# are in spec/tma/tensormap.py and the destination's in spec/tma/place.py: one rule each for the map and
# the load, with a check of each.
def _names(load: Im2colLoad) -> tuple:
    return SPATIAL_NAMES[: load.rank - 2]


def _outside(values, bounds) -> Optional[int]:
    low, high = bounds
    return next((v for v in values if not low <= v <= high), None)


FILTER_BASE_IN_BOX = rule(
    "im2col.filter_base_in_box", "PTX 5.5.4.1",
    "im2col mode: the filter base (tensor coordinates w, h, d) lies inside the bounding box in every "
    "spatial dimension.", subject="im2col_load",
    note="With the box of im2col.bounding_box, PTX 5.5.4 examples 2 and 3 break this rule.")


@FILTER_BASE_IN_BOX.checker
def _filter_base_in_box(load: Im2colLoad) -> Optional[str]:
    if load.mode != "im2col":
        return None
    low, high = tensor_map_box(load)
    for name, base, a, b in zip(_names(load), filter_base(load), low, high):
        if not a <= base <= b:
            return f"filter base {name} = {base} is outside the bounding box {name} in [{a}, {b}]"
    return None


OFFSETS = rule(
    "im2col.offset_range", "PTX ISA 5.5.4.1; PTX ISA cp.async.bulk.tensor (im2colOffsets)",
    "im2col mode: the im2col offsets are unsigned: [0, 2^16-1] (rank 3), [0, 2^8-1] (rank 4), "
    "[0, 2^5-1] (rank 5).", subject="im2col_load")


@OFFSETS.checker
def _offset_range(load: Im2colLoad) -> Optional[str]:
    if load.mode != "im2col":
        return None
    bad = _outside(load.offsets, OFFSET_RANGE[load.rank])
    if bad is None:
        return None
    low, high = OFFSET_RANGE[load.rank]
    return f"im2col offset {bad} outside [{low}, {high}] for a rank-{load.rank} tensor"


W_FIRST_ELEMENT = rule(
    "im2col.w.first_element", "PTX ISA 5.5.5.1",
    "w modes: the first element may lie outside the bounding box only in W and only on its left: the "
    "instruction's w is at most the box's upper W (W - 1 + upper corner; wOffset moves both).",
    subject="im2col_load")


@W_FIRST_ELEMENT.checker
def _w_first_element(load: Im2colLoad) -> Optional[str]:
    if load.mode not in WIDE_MODES:
        return None
    _, high = tensor_map_box(load)
    w = filter_base(load)[0]
    if w <= high[0]:
        return None
    return f"first element w = {w} lies right of the bounding box (upper W = {high[0]})"


W_HALO_RANGE = rule(
    "im2col.w.whalo_range", "PTX ISA cp.async.bulk.tensor (wHalo); 5.5.5.3",
    "wHalo is in [0, 512) for im2col::w and in [0, 32) for im2col::w::128.", subject="im2col_load")


@W_HALO_RANGE.checker
def _w_halo_range(load: Im2colLoad) -> Optional[str]:
    if load.mode not in WIDE_MODES or 0 <= load.w_halo < W_HALO_LIMIT[load.mode]:
        return None
    return f"wHalo {load.w_halo} outside [0, {W_HALO_LIMIT[load.mode]}) in {MODES[load.mode]}"


W_OFFSET_RANGE = rule(
    "im2col.w.woffset_range", "PTX ISA cp.async.bulk.tensor (wOffset); 5.5.5.4",
    "wOffset is in [0, 32).", subject="im2col_load")


@W_OFFSET_RANGE.checker
def _w_offset_range(load: Im2colLoad) -> Optional[str]:
    if load.mode not in WIDE_MODES or 0 <= load.w_offset < W_OFFSET_LIMIT:
        return None
    return f"wOffset {load.w_offset} outside [0, {W_OFFSET_LIMIT})"


W_SWIZZLE = rule(
    "im2col.w.swizzle", "PTX ISA 5.5.5",
    "w modes: the swizzle mode is neither no swizzle nor 128-byte swizzle with 32-byte atomicity and "
    "8-byte flip.", subject="im2col_load")


@W_SWIZZLE.checker
def _w_swizzle(load: Im2colLoad) -> Optional[str]:
    if load.mode not in WIDE_MODES or load.swizzle not in PTX_WIDE_FORBIDDEN_SWIZZLES:
        return None
    return f"swizzle {load.swizzle} is not allowed in {MODES[load.mode]}"


# === The load ========================================================================================
@dataclass(frozen=True)
class Im2colLoad:
    """One im2col-family tensor copy: the tensor map's fields and the instruction's operands.

    tensor, coords, element_strides: one entry per tensor dimension, (C, W[, H[, D]], N).
    lower, upper: the tensor map's corners, per spatial dimension (W, H, D order); in the w modes one
    value each (pixelBoxLowerCornerWidth, pixelBoxUpperCornerWidth).
    offsets: the im2col offsets, per spatial dimension (im2col mode only; empty in the w modes).
    pixels_per_column: None is allowed in im2col::w::128 only (the mode ignores it).
    """
    mode: str
    tensor: tuple
    lower: tuple
    upper: tuple
    channels_per_pixel: int
    pixels_per_column: Optional[int]
    coords: tuple
    offsets: tuple = ()
    element_strides: tuple = ()
    w_halo: int = 0
    w_offset: int = 0
    elem_bytes: int = 2
    swizzle: str = "128B"
    smem_address: int = 0
    interleave: str = "NONE"
    oob_fill: str = "zero"

    def __post_init__(self):
        for name in ("tensor", "lower", "upper", "coords", "offsets", "element_strides"):
            try:
                object.__setattr__(self, name, tuple(getattr(self, name)))
            except TypeError:
                raise SpecError(name, getattr(self, name), "expected a sequence of integers", LAYOUT.id) from None
        _check_well_formed(self)
        if not self.element_strides:   # default: every traversal stride 1
            object.__setattr__(self, "element_strides", (1,) * self.rank)
        if self.mode == "im2col" and not self.offsets:   # default: every im2col offset 0
            object.__setattr__(self, "offsets", (0,) * (self.rank - 2))

    @property
    def rank(self) -> int:
        return len(self.tensor)

    @property
    def layout(self) -> str:
        return LAYOUTS[self.rank]

    @property
    def is_wide(self) -> bool:
        """An im2col::w or im2col::w::128 copy."""
        return self.mode in WIDE_MODES

    @property
    def qualifier(self) -> str:
        """The PTX qualifier of the mode: .im2col, .im2col::w, .im2col::w::128."""
        return MODES[self.mode]

    @property
    def row_bytes(self) -> int:
        return self.channels_per_pixel * self.elem_bytes

    @property
    def row_pitch(self) -> int:
        """Bytes from one shared-memory row to the next (rule tma.place.row_pitch)."""
        return tma_place.row_pitch(self.swizzle, self.row_bytes)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_tuple(field: str, values, count: int, what: str) -> None:
    if len(values) != count or not all(_is_int(v) for v in values):
        raise SpecError(field, ",".join(map(str, values)), f"expected {count} integers ({what})", LAYOUT.id)


def _check_well_formed(load: Im2colLoad) -> None:
    """Malformed input (SpecError): what cannot be read as an im2col load at all. Limits that the
    hardware or driver imposes are rules (violations), not errors."""
    if load.mode not in MODES:
        raise SpecError("mode", load.mode, f"expected one of {', '.join(MODES)}", LAYOUT.id)
    rank = len(load.tensor)
    if rank not in LAYOUTS or not all(_is_int(s) and s >= 1 for s in load.tensor):
        raise SpecError("tensor", ",".join(map(str, load.tensor)),
                        "expected 3 to 5 positive sizes C,W[,H[,D]],N (NWC, NHWC, NDHWC)", LAYOUT.id)
    _int_tuple("coords", load.coords, rank, f"{COORDINATE_ORDER[rank]} of the rank-{rank} tensor")
    if not all(-2 ** 31 <= v < 2 ** 31 for v in load.coords):
        raise SpecError("coords", ",".join(map(str, load.coords)), "tensor coordinates are .s32", LAYOUT.id)
    spatial = rank - 2
    corners, corner_names = (1, "W") if load.mode in WIDE_MODES else (spatial, CORNER_ORDER[rank])
    _int_tuple("lower", load.lower, corners, f"lower corner {corner_names}")
    _int_tuple("upper", load.upper, corners, f"upper corner {corner_names}")
    if load.mode in WIDE_MODES:
        if load.offsets:
            raise SpecError("offsets", ",".join(map(str, load.offsets)),
                            f"{MODES[load.mode]} takes wHalo and wOffset, not im2col offsets", LAYOUT.id)
    else:
        if load.offsets:
            _int_tuple("offsets", load.offsets, spatial, "one im2col offset per spatial dimension, W first")
        for name in ("w_halo", "w_offset"):
            if getattr(load, name):
                raise SpecError(name, getattr(load, name), "only the im2col::w modes take wHalo and wOffset",
                                WIDE_W_OFFSET.id)
    if load.element_strides:
        _int_tuple("element_strides", load.element_strides, rank, "one traversal stride per dimension")
        if any(s < 1 for s in load.element_strides):
            raise SpecError("element_strides", ",".join(map(str, load.element_strides)),
                            "traversal strides are positive",
                            tensormap.ELEMENT_STRIDES_RANGE.id)
    if not _is_int(load.channels_per_pixel) or load.channels_per_pixel < 1:
        raise SpecError("channels_per_pixel", load.channels_per_pixel, "expected a positive integer",
                        tensormap.IM2COL_CHANNELS_RANGE.id)
    if load.pixels_per_column is None:
        if load.mode != "w128":
            raise SpecError("pixels_per_column", None, f"{MODES[load.mode]} needs pixelsPerColumn",
                            tensormap.IM2COL_PIXELS_RANGE.id)
    elif not _is_int(load.pixels_per_column) or load.pixels_per_column < 1:
        raise SpecError("pixels_per_column", load.pixels_per_column, "expected a positive integer",
                        tensormap.IM2COL_PIXELS_RANGE.id)
    for name in ("w_halo", "w_offset"):
        if not _is_int(getattr(load, name)):
            raise SpecError(name, getattr(load, name), "expected an integer", WIDE_W_OFFSET.id)
    if load.elem_bytes not in ELEMENT_BYTES:
        raise SpecError("elem_bytes", load.elem_bytes, "expected 1, 2, 4 or 8", PLACEMENT.id)
    if load.swizzle not in tma_swizzle.MODES:
        raise SpecError("swizzle", load.swizzle, f"expected one of {', '.join(tma_swizzle.MODES)}",
                        tma_swizzle.TMA_SWIZZLE_MODES.id)
    if not _is_int(load.smem_address) or load.smem_address < 0:
        raise SpecError("smem_address", load.smem_address, "expected a non-negative byte address",
                        tma_place.DESTINATION.id)
    if load.interleave not in INTERLEAVES:
        raise SpecError("interleave", load.interleave, f"expected one of {', '.join(INTERLEAVES)}", LAYOUT.id)
    if load.oob_fill not in OOB_FILLS:
        raise SpecError("oob_fill", load.oob_fill, f"expected one of {', '.join(OOB_FILLS)}", OUT_OF_BOUNDS.id)


def make_load(mode: str, tensor, lower, upper, channels_per_pixel: int, pixels_per_column: Optional[int],
              coords, offsets=None, element_strides=None, w_halo: int = 0, w_offset: int = 0,
              elem_bytes: int = 2, swizzle: str = "128B", smem_address: int = 0, interleave: str = "NONE",
              oob_fill: str = "zero") -> Im2colLoad:
    """An Im2colLoad from sequences; im2col offsets default to 0, traversal strides to 1.
    SpecError names the field of malformed input."""
    return Im2colLoad(mode, tensor, lower, upper, channels_per_pixel, pixels_per_column, coords,
                      offsets or (), element_strides or (), w_halo, w_offset, elem_bytes, swizzle,
                      smem_address, interleave, oob_fill)


# --- The geometry, always in three spatial dimensions (W, H, D); rank 3/4 pad with size 1 ----------
def _three(values, fill: int) -> tuple:
    return tuple(values) + (fill,) * (3 - len(values))


def spatial_sizes(load: Im2colLoad) -> tuple:
    """(W, H, D) sizes; a missing dimension has size 1."""
    return _three(load.tensor[1:-1], 1)


def filter_base(load: Im2colLoad) -> tuple:
    """(w, h, d) of the tensor coordinates; a missing dimension is 0."""
    return _three(load.coords[1:-1], 0)


def tensor_map_box(load: Im2colLoad) -> tuple:
    """Rule im2col.bounding_box: ((low_w, low_h, low_d), (high_w, high_h, high_d)), ends included, from
    the tensor map's corners: low = lower corner, high = size - 1 + upper corner. In the w modes the
    corners give W only and the box is the single pixel (h, d) of the coordinates (im2col.w.bounding_box).
    Neither the offsets nor wOffset are applied here."""
    sizes = spatial_sizes(load)
    if load.mode in WIDE_MODES:
        _, h, d = filter_base(load)
        return (load.lower[0], h, d), (sizes[0] - 1 + load.upper[0], h, d)
    lower, upper = _three(load.lower, 0), _three(load.upper, 0)
    return lower, tuple(size - 1 + up for size, up in zip(sizes, upper))


def source_shift(load: Im2colLoad) -> tuple:
    """How far the walk is moved from the filter base and the tensor map's box: the im2col offsets
    (im2col.offsets_shift) or wOffset along W (im2col.w.woffset)."""
    if load.mode in WIDE_MODES:
        return (load.w_offset, 0, 0)
    return _three(load.offsets, 0)


def access_box(load: Im2colLoad) -> tuple:
    """The box the walk wraps in, in tensor coordinates: tensor_map_box moved by source_shift."""
    low, high = tensor_map_box(load)
    shift = source_shift(load)
    return (tuple(a + s for a, s in zip(low, shift)), tuple(a + s for a, s in zip(high, shift)))


def start(load: Im2colLoad) -> tuple:
    """(w, h, d) of the first pixel read: the filter base moved by source_shift."""
    return tuple(a + s for a, s in zip(filter_base(load), source_shift(load)))


def traversal_steps(load: Im2colLoad) -> tuple:
    """(W, H, D) steps: the traversal strides of dimensions 1..3 (im2col.traversal); the w modes step W
    only (im2col.w.traversal; their D and H box is one pixel, so those steps never matter)."""
    strides = _three(load.element_strides[1:-1], 1)
    return (strides[0], 1, 1) if load.mode in WIDE_MODES else strides


def walk(load: Im2colLoad) -> Iterator[tuple]:
    """Rules im2col.traversal / im2col.w.traversal: yields (n, (w, h, d)) for walk steps 0, 1, 2, ...
    forever. Step 0 is the start; each next step adds W's stride to w; a coordinate past the box's upper
    end goes back to the box's lower end and carries into the next dimension (W, then H, then D); a carry
    out of D moves to the next image, n + 1."""
    low, high = access_box(load)
    steps = traversal_steps(load)
    position = list(start(load))
    n = load.coords[-1]
    while True:
        yield n, tuple(position)
        for dim in range(3):
            position[dim] += steps[dim]
            if position[dim] <= high[dim]:
                break
            position[dim] = low[dim]
        else:
            n += 1


# --- How much a load may list (input-size validation, before any work) ---------------------------------
# A load that breaks one of these rules is too large to exist: channelsPerPixel over 256, pixelsPerColumn
# over 1024 (4096 in the w modes), wHalo past its mode's limit. Its pixels and placement are not listed
# (the CLI reports the violations and exit 1; pixels() and placement() refuse it as malformed input).
SIZE_RULES = (tensormap.IM2COL_CHANNELS_RANGE.id, tensormap.IM2COL_PIXELS_RANGE.id, "im2col.w.whalo_range")
MAX_LISTED_ROWS = 8192             # more shared-memory rows than any legal load has (4096 + halo)
MAX_LISTED_ELEMENTS = 1 << 21      # more elements than any legal load has (4096 rows x 256 channels)


def listable(found) -> bool:
    """Whether a load with these violations has its pixels and placement listed."""
    return not any(v.rule.id in SIZE_RULES for v in found)


def _check_listable(load: Im2colLoad, rows: int) -> None:
    if rows > MAX_LISTED_ROWS or load.w_halo < 0:
        field, value = ("w_halo", load.w_halo) if load.is_wide and (load.w_halo < 0 or load.w_halo >= rows // 2) \
            else ("pixels_per_column", load.pixels_per_column)
        raise SpecError(field, value, f"the load would have {rows} shared-memory rows; no legal load has more "
                        f"than {MAX_LISTED_ROWS}", tensormap.IM2COL_PIXELS_RANGE.id if field != "w_halo"
                        else "im2col.w.whalo_range")
    if rows * load.channels_per_pixel > MAX_LISTED_ELEMENTS:
        raise SpecError("channels_per_pixel", load.channels_per_pixel, f"{rows} rows x {load.channels_per_pixel} "
                        f"channels: more elements than any legal load has", tensormap.IM2COL_CHANNELS_RANGE.id)


def _row_count(load: Im2colLoad) -> int:
    count = main_pixel_count(load)
    if load.mode == "im2col":
        return count
    if load.mode == "w":
        return count + max(load.w_halo, 0)
    return (W128_PIXELS // W128_BLOCK) * (W128_BLOCK + max(load.w_halo, 0))


def main_pixel_count(load: Im2colLoad) -> int:
    """pixelsPerColumn; 128 in im2col::w::128 (rule im2col.w.pixel_count)."""
    return W128_PIXELS if load.mode == "w128" else load.pixels_per_column


def smem_rows(load: Im2colLoad) -> list:
    """(walk step, is_halo) of every shared-memory row, in row order (rules im2col.traversal,
    im2col.w.halo, im2col.w128.halo)."""
    _check_listable(load, _row_count(load))
    count = main_pixel_count(load)
    if load.mode == "im2col":
        return [(step, False) for step in range(count)]
    if load.mode == "w":
        return [(step, False) for step in range(count)] + [(count + j, True) for j in range(load.w_halo)]
    rows = []
    for block in range(W128_PIXELS // W128_BLOCK):
        first = block * W128_BLOCK
        rows += [(first + i, False) for i in range(W128_BLOCK)]
        rows += [(first + W128_BLOCK + j, True) for j in range(load.w_halo)]
    return rows


@dataclass(frozen=True)
class Pixel:
    row: int      # shared-memory row
    step: int     # step of the walk it comes from
    n: int
    d: int
    h: int
    w: int
    halo: bool
    oob: bool     # outside the tensor in N, D, H or W: all its channels are filled

    @property
    def coords(self) -> tuple:
        return (self.n, self.d, self.h, self.w)

    def as_json(self) -> dict:
        return {"row": self.row, "n": self.n, "d": self.d, "h": self.h, "w": self.w, "halo": self.halo,
                "oob": self.oob}


def pixel_in_tensor(load: Im2colLoad, n: int, position: tuple) -> bool:
    """Rule im2col.out_of_bounds, for the pixel (n, (w, h, d))."""
    return 0 <= n < load.tensor[-1] and all(0 <= p < s for p, s in zip(position, spatial_sizes(load)))


def pixels(load: Im2colLoad) -> list:
    """Every loaded pixel, in shared-memory row order."""
    rows = smem_rows(load)
    visited = list(itertools.islice(walk(load), 1 + max(step for step, _ in rows)))
    found = []
    for row, (step, halo) in enumerate(rows):
        n, (w, h, d) = visited[step]
        found.append(Pixel(row, step, n, d, h, w, halo, not pixel_in_tensor(load, n, (w, h, d))))
    return found


@dataclass(frozen=True)
class PlacedElement:
    row: int                  # shared-memory row = index into pixels(load)
    channel: int              # c + k
    source: Optional[tuple]   # (n, d, h, w, c) read from the tensor; None: out of bounds, filled
    smem_address: int         # absolute address of the element's first byte, after swizzling

    def as_json(self, fill: str) -> dict:
        return {"row": self.row, "channel": self.channel,
                "source": list(self.source) if self.source else None,
                "fill": None if self.source else fill, "smem_address": self.smem_address}


def fill_value(load: Im2colLoad) -> str:
    """What an out-of-bounds element is filled with: '0' or 'OOB-NaN' (PTX 5.5.3.3)."""
    return OOB_FILLS[load.oob_fill]


def placement(load: Im2colLoad) -> list:
    """Rule im2col.placement: every element of every row, channel fastest. An element never straddles a
    16-byte chunk (rows are a whole number of elements, elements are 1/2/4/8 bytes and the destination is
    at least element-aligned), so the swizzle moves it whole and its first byte's address locates it."""
    if load.interleave != "NONE":
        raise SpecError("interleave", load.interleave, "placement is modelled without interleave only",
                        PLACEMENT.id)
    _check_listable(load, _row_count(load))
    first_channel, channels = load.coords[0], load.tensor[0]
    placed = []
    for pixel in pixels(load):
        row_start = load.smem_address + pixel.row * load.row_pitch
        for k in range(load.channels_per_pixel):
            channel = first_channel + k
            in_tensor = not pixel.oob and 0 <= channel < channels
            address = tma_swizzle.swizzle_byte_address(load.swizzle, row_start + k * load.elem_bytes)
            placed.append(PlacedElement(pixel.row, channel,
                                        pixel.coords + (channel,) if in_tensor else None, address))
    return placed


def placement_rows_by_element(load: Im2colLoad, loaded: Optional[list] = None) -> list:
    """`placement`, a shared-memory row per entry: (pixel, channels, in_tensor, addresses), where channels is
    the range of channels c + k, in_tensor[k] whether channel c + k lies inside the tensor (out-of-bounds
    pixels excepted: all their elements are filled), and addresses[k] the swizzled address of the row's
    element k. `loaded`: pixels(load), when the caller has it already."""
    placed = placement(load)
    first_channel, count = load.coords[0], load.channels_per_pixel
    along = range(first_channel, first_channel + count)
    inside = [0 <= channel < load.tensor[0] for channel in along]
    return [(pixel, along, inside, [e.smem_address for e in placed[pixel.row * count:(pixel.row + 1) * count]])
            for pixel in (pixels(load) if loaded is None else loaded)]


def placement_rows(load: Im2colLoad, loaded: Optional[list] = None) -> list:
    """placement_rows_by_element; while fast paths are on (spec.fast), a row at a time without placing each
    element first (spec.fast.tma_im2col)."""
    return fast.fastest(placement_rows_by_element)(load, loaded)


def placement_json_by_element(load: Im2colLoad) -> list:
    """The placement as JSON-able dicts: [e.as_json(fill_value(load)) for e in placement(load)]."""
    fill = fill_value(load)
    return [e.as_json(fill) for e in placement(load)]


def placement_json(load: Im2colLoad) -> list:
    """placement_json_by_element; while fast paths are on (spec.fast), from the rows, no PlacedElement
    (spec.fast.tma_im2col)."""
    return fast.fastest(placement_json_by_element)(load)


def row_addresses(load: Im2colLoad) -> list:
    """The unswizzled start address of every shared-memory row (destination + row * row size)."""
    return [load.smem_address + row * load.row_pitch for row in range(len(smem_rows(load)))]


# --- Several buffers filled by copies that differ in wHalo and wOffset (PTX 5.5.5.4) -----------------
@dataclass(frozen=True)
class BufferFootprint:
    w_halo: int
    w_offset: int
    pixels: tuple

    @property
    def w_positions(self) -> tuple:
        """W of every shared-memory row of this buffer."""
        return tuple(p.w for p in self.pixels)

    @property
    def oob_rows(self) -> tuple:
        return tuple(p.row for p in self.pixels if p.oob)

    def as_json(self) -> dict:
        return {"w_halo": self.w_halo, "w_offset": self.w_offset,
                "pixels": [p.as_json() for p in self.pixels]}


def buffers_footprint(load: Im2colLoad, buffers) -> list:
    """PTX 5.5.5.4: one copy per shared-memory buffer with the tensor map and coordinates of `load`
    and the buffer's own (wHalo, wOffset). Returns, per buffer, the pixels its copy loads, row order."""
    if load.mode not in WIDE_MODES:
        raise SpecError("mode", load.mode, "wOffset buffers exist only in the im2col::w modes", WIDE_W_OFFSET.id)
    return [BufferFootprint(halo, offset, tuple(pixels(replace(load, w_halo=halo, w_offset=offset))))
            for halo, offset in buffers]


def violations(load: Im2colLoad) -> list:
    return check_all("im2col_load", load)
